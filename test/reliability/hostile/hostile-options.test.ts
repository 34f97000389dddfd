// Class 3: fake and hostile option objects: an AbortSignal that is not one
// (Object.create(AbortSignal.prototype)), a Proxy around a real one, one whose `aborted` getter
// throws, a spec whose `file` getter throws, an `env` Proxy whose ownKeys throws, an `args` whose
// element getter throws. Each is rejected synchronously (spawnChildSync throws, spawnChild rejects,
// startChild throws) with a TypeError or the very error the getter threw, BEFORE any child was
// started: the child would `touch` a marker that must not exist afterwards, and right after the
// call the fixture has no child at all (none remains at the end either).
import path from 'node:path'
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture, tempDir } from './helpers.js'

assertFreshBuild(t)

// [case, what the error may be]: 'type' = a TypeError; 'thrown' = a TypeError or the getter's own error.
const CASES: Array<[string, 'type' | 'thrown']> = [
  ['fake-signal', 'type'],
  ['proxy-signal', 'type'],
  ['throwing-aborted-signal', 'thrown'],
  ['plain-throwing-aborted', 'thrown'],
  ['file-getter', 'thrown'],
  ['env-proxy', 'thrown'],
  ['args-getter', 'thrown'],
]
const APIS = ['sync', 'async', 'start'] as const
const VERB = { sync: 'spawnChildSync throws', async: 'spawnChild rejects', start: 'startChild throws' }

t.test('hostile option objects are rejected before any child starts', async t => {
  const dir = tempDir(t)
  const jobs = CASES.flatMap(([which]) => APIS.map(api => () =>
    runFixture('hostile-options.mjs', [which, api, path.join(dir, `${which}-${api}.marker`)], { timeoutMs: 25000 })))
  const runs = await runAll(jobs, 4)
  let k = 0
  for (const [which, allowed] of CASES) for (const api of APIS) {
    const r = runs[k++]!
    t.test(`${which} (${api})`, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      const e = j.error
      t.ok(e !== null, `${VERB[api]}`, { started: j.started })
      if (e) {
        const ok = e.name === 'TypeError' || (allowed === 'thrown' && j.isSentinel)
        t.ok(ok, `with ${allowed === 'type' ? 'a TypeError' : "a TypeError or the getter's own error"} (got ${e.name}: ${e.message})`)
      }
      t.same(j.childrenRightAfter, [], 'no child existed right after the call')
      t.equal(j.markerExists, false, 'the child never ran (no marker file)')
      t.same(j.childrenAtEnd, [], 'no child remains')
    })
  }
})
