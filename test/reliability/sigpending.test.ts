// Fault: no signal can be queued (RLIMIT_SIGPENDING 0). A sync deadline is a POSIX timer that
// sends SIGALRM to the waiting thread (native/alarm.h), and timer_create fails with EAGAIN where
// the signal could not be queued. Every timed spawnChildSync then failed before any child started
// ("Couldn't track the child", EAGAIN). The deadline is now kept by poll's timeout alone, the
// guard that already holds it when SIGALRM is ignored: the same deadline, the same escalation.
import t from 'tap'
import { PACKAGE, runNodeScript } from './helpers.js'

interface Row { label: string; exitCode: number | null; signal: string | null; timedOut: boolean; stage: string | null; durationMs: number }

const rows = runNodeScript<Row[]>(`
  const { spawnChildSync } = require(${PACKAGE})
  const row = (label, r) => ({ label, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, stage: r.spawnError && r.spawnError.stage, durationMs: r.durationMs })
  console.log(JSON.stringify([
    row('exits in time', spawnChildSync({ file: 'true', timeout: 60000 })),
    row('runs past it', spawnChildSync({ file: 'sleep', args: ['60'], timeout: 200 })),
    row('measured, runs past it', spawnChildSync({ file: 'sleep', args: ['60'], timeout: 200, measure: true })),
    row('ignores killSignal', spawnChildSync({ file: 'sh', args: ['-c', 'trap "" TERM; sleep 60'], timeout: 200, killSignal: 'SIGTERM', forceKillAfterDelay: 100 })),
  ]))
`, { rlimits: { sigpending: 0 } })

t.test('RLIMIT_SIGPENDING 0: a sync deadline holds without a signal', async t => {
  const by = Object.fromEntries(rows.map(r => [r.label, r]))
  t.same(pick(by['exits in time']!), { exitCode: 0, signal: null, timedOut: false, stage: null }, 'a child that exits in time: exit 0, no spawnError')
  for (const label of ['runs past it', 'measured, runs past it', 'ignores killSignal']) {
    const r = by[label]!
    t.same(pick(r), { exitCode: null, signal: 'SIGKILL', timedOut: true, stage: null }, `${label}: timed out and killed, no spawnError`)
    t.ok(r.durationMs >= 200, `${label}: not before the deadline (${r.durationMs.toFixed(1)} ms)`)
  }
  t.ok(by['ignores killSignal']!.durationMs >= 300, 'the escalation to SIGKILL came forceKillAfterDelay after the deadline')
})

function pick(r: Row) {
  return { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, stage: r.stage }
}
