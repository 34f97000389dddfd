// Faults of a child that will not end when told: it ignores SIGTERM under kill escalation, or it
// is stuck where no signal reaches it (simulated: a stopped process does not act on SIGTERM, as one
// in uninterruptible sleep does not act on anything) and becomes one that "wouldn't die", handed
// to the reaper thread. Every path (API × launcher × measure); afterwards no fd, child, zombie or
// orphan.
import t from 'tap'
import { startChild, type ChildSpec } from '../../lib/index.js'
import { eachPath, eventually, paths, processState, startReaper, withRoomToStart, type Run } from '../helpers.js'
import { baseline } from './helpers.js'

// Before any baseline is taken.
await startReaper()

// sh ignores TERM and execs sleep, which keeps the disposition: one process that ignores SIGTERM
// and has no children of its own. Nothing asserts how long anything took.
const IGNORES_TERM = ['-c', 'trap "" TERM; echo ready; exec sleep 100']
const DEADLINE = 300

/** `run(spec)`, again with a longer deadline while the shell ended by a SIGTERM that came before
 * its trap was set (or before it stopped itself), which no case here is about. */
const pastSetup = (run: Run, spec: ChildSpec & { timeout: number }) => withRoomToStart(run, spec, r => r.signal !== 'SIGTERM')

t.test('a child that ignores SIGTERM under kill escalation', t => eachPath(t, '', async (t, { run }) => {
  const before = baseline()
  const r = await pastSetup(run, { file: 'sh', args: IGNORES_TERM, timeout: DEADLINE, killSignal: 'SIGTERM', forceKillAfterDelay: 100 })
  t.same([r.timedOut, r.signal, r.exitCode, r.diagnostic], [true, 'SIGKILL', null, 'Child timed out'], 'SIGKILL followed the ignored SIGTERM')
  t.equal(processState(r.pid), 'gone', 'reaped')
  // Without forceKillAfterDelay nothing follows the SIGTERM: after graceTimeout it is one that
  // wouldn't die, SIGKILLed and reaped in the background.
  const stuck = await pastSetup(run, { file: 'sh', args: IGNORES_TERM, timeout: DEADLINE, killSignal: 'SIGTERM', graceTimeout: 200 })
  t.same([stuck.timedOut, stuck.signal, stuck.diagnostic], [true, null, "Child timed out but wouldn't die"], "no escalation: wouldn't die")
  t.ok(await eventually(() => processState(stuck.pid) === 'gone'), 'reaped in the background')
  await before.check(t)
}))

t.test('a whole group that ignores SIGTERM: the SIGKILL that follows reaches every member', t => eachPath(t, '', async (t, { run }) => {
  const before = baseline()
  const group = await pastSetup(run, { file: 'sh', args: ['-c', 'trap "" TERM; sleep 100 & echo $!; exec sleep 100'], setsid: true, timeout: DEADLINE, killSignal: 'SIGTERM', forceKillAfterDelay: 100 })
  const member = Number(group.stdout.toString().trim())
  t.equal(group.signal, 'SIGKILL', 'setsid: the leader got SIGKILL')
  t.ok(member > 0 && await eventually(() => processState(member) === 'gone'), 'setsid: so did the rest of the group (no orphan)')
  await before.check(t)
}, { launchers: ['auto'] }))

t.test('kill(SIGTERM) by hand, ignored, escalates to SIGKILL', t => eachPath(t, '', async (t, { launcher, measure }) => {
  const before = baseline()
  const child = startChild({ file: 'sh', args: IGNORES_TERM, forceKillAfterDelay: 100, launcher, measure })
  await new Promise(r => child.stdout.once('data', r)) // its trap is set
  t.equal(child.kill('SIGTERM'), true, 'delivered')
  const r = await child.result
  t.same([r.signal, r.timedOut, r.aborted], ['SIGKILL', false, false], 'SIGKILL after forceKillAfterDelay')
  t.equal(child.kill('SIGTERM'), false, 'kill() after the end is a no-op')
  await before.check(t)
}, { apis: ['start'] }))

t.test("a child that wouldn't die (stopped: SIGTERM does nothing)", t => eachPath(t, '', async (t, { run, launcher }) => {
  const before = baseline()
  for (const setsid of [false, true]) {
    if (setsid && launcher === 'posix_spawn') continue
    const label = setsid ? 'setsid' : 'no setsid'
    // With setsid the group holds a second stopped member, which the group SIGKILL must also take.
    const script = setsid ? 'sh -c "kill -STOP \\$\\$" & echo $!; kill -STOP $$' : 'echo $$; kill -STOP $$'
    const r = await pastSetup(run, { file: 'sh', args: ['-c', script], setsid, timeout: DEADLINE, killSignal: 'SIGTERM', graceTimeout: 200 })
    t.same([r.timedOut, r.exitCode, r.signal, r.diagnostic, r.spawnError], [true, null, null, "Child timed out but wouldn't die", null], `${label}: reported`)
    t.ok(r.pid > 0, `${label}: its pid is reported`)
    t.ok(await eventually(() => processState(r.pid) === 'gone'), `${label}: SIGKILLed and reaped by the reaper: no zombie`)
    const other = Number(r.stdout.toString().trim())
    if (setsid) t.ok(other > 0 && await eventually(() => processState(other) === 'gone'), `${label}: the other group member is gone too: no orphan`)
  }
  await before.check(t)
}))

t.test("several that wouldn't die at once, one on each async path", async t => {
  const before = baseline()
  const all = paths({ apis: ['async', 'start'] })
  const results = await Promise.all(all.map(({ run }, i) =>
    pastSetup(run, { file: 'sh', args: ['-c', 'kill -STOP $$'], timeout: DEADLINE + 10 * i, killSignal: 'SIGTERM', graceTimeout: 100 })))
  results.forEach((r, i) => t.equal(r.diagnostic, "Child timed out but wouldn't die", all[i]!.label))
  t.ok(await eventually(() => results.every(r => processState(r.pid) === 'gone')), 'all reaped')
  await before.check(t)
})
