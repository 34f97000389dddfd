// Fault: fd exhaustion. A node child with RLIMIT_NOFILE lowered (the harness's own rlimits
// option) fills its fd table, frees 0, 1, 2, ... fds, and spawns with every stdio shape through
// every path (API × launcher × measure). Each spawn either works or fails cleanly: a spawnError with
// code EMFILE at a stage that names the step (pipe, open, spawn: the fork path's pidfd, which comes
// with the clone; never "exec", never a guessed exit code from a child that did not run), and
// afterwards exactly as many fds free as before and no child.
import t from 'tap'
import { paths } from '../helpers.js'
import { CHILD_PROBES, PACKAGE, baseline, childPaths, runNodeScript } from './helpers.js'

interface Row {
  path: string
  shape: string
  free: number
  freeAfter: number
  /** The process's other fds that were gone or new after the row, as 'gone 12 anon_inode:[eventfd]'. */
  moved: string[]
  children: number
  pid: number
  exitCode: number | null
  signal: string | null
  stage: string | null
  code: string | null
  diagnostic: string
}

const script = `
  ${CHILD_PROBES}
  ${childPaths()}
  // Opens /dev/null until EMFILE; returns the fds it got.
  const fill = () => {
    const fds = []
    for (;;) {
      try { fds.push(fs.openSync('/dev/null', 'r')) } catch (e) { if (e.code !== 'EMFILE') throw e; return fds }
    }
  }
  const shapes = {
    'default (stdout, stderr piped)': {},
    'input': { input: 'x'.repeat(100000) },
    'all ignored': { stdout: 'ignore', stderr: 'ignore' },
    'merged, with a deadline': { stderr: 'stdout', timeout: 5000 },
  }
  // The fds this process has besides the ones fill() takes, by number and target: what a row
  // found gone (or new) says whose fd it was if the count of free fds ever moves.
  const others = () => Object.fromEntries(fs.readdirSync('/proc/self/fd').map(fd => {
    try { return [fd, fs.readlinkSync('/proc/self/fd/' + fd)] } catch { return [fd, '?'] }
  }).filter(([, target]) => target !== '/dev/null' && !target.startsWith('/proc/')))
  const moved = (before, after) => [
    ...Object.entries(before).filter(([fd, target]) => after[fd] !== target).map(([fd, target]) => 'gone ' + fd + ' ' + target),
    ...Object.entries(after).filter(([fd, target]) => before[fd] !== target).map(([fd, target]) => 'new ' + fd + ' ' + target),
  ]
  ;(async () => {
    for (const path of PATHS) await runPath(path, { file: 'true' })  // warm up
    const rows = []
    for (const path of PATHS) for (const [shape, extra] of Object.entries(shapes)) {
      for (let free = 0; free <= 9; free++) {
        const before = others()
        const held = fill()
        for (let i = 0; i < free; i++) fs.closeSync(held.pop())
        const r = await runPath(path, { file: 'cat', ...extra })
        const after = fill()
        for (const fd of [...held, ...after]) fs.closeSync(fd)
        rows.push({ path: path.label, shape, free, freeAfter: after.length, moved: moved(before, others()), children: childPids().length, pid: r.pid, exitCode: r.exitCode,
          signal: r.signal, stage: r.spawnError && r.spawnError.stage, code: r.spawnError && r.spawnError.code, diagnostic: r.diagnostic })
      }
    }
    console.log(JSON.stringify(rows))
  })()
`

