// A measured child's target whose pid is another process's by the time the helper's report of it
// is taken (the loop held up while the target ran, exited and was reaped): kill() and an abort
// reach no one, and the result says what happened (exit 0, not aborted). The pidfd opened for the
// reported pid is now kept only when its process is the helper's child.
import fs from 'node:fs'
import t from 'tap'
import { assertFreshBuild, assertHealthy, eventually, runFixture } from './helpers.js'

assertFreshBuild(t)

let skip: string | false = false
try {
  fs.accessSync('/proc/sys/kernel/ns_last_pid', fs.constants.W_OK)
} catch {
  skip = 'a pid cannot be handed out on purpose here (/proc/sys/kernel/ns_last_pid takes root)'
}

for (const how of ['kill', 'abort']) {
  t.test(`${how} of a measured child whose target's pid was reused: reaches no one`, { skip }, async t => {
    const r = await runFixture('pid-reuse.mjs', [how], { timeoutMs: 60000 })
    const j = assertHealthy(t, r)
    if (!j) return
    if (j.arranged === null) return t.skip('the pid was taken by another process of the machine in every one of 20 attempts')
    const a = j.arranged
    if (how === 'kill') t.equal(a.killed, false, 'kill() is false: the child had ended')
    t.same([a.exitCode, a.signal, a.aborted], [0, null, false], 'the result: exit 0, not killed, not aborted')
    t.equal(a.otherDiedOf, 'SIGKILL', 'the process that got the pid was not signalled (it died of the test\'s own SIGKILL)')
  })
}

// With setsid the target's signals go to its group, whose id is its pid. The pid handed to a
// process leading a session of its own: the exit-time kill (killOnExit) sent SIGKILL to that
// process's whole group; the teardown of a worker did the same.
t.test('the exit of the process with a measured setsid child whose target\'s pid was reused: reaches no one', { skip }, async t => {
  const r = await runFixture('pid-reuse.mjs', ['group-exit'], { timeoutMs: 60000 })
  const j = assertHealthy(t, r)
  if (!j) return
  if (j.arranged === null) return t.skip('the pid was taken by another process of the machine in every one of 20 attempts')
  const other: number = j.arranged.other
  t.teardown(() => { try { process.kill(other, 'SIGKILL') } catch { /* gone */ } })
  const state = () => { try { return fs.readFileSync(`/proc/${other}/stat`, 'utf8').split(') ')[1]![0] } catch { return 'gone' } }
  // A SIGKILL sent at the exit would have ended it by now; it is alive, sleeping.
  t.ok(await eventually(() => state() !== 'R'), 'the other process settled')
  t.equal(state(), 'S', 'the process that got the pid, leading its own group, was not killed')
})
