// startChild's writable stdin attacked around its handover: the stream destroyed or ended before
// the addon has handed it the pipe (the child's stdout on a FIFO nobody has opened yet holds the
// handover back), destroyed while the child reads, and a write queued behind backpressure when
// the child closes its stdin. Each on both launch paths, measured and not, in a node process of
// its own: it must not crash, the result must settle, the refused pipe must be closed (the child
// sees EOF), and no fd may be left open. Workers terminated while their children's stdin streams
// are being written: worker-teardown.test.ts.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture, tempDir } from './helpers.js'

assertFreshBuild(t)

const CASES = ['destroyed-before', 'ended-before', 'destroyed-after', 'child-closed', 'throwing-callback']
const WAYS = ['posix_spawn', 'fork'].flatMap(launcher => ['0', '1'].map(measure => [launcher, measure]))

t.test('stdin streams around their handover', async t => {
  const dir = tempDir(t)
  const jobs = CASES.flatMap(which => WAYS.map(([launcher, measure]) => () => {
    const fifo = path.join(dir, `${which}-${launcher}-${measure}.fifo`)
    const made = spawnSync('mkfifo', [fifo])
    if (made.status !== 0) throw new Error(`mkfifo ${fifo}: ${String(made.stderr)}`)
    return runFixture('stdin-handover.mjs', [which, launcher!, measure!, fifo], { timeoutMs: 15000 })
  }))
  for (const r of await runAll(jobs, 4)) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.equal(j.error, undefined, 'nothing threw', { error: j.error })
      t.same(j.errors, [], "no 'error' event on the stream")
      t.equal(j.fdsAfter, j.fdsBefore, `no fd left open (${j.fdsBefore} before, ${j.fdsAfter} after)`)
      switch (j.which) {
        case 'destroyed-before':
          t.same([j.exitCode, j.signal, j.spawnError], [0, null, null], 'cat saw EOF at once and exited 0: the refused pipe was closed')
          t.equal(j.fromFifo, '', 'nothing written before the destroy reached the child')
          break
        case 'ended-before':
          t.same([j.exitCode, j.signal], [0, null], 'cat saw EOF after the data')
          t.equal(j.fromFifo, 'early\n', 'what was written before the handover reached the child')
          t.same(j.writeErrors, [], 'the early write succeeded')
          break
        case 'destroyed-after':
          t.same([j.exitCode, j.signal, j.stdout], [0, null, 'x\n'], 'cat saw EOF when the stream was destroyed')
          break
        case 'throwing-callback':
          t.same(j.uncaught, ['thrown by a write callback'], "the callback's throw was the process's uncaught exception")
          t.same([j.exitCode, j.signal, j.spawnError], [0, null, null], 'cat saw EOF after the data')
          t.equal(j.fromFifo, 'first\nsecond\n', 'both writes reached the child, the one after the throw too')
          t.same(j.writeErrors, [], 'the later write succeeded')
          t.same(j.strangers, Array.from({ length: 8 }, () => ({ bytes: '', state: 'open' })), 'files opened after the throw: nothing written into them, none closed')
          break
        case 'child-closed':
          t.same(j.writeErrors.map((e: { code: string }) => e.code), ['EPIPE'], 'the queued write got EPIPE in its callback')
          t.equal(j.destroyed, true, 'the stream is destroyed')
          t.equal(j.signal, 'SIGTERM', 'the child was still there to be killed')
          break
      }
    })
  }
})
