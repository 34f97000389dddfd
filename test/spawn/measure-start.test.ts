// A measured child's start on the async API: the helper reports its target once the target has
// exec'd, and the addon takes that report from the event loop, not by holding the loop until it
// comes. Shown with a helper that cannot start until the test lets it (gatedHelperEnv): the loop
// turns meanwhile, and what is asked of the child before its target exists (a kill, an abort, a
// deadline, its pid) is kept for the target, not lost or sent to the helper.
import path from 'node:path'
import t from 'tap'
import { spawnChild, startChild } from '../../lib/index.js'
import { childPids, tempDir } from '../helpers.js'
import { PACKAGE, gatedHelperEnv, runNodeScript } from '../reliability/helpers.js'

interface Rows {
  plain: { order: string[]; exitCode: number | null; spawnError: unknown; rusageSource: string }
  killed: { sent: boolean; signal: string | null; exitCode: number | null; spawnError: unknown; pidMatches: boolean; rusageSource: string }
  aborted: { aborted: boolean; signal: string | null; spawnError: unknown; rusageSource: string }
  deadline: { timedOut: boolean; signal: string | null; durationMs: number; spawnError: unknown }
  pid: { pidBeforeResult: number; resultPid: number; exitCode: number | null }
  helperDied: { stage?: string; code?: string; pid: number; exitCode: number | null }
  helperDiedPid: { stage?: string; code?: string; pid: number; resultPid: number }
}

t.test('a measured async child: the loop runs while its helper starts, and what is asked meanwhile reaches the target', async t => {
  const gate = path.join(tempDir(t), 'gate')
  const env = gatedHelperEnv(t, gate)
  const rows = runNodeScript<Rows>(`
    const fs = require('node:fs')
    const { spawnChild, startChild } = require(${PACKAGE})
    const GATE = ${JSON.stringify(gate)}
    const open = () => fs.writeFileSync(GATE, '')
    const shut = () => fs.rmSync(GATE, { force: true })
    ;(async () => {
      const out = {}
      // The helper waits for the gate, which only a turn of this loop opens.
      const order = []
      const p = spawnChild({ file: '/bin/true', measure: true }).then(r => { order.push('result'); return r })
      setImmediate(() => { order.push('loop turned'); open() })
      const r = await p
      out.plain = { order, exitCode: r.exitCode, spawnError: r.spawnError, rusageSource: r.rusageSource }
      shut()

      const c = startChild({ file: 'sleep', args: ['10'], measure: true })
      const sent = c.kill('SIGTERM')
      setImmediate(open)
      const k = await c.result
      out.killed = { sent, signal: k.signal, exitCode: k.exitCode, spawnError: k.spawnError, pidMatches: c.pid === k.pid && k.pid > 0, rusageSource: k.rusageSource }
      shut()

      const ac = new AbortController()
      const a = spawnChild({ file: 'sleep', args: ['10'], measure: true, signal: ac.signal })
      ac.abort()
      setImmediate(open)
      const ar = await a
      out.aborted = { aborted: ar.aborted, signal: ar.signal, spawnError: ar.spawnError, rusageSource: ar.rusageSource }
      shut()

      const d = spawnChild({ file: 'sleep', args: ['10'], measure: true, timeout: 50 })
      setImmediate(open)
      const dr = await d
      out.deadline = { timedOut: dr.timedOut, signal: dr.signal, durationMs: dr.durationMs, spawnError: dr.spawnError }

      // The gate is open: pid, read at once, waits for the report as a sync launch would.
      const s = startChild({ file: '/bin/true', measure: true })
      const pidBeforeResult = s.pid
      const sr = await s.result
      out.pid = { pidBeforeResult, resultPid: sr.pid, exitCode: sr.exitCode }
      shut()

      // The helper killed before it reported (this process's only child is the gated helper).
      const kids = ${childPids}
      const h = spawnChild({ file: '/bin/true', measure: true })
      setImmediate(() => { for (const pid of kids()) process.kill(pid, 'SIGKILL') })
      const hr = await h
      out.helperDied = { stage: hr.spawnError?.stage, code: hr.spawnError?.code, pid: hr.pid, exitCode: hr.exitCode }
      // The same, with startChild's pid read after the kill: it waits, finds no report, and is 0.
      const g = startChild({ file: '/bin/true', measure: true })
      for (const pid of kids()) process.kill(pid, 'SIGKILL')
      const gpid = g.pid
      const gr = await g.result
      out.helperDiedPid = { stage: gr.spawnError?.stage, code: gr.spawnError?.code, pid: gpid, resultPid: gr.pid }
      console.log(JSON.stringify(out))
    })()
  `, { env })
  t.same(rows.plain, { order: ['loop turned', 'result'], exitCode: 0, spawnError: null, rusageSource: 'helper' },
    'the call returned to the loop before the helper started (a call that waited for it would have given up: ETIMEDOUT)')
  t.same(rows.killed, { sent: true, signal: 'SIGTERM', exitCode: null, spawnError: null, pidMatches: true, rusageSource: 'helper' },
    'a kill() before the target existed was kept and sent to the target: it ran and died of it')
  t.same(rows.aborted, { aborted: true, signal: 'SIGKILL', spawnError: null, rusageSource: 'helper' }, 'an abort before the target existed ended the target (killSignal), which the helper saw die')
  t.same([rows.deadline.timedOut, rows.deadline.signal, rows.deadline.spawnError], [true, 'SIGKILL', null], 'a deadline set before the target existed ended the target')
  t.ok(rows.deadline.durationMs >= 50, `the deadline counted from the target's start: it lived ${rows.deadline.durationMs.toFixed(1)} ms of its 50`)
  t.ok(rows.pid.pidBeforeResult > 0 && rows.pid.pidBeforeResult === rows.pid.resultPid, `child.pid read at once is the target's: ${rows.pid.pidBeforeResult}`)
  t.equal(rows.pid.exitCode, 0)
  t.same(rows.helperDied, { stage: 'spawn', code: 'EPROTO', pid: 0, exitCode: null }, 'a helper killed before its report: a launch that failed, as on the sync path, with no pid')
  t.same(rows.helperDiedPid, { stage: 'spawn', code: 'EPROTO', pid: 0, resultPid: 0 }, 'child.pid read after that is 0, and the result says why')
})