t.test('EMFILE at every step of a launch: a clean error, nothing leaked', async t => {
  const before = baseline()
  const rows = runNodeScript<Row[]>(script, { rlimits: { nofile: 64 } })
  t.equal(rows.length, paths().length * 4 * 10, 'every row ran')
  const stages = new Set<string>()
  for (const r of rows) {
    const label = `${r.path} ${r.shape}, ${r.free} fds free`
    t.equal(r.freeAfter, r.free, `${label}: as many fds free afterwards${r.moved.length ? ` (${r.moved.join(', ')})` : ''}`)
    t.equal(r.children, 0, `${label}: no child left`)
    if (r.stage === null) {
      t.equal(r.exitCode, 0, `${label}: ran`)
      continue
    }
    stages.add(r.stage)
    t.equal(r.code, 'EMFILE', `${label}: EMFILE (${r.stage})`)
    t.ok(r.stage === 'pipe' || r.stage === 'open' || r.stage === 'spawn', `${label}: failed at a named step, not exec (${r.stage})`)
    t.equal(r.signal, null, `${label}: no signal`)
    // A failure in the parent (a pipe, the fork path's pidfd) started no child; one in the child
    // (fork path) is exit 126, as any failure before exec.
    const inParent = r.stage === 'pipe' || r.stage === 'spawn'
    t.equal(r.exitCode, r.pid === 0 && inParent ? null : 126, `${label}: exit code`)
    if (r.stage === 'spawn') t.ok(r.pid === 0 && r.path.includes('fork'), `${label}: no pidfd, so no child started (fork path)`)
    t.match(r.diagnostic, /^Couldn't (create a pipe|open '\/dev\/null' for std(in|out|err)|track the child): Too many open files$/, `${label}: diagnostic`)
  }
  t.same([...stages].sort(), ['open', 'pipe', 'spawn'], 'the sweep hit the parent-side steps (pipes, the pidfd) and the child-side opens')
  for (const { label } of paths()) {
    t.ok(rows.some(r => r.path === label && r.free === 9 && r.exitCode === 0), `${label}: works again with fds free`)
  }
  await before.check(t)
})

// A measured child's target gets its pidfd when the helper reports it, which can be long after the
// launch (the event loop busy, the report read late): a process at its fd limit by then had no fd
// for it, and the target was tracked by its pid alone, which is a stranger's once reused (a
// hostile round killed an unrelated process through it). The launch now holds a place for that
// pidfd, so the target is tracked, and signalled, by its pidfd: kill() reaches it, and only it.
t.test("a measured target gets its pidfd when the process has no fd left by the time it is reported", async t => {
  const tag = `30.${process.pid}`
  const r = runNodeScript<{ pid: number; killed: boolean; stage: string | null; exitCode: number | null; signal: string | null; children: number; targets: number; heldAtReport: number; pidfds: number }>(`
    ${CHILD_PROBES}
    const { startChild } = require(${PACKAGE})
    const fill = () => {
      const fds = []
      for (;;) {
        try { fds.push(fs.openSync('/dev/null', 'r')) } catch (e) { if (e.code !== 'EMFILE') throw e; return fds }
      }
    }
    // The target, found by its argv among every process's.
    const targets = () => fs.readdirSync('/proc').filter(p => /^\\d+$/.test(p)).filter(p => {
      try {
        const argv = fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').split('\\0')
        const state = fs.readFileSync('/proc/' + p + '/stat', 'utf8').replace(/^.*\\) /, '')[0]
        return argv[0] === 'sleep' && argv[1] === ${JSON.stringify(tag)} && state !== 'Z'
      } catch { return false }
    }).length
    ;(async () => {
      const child = startChild({ file: 'sleep', args: [${JSON.stringify(tag)}], measure: true, stdout: 'ignore', stderr: 'ignore', killSignal: 'SIGTERM', timeout: 60000 })
      const held = fill()
      const pid = child.pid  // waits for the helper's start report, with no fd free but the one held for it
      const heldAtReport = held.length
      for (const fd of held) fs.closeSync(fd)
      // The pidfds this process holds for the target (a pidfd's fdinfo names its process).
      const pidfds = fs.readdirSync('/proc/self/fd').filter(fd => {
        try { return /^Pid:\\s*(\\d+)$/m.exec(fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8'))?.[1] === String(pid) } catch { return false }
      }).length
      const killed = child.kill()
      const r = await child.result
      console.log(JSON.stringify({ pid, killed, stage: r.spawnError && r.spawnError.stage, exitCode: r.exitCode,
        signal: r.signal, children: childPids().length, targets: targets(), heldAtReport, pidfds }))
    })()
  `, { rlimits: { nofile: 256 } })
  t.ok(r.heldAtReport > 0, `the process was at its fd limit when the start was reported (${r.heldAtReport} fds taken to reach it)`)
  t.ok(r.pid > 0, `the target was reported (pid ${r.pid})`)
  t.equal(r.pidfds, 1, 'and is held by a pidfd, not tracked by its pid alone')
  t.same({ killed: r.killed, stage: r.stage, exitCode: r.exitCode, signal: r.signal, children: r.children, targets: r.targets },
    { killed: true, stage: null, exitCode: null, signal: 'SIGTERM', children: 0, targets: 0 },
    'kill() reached the target through its pidfd; nothing left')
})
