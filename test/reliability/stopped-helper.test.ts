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
