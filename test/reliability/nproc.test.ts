// Fault: a full process table. RLIMIT_NPROC does not apply to root (CAP_SYS_ADMIN), so the fault
// is made real for an unprivileged user: a node child runs as nobody (setpriv), lowers its own
// soft RLIMIT_NPROC to the number of tasks it already has (prlimit on itself), and spawns through
// every path (API × launcher × measure). Every spawn must fail the same clean way: no child, spawnError
// { stage: 'fork', code: 'EAGAIN' }, no exit code, and nothing leaked.
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { paths } from '../helpers.js'
import { CHILD_PROBES, PACKAGE, baseline, childPaths, runNodeScript, stageForNobody, type Staged } from './helpers.js'

interface Report {
  limited: number | null
  tasks: number
  runs: Array<{ label: string; pid: number; exitCode: number | null; signal: string | null; spawnError: { stage: string; code: string } | null; diagnostic: string }>
  fdsBefore: number
  fdsAfter: number
  children: number
}

const script = `
  ${CHILD_PROBES}
  ${childPaths()}
  const { spawnChildSync } = require(${PACKAGE})
  ;(async () => {
    for (const path of PATHS) await runPath(path, { file: 'true' })  // warm up
    const tasks = fs.readdirSync('/proc/self/task').length
    // The soft limit only: nobody may lower it, and every task of uid nobody already counts.
    const limited = spawnChildSync({ file: 'prlimit', args: ['--pid=' + process.pid, '--nproc=' + tasks + ':'] }).exitCode
    const fdsBefore = openFds()
    const runs = []
    // A { path } target is opened on a thread of its own before the launch: the same limit stops
    // that thread first, and it is said the same way (it had been 'open' EAGAIN, exit 126, for an
    // open never tried).
    const shapes = { plain: {}, piped: { input: 'x', timeout: 5000 }, setsid: { setsid: true }, 'path target': { stdout: { path: '/dev/null' } } }
    for (const path of PATHS) for (const [shape, extra] of Object.entries(shapes)) {
      const r = await runPath(path, { file: 'true', ...extra })
      runs.push({ label: path.label + ' ' + shape, pid: r.pid, exitCode: r.exitCode, signal: r.signal, spawnError: r.spawnError, diagnostic: r.diagnostic })
    }
    console.log(JSON.stringify({ limited, tasks, runs, fdsBefore, fdsAfter: openFds(), children: childPids().length }))
  })()
`

const nobody = stageForNobody(t)
const skip = typeof nobody === 'string' ? nobody : false ||
  (spawnChildSync({ file: 'prlimit', args: ['--version'], stdout: 'ignore' }).exitCode !== 0 && 'prlimit (util-linux) is not installed')
t.test('RLIMIT_NPROC reached: EAGAIN from clone, reported the same on every path', { skip }, async t => {
  const before = baseline()
  const report = runNodeScript<Report>(script, {}, nobody as Staged)
  t.equal(report.limited, 0, `prlimit lowered the child's RLIMIT_NPROC to its ${report.tasks} tasks`)
  t.equal(report.runs.length, paths().length * 4)
  for (const r of report.runs) {
    t.same(
      { pid: r.pid, exitCode: r.exitCode, signal: r.signal, stage: r.spawnError?.stage, code: r.spawnError?.code, diagnostic: r.diagnostic },
      { pid: 0, exitCode: null, signal: null, stage: 'fork', code: 'EAGAIN', diagnostic: "Couldn't fork: Resource temporarily unavailable" },
      r.label,
    )
  }
  t.equal(report.fdsAfter, report.fdsBefore, 'no fds leaked in the limited process')
  t.equal(report.children, 0, 'no children in the limited process')
  await before.check(t)
})

