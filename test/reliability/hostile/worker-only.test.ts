// The addon loaded only by workers, the first of which exits before anything else loads it: the
// process survives a wake-up of the addon's threads after that (it segfaulted, the addon unmapped
// under them), and the addon loads and spawns again in later workers and the main thread.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('the addon loaded by a worker alone, which exits: the process survives, the addon loads again', async t => {
  const r = await runFixture('worker-only.mjs', [], { timeoutMs: 60000 })
  const j = assertHealthy(t, r)
  if (!j) return
  t.equal(j.mapped, true, 'the addon is still mapped after the only worker that loaded it has gone')
  t.equal(j.clockThread, true, 'its exit-clock thread was found, and signalled')
  t.equal(j.handled, 1, "the signal was handled (the thread's wake-up did not crash the process)")
  t.same(j.codes, [3, 4, 5, 6], 'every later worker, and the main thread, spawned with it')
})
