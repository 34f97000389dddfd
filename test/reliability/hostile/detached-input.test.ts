// Class 5: detached and shared input. `input` is 1 MiB of 'a'; right after spawnChild/startChild
// returns, its ArrayBuffer is transferred away with structuredClone (detached) and the heap is
// churned (big buffers allocated and freed, global.gc()); or it is a Buffer viewing 1 MiB at an odd
// offset of a larger ArrayBuffer that is detached; or it lives in a SharedArrayBuffer that is
// overwritten with 'b' right after the call. The child (sha256sum) must get exactly the bytes the
// input held at the call. Two sanity rows: spawnChildSync of the offset view, and node's
// child_process.spawnSync of it (the expected hash is right).
import t from 'tap'
import { assertFreshBuild, assertHealthy, haveCommand, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

const CASES = ['transfer-spawnChild', 'transfer-startChild', 'offset-view', 'shared-modified', 'sync-offset-view', 'node-offset-view']

t.test('input detached or changed after the call', { skip: haveCommand('sha256sum') ? false : 'sha256sum (coreutils) is not installed' }, async t => {
  const runs = await runAll(CASES.map(which => () => runFixture('detached-input.mjs', [which], { timeoutMs: 30000, nodeArgs: ['--expose-gc'] })), 3)
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.equal(j.gc, true, 'the heap churn included global.gc()')
      if (j.detached !== null) t.equal(j.detached, true, 'the input really was detached after the call')
      t.same([j.exitCode, j.signal, j.spawnError], [0, null, null], 'sha256sum ran and exited 0')
      t.equal(j.got, j.expected, 'the child got exactly the 1 MiB of "a" the input held at the call')
    })
  }
})