// rlimits: { nproc: 0 } is the child's own limit: it binds an unprivileged child's forks, not its
// exec, so the child runs (sh's echo is a builtin). Root is exempt, hence nobody.
const ownLimit = `
  ${childPaths({ launchers: ['auto'] })}
  ;(async () => {
    const runs = []
    for (const path of PATHS) {
      const r = await runPath(path, { file: 'sh', args: ['-c', 'echo ran'], rlimits: { nproc: 0 } })
      runs.push({ label: path.label, exitCode: r.exitCode, spawnError: r.spawnError, stdout: r.stdout.toString() })
    }
    console.log(JSON.stringify(runs))
  })()
`

t.test("rlimits: { nproc: 0 } binds the child's forks, not its exec", { skip: typeof nobody === 'string' ? nobody : false }, async t => {
  const before = baseline()
  const runs = runNodeScript<Array<{ label: string; exitCode: number | null; spawnError: unknown; stdout: string }>>(ownLimit, {}, nobody as Staged)
  t.equal(runs.length, paths({ launchers: ['auto'] }).length, 'every path ran')
  for (const r of runs) {
    t.same([r.exitCode, r.spawnError, r.stdout], [0, null, 'ran\n'], r.label)
  }
  await before.check(t)
})

// A child that would not die is handed to a reaper thread, started at the first such child. With
// no thread to be had, std::thread threw, and nothing caught it: std::terminate, the whole process
// gone ("terminate called after throwing an instance of 'std::system_error'", exit 134), through
// spawnChild and spawnChildSync alike. The limit is lowered once the child runs: by this process
// after an async launch, and by the child itself (on its parent) inside a sync one.
const wouldntDie = `
  const fs = require('node:fs')
  const { spawnChild, spawnChildSync } = require(${PACKAGE})
  const tasks = () => fs.readdirSync('/proc/self/task').length
  const softLimit = () => fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max processes')).split(/\\s+/)[2]
  const stubborn = (lower) => ({
    file: 'sh', args: ['-c', (lower ? 'prlimit --pid=$PPID --nproc=' + tasks() + ': && ' : '') + 'trap "" TERM; exec sleep 30'],
    killSignal: 'SIGTERM', graceTimeout: 100,
  })
  ;(async () => {
    spawnChildSync({ file: 'true' })  // warm up
    const pending = spawnChild({ ...stubborn(false), timeout: 200 })
    const limited = spawnChildSync({ file: 'prlimit', args: ['--pid=' + process.pid, '--nproc=' + tasks() + ':'] }).exitCode
    const async = await pending
    const asyncLimit = softLimit()
    // The limit cannot be raised again from here (that would take a fork): a second process.
    console.log(JSON.stringify({ limited, asyncLimit, async: [async.timedOut, async.diagnostic], tasks: tasks() }))
  })()
`
const wouldntDieSync = `
  const fs = require('node:fs')
  const { spawnChildSync } = require(${PACKAGE})
  const tasks = fs.readdirSync('/proc/self/task').length
  spawnChildSync({ file: 'true' })  // warm up
  const r = spawnChildSync({
    file: 'sh', args: ['-c', 'prlimit --pid=$PPID --nproc=' + tasks + ': && trap "" TERM && exec sleep 30'],
    killSignal: 'SIGTERM', graceTimeout: 100, timeout: 1000,
  })
  const softLimit = fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max processes')).split(/\\s+/)[2]
  console.log(JSON.stringify({ tasks, softLimit, sync: [r.timedOut, r.diagnostic] }))
`

t.test("a child that would not die, when no reaper thread can be started: the process lives", { skip }, async t => {
  const report = runNodeScript<{ limited: number; asyncLimit: string; async: [boolean, string]; tasks: number }>(wouldntDie, {}, nobody as Staged)
  t.equal(report.limited, 0, 'prlimit lowered the soft limit once the child ran')
  t.same(report.async, [true, "Child timed out but wouldn't die"], 'spawnChild: the result, not an abort')
  const sync = runNodeScript<{ tasks: number; softLimit: string; sync: [boolean, string] }>(wouldntDieSync, {}, nobody as Staged)
  t.equal(sync.softLimit, String(sync.tasks), 'the child lowered its parent\'s limit')
  t.same(sync.sync, [true, "Child timed out but wouldn't die"], 'spawnChildSync: the result, not an abort')
})
