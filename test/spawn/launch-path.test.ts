// Which path runs, and that every path (API × launcher × measure) gives the same observable child.
import fs from 'node:fs'
import t from 'tap'
import { Worker } from 'node:worker_threads'
import type { ChildResult, ChildSpec } from '../../lib/index.js'
import { REPO_ROOT, START_PROBE, eachPath, tempDir } from '../helpers.js'

t.test("'auto' takes the fork path for killOnExit (the default), setsid, rlimits, ids, umask or cpus; else posix_spawn", t => eachPath(t, '', async (t, { run }) => {
  const rows: Array<[Partial<ChildSpec>, string]> = [
    [{}, 'fork'],
    [{ killOnExit: false }, 'posix_spawn'],
    [{ killOnExit: false, timeout: 1000, input: 'x', stderr: 'stdout', cwd: '/' }, 'posix_spawn'],
    [{ killOnExit: false, setsid: true }, 'fork'],
    [{ killOnExit: false, rlimits: { cpu: 10 } }, 'fork'],
    [{ killOnExit: false, setsid: false, rlimits: {} }, 'posix_spawn'],
    [{ killOnExit: false, uid: process.getuid!() }, 'fork'],
    [{ killOnExit: false, gid: process.getgid!() }, 'fork'],
    [{ killOnExit: false, groups: process.getgroups!() }, 'fork'],
    [{ killOnExit: false, umask: 0o022 }, 'fork'],
    [{ killOnExit: false, cpus: [0] }, 'fork'],
    [{ killOnExit: false, processGroup: true }, 'posix_spawn'],
    [{ launcher: 'fork' }, 'fork'],
    [{ launcher: 'posix_spawn' }, 'posix_spawn'],
  ]
  for (const [extra, want] of rows) t.equal((await run({ file: 'true', ...extra })).launcher, want, JSON.stringify(extra))
}, { launchers: ['auto'] }))

t.test('forcing either launcher, measured or not, gives the same observable child', async t => {
  const dir = tempDir(t)
  fs.writeFileSync(`${dir}/in`, 'stdin contents\n')
  const spec: ChildSpec = {
    file: 'sh', argv0: 'probe', args: ['-c', START_PROBE, 'probe', 'a b', 'c'], cwd: dir,
    env: { PATH: process.env.PATH!, LANG: 'C', X: 'y z' }, stdin: { path: `${dir}/in` },
  }
  const strip = ({ pid, launcher, durationMs, rusage, rusageSource, ...rest }: ChildResult) => rest
  // Every path is compared with the first (sync posix_spawn, unmeasured).
  let first: ChildResult | undefined
  await eachPath(t, '', async (t, { run, launcher }) => {
    const r = await run(spec)
    first ??= r
    t.equal(r.launcher, launcher)
    t.equal(r.exitCode, 7)
    t.match(r.stdout.toString(), /stdin: stdin contents/)
    t.equal(r.stdout.toString(), first.stdout.toString(), 'same stdout')
    t.equal(r.stderr.toString(), first.stderr.toString(), 'same stderr')
    t.same(strip(r), strip(first), 'same result apart from pid, path, timing and usage')
  })
})

t.test('rusage mirrors process.resourceUsage() names', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'] })
  const names = Object.keys(process.resourceUsage()).sort()
  t.same(Object.keys(r.rusage).sort(), names, 'the same field names')
  t.ok(r.rusage.userCPUTime + r.rusage.systemCPUTime > 0, 'CPU time of the child (microseconds)')
  t.ok(r.rusage.maxRSS > 0, 'maxRSS (KiB)')
  t.ok(r.rusage.minorPageFault > 0)
  t.ok(r.durationMs > 0)
}))

t.test('works from worker threads, with the worker\'s own env', async t => {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    process.env.WORKER_ONLY = 'w' + workerData
    const { spawnChildSync } = require(${JSON.stringify(REPO_ROOT)})
    const results = []
    for (let i = 0; i < 20; i++) {
      const r = spawnChildSync({ file: 'sh', args: ['-c', 'echo $WORKER_ONLY'], timeout: 5000, launcher: i % 2 ? 'fork' : 'posix_spawn', measure: i % 4 >= 2 })
      results.push(r.stdout.toString().trim())
    }
    parentPort.postMessage(results)
  `
  const run = (n: number) => new Promise<string[]>((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: n })
    w.once('message', resolve)
    w.once('error', reject)
  })
  const [one, two] = await Promise.all([run(1), run(2)])
  t.same(one, Array(20).fill('w1'), 'worker 1 saw its own env every time')
  t.same(two, Array(20).fill('w2'), 'worker 2 saw its own env every time')
  t.equal(process.env.WORKER_ONLY, undefined, 'the main thread env is untouched')
})