t.test('a worker that exits while its measured child\'s helper is starting leaves no process behind', async t => {
  const gate = path.join(tempDir(t), 'gate')
  const env = gatedHelperEnv(t, gate)
  const left = runNodeScript<{ exitCode: number; children: number[] }>(`
    const fs = require('node:fs')
    const { Worker } = require('node:worker_threads')
    const kids = ${childPids}
    const w = new Worker(\`
      const { spawnChild } = require(${PACKAGE})
      spawnChild({ file: 'sleep', args: ['10'], measure: true })
      process.exit(3)
    \`, { eval: true })
    w.on('exit', code => {
      // The helper was killed and reaped by the worker's teardown: none is left, and the gate
      // opened now finds no helper to start.
      fs.writeFileSync(${JSON.stringify(gate)}, '')
      console.log(JSON.stringify({ exitCode: code, children: kids() }))
    })
  `, { env })
  t.same(left, { exitCode: 3, children: [] }, 'the worker exited, and no helper or target was left as a child, running or a zombie')
})

t.test('a measured child whose helper reported in time is not a failed launch when the loop was held past the bound on that report', async t => {
  // The loop held 10.5 s right after the launches: the 10 s bound on the helper's report and the
  // report itself (there within milliseconds) are both due when it turns, and libuv runs timers
  // before it polls. The report was taken as a silence (spawn ETIMEDOUT: "cannot track the
  // child"), the target having run and exited; found by a compileMany of 1,000 programs.
  const launches = (['fork', 'posix_spawn'] as const).map(launcher => spawnChild({ file: '/bin/true', measure: true, launcher }))
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_500)
  for (const r of await Promise.all(launches)) {
    t.same({ spawnError: r.spawnError, exitCode: r.exitCode, rusageSource: r.rusageSource }, { spawnError: null, exitCode: 0, rusageSource: 'helper' }, `${r.launcher}: the target's own exit, measured`)
    t.ok(r.pid > 0, `${r.launcher}: the target's pid`)
  }
})

// Found by a hostile round: a measured child with a { path } target is launched from the loop once
// its opens are done, and handing its stdin pipe over to JavaScript then runs the nextTick queue:
// a kill() from a write's callback came before the wait for the helper's report had begun, went
// to the helper itself, and the result said the launch had failed ("Couldn't track the child:
// Protocol error", EPROTO, pid 0) in 14 of 20 runs. The signal waits for the target, as any
// signal sent before the target exists does.
t.test("a measured child killed from its stdin's write callback, after { path } opens: the target gets the signal", async t => {
  const dir = tempDir(t)
  const results = await Promise.all(Array.from({ length: 10 }, () => {
    const child = startChild({ file: 'sleep', args: ['100'], stdin: 'pipe', stdout: { path: path.join(dir, 'out') }, measure: true })
    let sent: boolean | null = null
    child.stdin!.write('x', () => { sent = child.kill('SIGTERM') })
    return child.result.then(r => ({ sent, signal: r.signal, spawnError: r.spawnError, pid: r.pid > 0, rusageSource: r.rusageSource }))
  }))
  t.same(results, Array(10).fill({ sent: true, signal: 'SIGTERM', spawnError: null, pid: true, rusageSource: 'helper' }), 'each target was killed by the SIGTERM, and its helper measured it')
})
