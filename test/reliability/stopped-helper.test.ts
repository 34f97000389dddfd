// A measured target that stops its parent (`kill -STOP $PPID`, as a script run from a shell might
// stop the shell) stops the measuring helper, which then neither reaps it nor reports: the call
// waited for that report for ever, its timeout notwithstanding (sync, async and `run` alike). At
// the deadline the target is found gone, and the helper is now sent SIGCONT: it reaps the target,
// reports, and the result is the target's own exit.
import t from 'tap'
import { PACKAGE, runNodeScript } from './helpers.js'

interface Row { api: string; exitCode: number | null; signal: string | null; timedOut: boolean; rusageSource: string; children: number }

/** waitid's system call number, as /proc/PID/syscall shows the call a process is blocked in. */
const WAITID = ({ x64: 247, arm64: 95 } as Record<string, number>)[process.arch]

t.test('a measured target that stops its helper, then exits', { skip: WAITID === undefined ? `no waitid number known for ${process.arch}` : false }, async t => {
  const rows = runNodeScript<Row[]>(`
    const fs = require('fs')
    const { spawnChild, spawnChildSync } = require(${PACKAGE})
    const children = () => fs.readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).length
    // The target waits until its helper is blocked in waitid (after its start report: stopped
    // before that, the helper cannot report the start at all, which the start's own bound ends).
    const spec = { file: 'sh', args: ['-c', 'while read -r n rest < /proc/$PPID/syscall && [ "$n" != ${WAITID} ]; do :; done; kill -STOP $PPID; exit 7'], measure: true, timeout: 300 }
    const row = (api, r) => ({ api, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, rusageSource: r.rusageSource, children: children() })
    ;(async () => {
      const sync = row('sync', spawnChildSync(spec))
      const async = row('async', await spawnChild(spec))
      console.log(JSON.stringify([sync, async]))
    })()
  `, { timeout: 30000 })
  for (const r of rows) {
    t.same(r, { api: r.api, exitCode: 7, signal: null, timedOut: false, rusageSource: 'helper', children: 0 },
      `${r.api}: settled at the deadline with the target's exit 7 and rusage, the helper reaped`)
  }
})

t.test('a measured target that stops its helper and outlives its deadline', { skip: WAITID === undefined ? `no waitid number known for ${process.arch}` : false }, async t => {
  // Killed at the deadline; its helper, stopped, reports nothing: at the grace period's end the
  // target is found gone, the helper resumed, and the result is the kill's (it had been "wouldn't
  // die", the helper left stopped for ever, and the pid the helper's).
  const rows = runNodeScript<Array<Row & { pid: number; reported: number }>>(`
    const fs = require('fs')
    const { spawnChildSync, startChild } = require(${PACKAGE})
    const children = () => fs.readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).length
    const spec = { file: 'sh', args: ['-c', 'while read -r n rest < /proc/$PPID/syscall && [ "$n" != ${WAITID} ]; do :; done; kill -STOP $PPID; exec sleep 30'], measure: true, timeout: 300, graceTimeout: 200 }
    const row = (api, r, reported) => ({ api, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, rusageSource: r.rusageSource, children: children(), pid: r.pid, reported })
    ;(async () => {
      const out = []
      const sync = spawnChildSync(spec)
      out.push(row('sync', sync, sync.pid))
      const child = startChild(spec)
      const reported = child.pid
      out.push(row('start', await child.result, reported))
      console.log(JSON.stringify(out))
    })()
  `, { timeout: 30000 })
  for (const r of rows) {
    t.same({ exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, rusageSource: r.rusageSource, children: r.children },
      { exitCode: null, signal: 'SIGKILL', timedOut: true, rusageSource: 'helper', children: 0 }, `${r.api}: timed out and killed, the helper resumed and reaped`)
    if (r.api === 'start') t.equal(r.pid, r.reported, "start: the result's pid is the target's, as child.pid said")
  }
})

t.test("kill() of a measured target that stopped its helper and exited resumes the helper", { skip: WAITID === undefined ? `no waitid number known for ${process.arch}` : false }, async t => {
  const r = runNodeScript<{ killed: boolean; exitCode: number | null; rusageSource: string }>(`
    const fs = require('fs')
    const { startChild } = require(${PACKAGE})
    const child = startChild({ file: 'sh', args: ['-c', 'while read -r n rest < /proc/$PPID/syscall && [ "$n" != ${WAITID} ]; do :; done; kill -STOP $PPID; exit 7'], measure: true })
    const pid = child.pid
    const state = () => { try { return fs.readFileSync('/proc/' + pid + '/stat', 'utf8').replace(/^.*\\) /, '')[0] } catch { return 'gone' } }
    const zombie = () => new Promise(resolve => { const look = () => (state() === 'Z' ? resolve() : setTimeout(look, 5)); look() })
    ;(async () => {
      await zombie()  // exited; its stopped helper has not reaped it
      const killed = child.kill()
      const r = await child.result
      console.log(JSON.stringify({ killed, exitCode: r.exitCode, rusageSource: r.rusageSource }))
    })()
  `, { timeout: 30000 })
  t.same(r, { killed: false, exitCode: 7, rusageSource: 'helper' }, 'kill() is false (nothing was killed), and the result comes: the target\'s exit 7')
})
