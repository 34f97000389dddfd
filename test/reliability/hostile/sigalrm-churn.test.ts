// Class 6: SIGALRM churn. In one node process, a worker runs spawnChildSync of `sleep 10` with a
// 1500 ms deadline and then five 300 ms ones, while the main thread adds and removes
// process.on('SIGALRM') listeners in a tight setImmediate loop. The process is not killed by the
// harness's alarm ("Alarm clock"), every result is timedOut with durationMs within
// [timeout, timeout + 2000], the churned listeners saw ZERO SIGALRMs, and a
// process.kill(process.pid, 'SIGALRM') at the end reaches an attached listener exactly once.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('deadlines in a worker while the main thread churns SIGALRM listeners', async t => {
  const r = await runFixture('sigalrm-churn.mjs', [], { timeoutMs: 45000 })
  const j = assertHealthy(t, r)
  if (!j) return
  t.equal(j.results.length, j.timeouts.length, 'every timed wait ran (none overran its deadline)', { results: j.results })
  for (const [i, res] of j.results.entries()) {
    const label = `wait ${i + 1} (${res.timeout} ms)`
    t.same([res.timedOut, res.signal, res.diagnostic], [true, 'SIGKILL', 'Child timed out'], `${label}: timed out`)
    t.ok(res.durationMs >= res.timeout && res.durationMs <= res.timeout + 2000, `${label}: durationMs ${Math.round(res.durationMs)} within [${res.timeout}, ${res.timeout + 2000}]`)
  }
  t.ok(j.churns > 20, `the listeners really churned (${j.churns} turns)`)
  t.equal(j.churnAlarms, 0, "the churned listeners never saw one of the harness's alarms")
  t.equal(j.finalAlarms, 1, "the user's own SIGALRM reached the listener exactly once")
})
