// Races around the end of a child and of the process:
// - kill() and AbortSignal.abort() racing the child's own exit (at once, on a microtask, on the next
//   turn, after 0-2 ms, or once the child is a zombie the harness has not reaped yet), 400 rounds:
//   the process survives, every result is consistent (`aborted` only for a child the abort killed:
//   signal SIGKILL, exitCode null, "Child aborted"; otherwise exit 0, or death by what kill() sent),
//   kill() after the result is false, and no child is left.
// - the process exiting while children run (killOnExit, both launch paths) with an 'exit' handler
//   that throws, registered before the harness's own (or after it), or by an uncaught exception:
//   no abort, and every child is killed (README: "children still running when this process exits
//   ... are killed").
// - the process exiting in the same tick as 16 spawnChild calls, before any result or loop turn:
//   none of those children outlives it.
import fs from 'node:fs'
import t from 'tap'
import { assertFreshBuild, assertHealthy, eventually, processInfo, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('kill() and abort racing the child exit', async t => {
  const r = await runFixture('exit-races.mjs', ['kill-race', '400'], { timeoutMs: 30000 })
  const j = assertHealthy(t, r)
  if (!j) return
  t.equal(j.inconsistentCount, 0, `every result is consistent (${j.inconsistentCount} of ${j.rounds} are not)`, { inconsistent: j.inconsistent, tally: j.tally })
  t.equal(j.lateKillTrue, 0, 'kill() after the result is always false')
  t.same(j.leftChildren, [], 'no child left')
})

/** Pids of every process on the machine running `sleep <needle>`. */
function sleepersWith(needle: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8') === `sleep\0${needle}\0` && processInfo(Number(name), needle) === 'alive') out.push(Number(name))
    } catch { /* gone */ }
  }
  return out
}

t.test('the process exits in the tick that started its spawnChild children', async t => {
  for (let round = 0; round < 5; round++) {
    const needle = `${4000 + round}.${process.pid}${Date.now() % 100000}`
    t.teardown(() => { for (const pid of sleepersWith(needle)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ } })
    const r = await runFixture('exit-races.mjs', ['exit-launching', needle], { timeoutMs: 20000, keepGroup: true })
    const j = assertHealthy(t, r)
    if (!j) return
    const allGone = await eventually(() => sleepersWith(needle).length === 0, 1000)
    t.ok(allGone, `round ${round}: no child outlived the process (still running: ${sleepersWith(needle).join(', ') || 'none'})`)
  }
})

t.test('the process exits while children run', async t => {
  const CASES = ['exit-throw', 'exit-throw-late', 'uncaught-throw']
  // A sleep length no other process has: the pid-reuse guard when looking for leftovers.
  const needles = CASES.map((_, i) => `${3000 + i}.${process.pid}${Date.now() % 100000}`)
  const leftovers: Array<[number, string]> = []
  t.teardown(() => {
    for (const [pid, needle] of leftovers) {
      if (processInfo(pid, needle) === 'alive') try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    }
  })
  const runs = await runAll(CASES.map((which, i) => () => runFixture('exit-races.mjs', [which, needles[i]!], { timeoutMs: 20000, keepGroup: true })), 3)
  for (const [i, r] of runs.entries()) {
    const needle = needles[i]!
    t.test(r.label, async t => {
      // The exit status is not the point (a throwing handler makes it whatever node makes it).
      const j = assertHealthy(t, r, { status: null })
      if (!j) return
      t.equal(j.pids.length, 4, 'four children were started')
      for (const pid of j.pids) leftovers.push([pid, needle])
      const allGone = await eventually(() => j.pids.every((pid: number) => processInfo(pid, needle) !== 'alive'), 1000)
      const alive = j.pids.filter((pid: number) => processInfo(pid, needle) === 'alive')
      const launchers = alive.map((pid: number) => (j.pids.indexOf(pid) % 2 ? 'fork' : 'posix_spawn'))
      t.ok(allGone, `every child was killed when the process exited (still running: ${alive.length ? alive.map((p: number, k: number) => `${p} (${launchers[k]})`).join(', ') : 'none'})`)
    })
  }
})
