// A worker terminated while the harness watches a pipe for its hang-up (a child's unread stdout,
// held past the child's exit by a grandchild: native/async.cc, WatchHangUp), then the pipe hanging
// up with no worker left, or hanging up just before the termination. The process survives every
// round; no fd, child or zombie is left; the main thread spawns afterwards.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('workers terminated while a hang-up is watched', async t => {
  const ROUNDS = 20
  const r = await runFixture('worker-hangup.mjs', [String(ROUNDS)], { timeoutMs: 120000 })
  const j = assertHealthy(t, r)
  if (!j) return
  t.equal(j.rounds, ROUNDS, `all ${ROUNDS} rounds ran`)
  t.equal(j.armed, ROUNDS, 'in every round the worker was terminated with the hang-up watched (or just after it came)')
  t.same(j.errors, [], "no worker reported an 'error'")
  t.same(j.leftChildren, [], 'no child left: none running, no zombie')
  t.same(j.leftByPpid, [], 'no process has the fixture as its parent')
  t.equal(j.fdsAfter, j.fdsBefore, `no fd left open (${j.fdsBefore} before, ${j.fdsAfter} after)`)
  t.same([j.afterExitCode, j.afterStdout], [7, 'after\n'], 'the main thread still spawns and reads afterwards')
})
