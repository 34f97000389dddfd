// Class 2: worker teardown. A worker_thread starts 20-30 async children (some of them cats whose
// stdin streams are being written) and then calls
// process.exit() itself, or is terminate()d from the main thread, at a randomised moment (at once,
// after a random 0-30 ms, right after N of its children resolved, or the moment it enters its
// N-th call into the harness: a SharedArrayBuffer flag the main thread Atomics.waits on); 45 rounds
// in one process, so that a 1-in-10 race is all but sure to show. Then the same with a worker looping spawnChildSync
// with a timeout (and a spec of thousands of arguments, so that a termination often lands while the
// call converts it). The process must survive every round, every child must be reaped (no zombie, no
// leftover: /proc/self/task/*/children and the PPid of every process), and the harness must still
// spawn and time out on the main thread afterwards.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('workers ended while their children run', async t => {
  const ROUNDS: Record<string, number> = { async: 45, sync: 60 }
  const runs = await runAll(Object.entries(ROUNDS).map(([variant, rounds]) => () => runFixture('worker-teardown.mjs', [variant, String(rounds)], { timeoutMs: 180000 })), 2)
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.equal(j.rounds, ROUNDS[j.variant], `all ${ROUNDS[j.variant]} rounds ran`, { endings: j.endings })
      t.same(j.errors, [], "no worker reported an 'error'")
      t.same(j.leftChildren, [], 'no child left (/proc/self/task/*/children): none running, no zombie')
      t.same(j.leftByPpid, [], 'no process has this one as its parent (/proc/*/stat)')
      t.equal(j.fdsAfter, j.fdsBefore, `no fd left open by the workers (${j.fdsBefore} before, ${j.fdsAfter} after)`)
      t.equal(j.afterExitCode, 7, 'the main thread still spawns afterwards')
      t.same([j.timed.timedOut, j.timed.signal], [true, 'SIGKILL'], 'and a timed wait on the main thread still times out')
      t.ok(j.timed.durationMs >= 200 && j.timed.durationMs <= 2200, `within [200, 2200] ms (${Math.round(j.timed.durationMs)})`)
    })
  }
})
