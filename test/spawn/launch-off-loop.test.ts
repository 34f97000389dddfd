// Launches made on the launcher threads (native/launch-thread.h): a spawnChild with no handle,
// made while other children of its environment are in flight, is started off the event loop. Its
// child, its result and the caller's fds must be exactly as for a launch made on the loop, and a
// deadline, a teardown or the process's exit that comes while the launch is away must still act.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { Worker } from 'node:worker_threads'
import { spawnChild, startChild, type ChildResult, type ChildSpec } from '../../lib/index.js'
import { REPO_ROOT, START_PROBE, eventually, openFds, script, tempDir } from '../helpers.js'
import { PACKAGE, runNodeScript } from '../reliability/helpers.js'

const quiet = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' } as const

/** The launcher threads of this process (their thread ids), by their name (native/launch-thread.h). */
function launcherTids(): number[] {
  return fs.readdirSync('/proc/self/task').filter((tid) => {
    try {
      return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'tileharness-lch'
    } catch {
      return false
    }
  }).map(Number)
}

/** Runs fn while one other child is in flight: the spawnChild calls it makes leave the loop. */
async function withOneInFlight<T>(fn: () => Promise<T>): Promise<T> {
  const busy = startChild({ file: 'sleep', args: ['60'], ...quiet })
  try {
    return await fn()
  } finally {
    busy.kill('SIGKILL')
    await busy.result
  }
}

/** Holds the event loop for ms: whatever comes meanwhile waits for the next turn. */
function holdLoop(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) { /* on purpose */ }
}

/**
 * Runs fn with the launcher threads' nice value raised to `nice` (by their thread ids, as renice
 * -p would), after they exist: each then declines the launches it is given, which the loop makes
 * when it takes them back, after whatever the caller did right after the call. Ascending values,
 * for a process that cannot lower a nice value again. False (fn not run) when they cannot be set.
 */
async function withLaunchersUnlike(nice: number, fn: () => Promise<void>): Promise<boolean> {
  await withOneInFlight(() => spawnChild({ file: 'true', ...quiet }))
  const tids = launcherTids()
  const before = tids.map((tid) => os.getPriority(tid))
  if (tids.length === 0 || before.some((n) => n >= nice)) return false
  for (const tid of tids) os.setPriority(tid, nice)
  try {
    await fn()
  } finally {
    tids.forEach((tid, i) => {
      try { os.setPriority(tid, before[i]!) } catch { /* lowering needs privilege: they stay at `nice` */ }
    })
  }
  return true
}

// First in this file: each test file is a process of its own, so no launcher thread exists yet.
t.test('a launch leaves the loop only while other children are in flight', async t => {
  for (let i = 0; i < 5; i++) t.equal((await spawnChild({ file: 'true', ...quiet })).exitCode, 0)
  t.equal(launcherTids().length, 0, 'awaited one at a time, every launch was made on the loop')
  await withOneInFlight(async () => {
    t.equal((await spawnChild({ file: 'true', ...quiet })).exitCode, 0)
  })
  t.ok(launcherTids().length >= 1, 'with one in flight, the next went to a launcher thread')
})

t.test('the same observable child, launched on the loop or off it', async t => {
  const dir = tempDir(t)
  // START_PROBE reports the signal mask too: the launcher threads block every signal, and the
  // child must not inherit that.
  const strip = ({ pid, durationMs, rusage, rusageSource, ...rest }: ChildResult) => rest
  for (const launcher of ['fork', 'posix_spawn'] as const) {
    const spec: ChildSpec = {
      file: 'sh', argv0: 'probe', args: ['-c', START_PROBE, 'probe', 'a b', 'c'], cwd: dir, launcher,
      env: { PATH: process.env.PATH!, LANG: 'C', X: 'y z' }, input: 'stdin contents\n', timeout: 20000,
    }
    const onLoop = await spawnChild(spec)
    const offLoop = await withOneInFlight(() => spawnChild(spec))
    t.equal(onLoop.exitCode, 7, `${launcher}: ran`)
    t.match(onLoop.stdout.toString(), /SigBlk: 0000000000000000/, `${launcher}: no signal blocked in the child`)
    t.same(strip(offLoop), strip(onLoop), `${launcher}: the same result apart from pid, timing and usage`)
  }
})

t.test("the caller's fds may be closed once the call has returned", async t => {
  const dir = tempDir(t)
  await withOneInFlight(async () => {
    for (const launcher of ['fork', 'posix_spawn'] as const) {
      const first = path.join(dir, `first-${launcher}`)
      const second = path.join(dir, `second-${launcher}`)
      const out = fs.openSync(first, 'w')
      const extra = fs.openSync(first + '.extra', 'w')
      const running = spawnChild({ file: 'sh', args: ['-c', 'echo to-stdout; echo to-fd-5 >&5'], stdin: 'ignore', stdout: out, fds: { 5: extra }, launcher })
      // Closed at once, and the numbers taken by other files: the child must still get the first.
      fs.closeSync(out)
      fs.closeSync(extra)
      const reused = [fs.openSync(second, 'w'), fs.openSync(second + '.extra', 'w')]
      const r = await running
      reused.forEach((fd) => fs.closeSync(fd))
      t.equal(r.exitCode, 0, `${launcher}: ran`)
      t.equal(fs.readFileSync(first, 'utf8'), 'to-stdout\n', `${launcher}: stdout went to the file given`)
      t.equal(fs.readFileSync(first + '.extra', 'utf8'), 'to-fd-5\n', `${launcher}: fd 5 too`)
      t.equal(fs.readFileSync(second, 'utf8') + fs.readFileSync(second + '.extra', 'utf8'), '', `${launcher}: nothing reached the files that took their numbers`)
    }
  })
})

t.test('a deadline that comes while the launch is away acts once it is back', async t => {
  await withOneInFlight(async () => {
    // Held past the deadline: the timer runs before the loop takes the launch back, in the same turn.
    const late = spawnChild({ file: 'sleep', args: ['60'], ...quiet, timeout: 1 })
    holdLoop(50)
    const r = await late
    t.equal(r.timedOut, true, 'timed out')
    t.equal(r.signal, 'SIGKILL', 'killed by the deadline, not left to run its 60 s')
    t.ok(r.durationMs >= 1, 'not before its deadline')

    const failed = spawnChild({ file: 'th-no-such-program-xyz', ...quiet, timeout: 1 })
    holdLoop(50)
    const f = await failed
    t.equal(f.spawnError?.code, 'ENOENT', 'a launch that failed says so')
    t.equal(f.timedOut, false, 'no child ran, so none timed out')
  })
})

t.test('many at once: every result is its own child', async t => {
  const fdsBefore = openFds()
  const results: Array<Promise<boolean>> = []
  let next = 0
  const worker = async () => {
    while (next < 300) {
      const i = next++
      const r = await spawnChild({ file: 'sh', args: ['-c', `echo ${i}; echo e${i} >&2; exit $((${i} % 7))`], input: `in${i}`, timeout: 30000 })
      results.push(Promise.resolve(r.stdout.toString() === `${i}\n` && r.stderr.toString() === `e${i}\n` && r.exitCode === i % 7))
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  const exact = (await Promise.all(results)).filter(Boolean).length
  t.equal(exact, 300, 'each of 300 results has its own output and status')
  // 200 in one tick: all but a few wait in the environment for their turn on the launcher threads.
  const burst = await withOneInFlight(() => Promise.all(Array.from({ length: 200 }, (_, i) =>
    spawnChild({ file: 'sh', args: ['-c', `echo ${i}`], stdin: 'ignore', timeout: 30000 }))))
  t.same(burst.map((r) => r.stdout.toString()), Array.from({ length: 200 }, (_, i) => `${i}\n`), '200 started in one tick: each its own output')
  t.ok(await eventually(() => openFds().length === fdsBefore.length), 'no fd left behind')
})

t.test('a worker torn down with launches under way leaves no child behind', async t => {
  const needle = `${process.pid}${Date.now()}`.slice(-9)
  // In one tick: a child in flight, then 16 spawnChild calls, which go to the launcher threads;
  // the worker is terminated the moment it says so.
  const code = `
    const { parentPort } = require('node:worker_threads')
    const { spawnChild, startChild } = require(${JSON.stringify(REPO_ROOT)})
    startChild({ file: 'sleep', args: ['${needle}'], stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
    for (let i = 0; i < 16; i++) {
      spawnChild({ file: 'sleep', args: ['${needle}'], stdin: 'ignore', stdout: 'pipe', stderr: 'ignore', launcher: i % 2 ? 'fork' : 'posix_spawn' }).catch(() => {})
    }
    parentPort.postMessage('started')
  `
  const sleepers = () => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${needle}\0`
    } catch {
      return false
    }
  })
  const fdsBefore = openFds().length
  for (let round = 0; round < 10; round++) {
    const w = new Worker(code, { eval: true })
    await new Promise((resolve) => w.once('message', resolve))
    await w.terminate()
    t.ok(await eventually(() => sleepers().length === 0), `round ${round}: every child ended with its worker (left: ${sleepers().join(' ')})`)
  }
  t.ok(await eventually(() => openFds().length === fdsBefore), 'no fd left behind')
})

// Found by a hostile round of the launcher threads, each of which differed from a launch on the loop.

t.test('launches queued off the loop do not use up the fd table a launch on the loop fits in', async t => {
  // 150 children at once, stdout and stderr to one file, under a limit of 200 fds: on the loop all
  // ran. Each queued launch held a copy of each fd until the loop took it back, and 117 of 150
  // failed (dup2 EMFILE, then spawn EMFILE).
  const dir = tempDir(t)
  const outcome = runNodeScript<Record<string, number>>(`
    const fs = require('node:fs')
    const { spawnChild, startChild } = require(${PACKAGE})
    const busy = startChild({ file: 'sleep', args: ['60'], stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
    const log = fs.openSync(${JSON.stringify(path.join(dir, 'log'))}, 'a')
    const runs = []
    for (let i = 0; i < 150; i++) runs.push(spawnChild({ file: 'sleep', args: ['0.3'], stdin: 'ignore', stdout: log, stderr: log }))
    Promise.all(runs).then(results => {
      busy.kill('SIGKILL')
      const tally = {}
      for (const r of results) { const k = r.spawnError ? r.spawnError.stage + ' ' + r.spawnError.code : 'exit ' + r.exitCode; tally[k] = (tally[k] || 0) + 1 }
      console.log(JSON.stringify(tally))
    })
  `, { rlimits: { nofile: 200 } })
  t.same(outcome, { 'exit 0': 150 }, 'all 150 ran')
})

t.test("the working directory, a relative cwd and a relative program are the caller's as of the call", async t => {
  const dir = tempDir(t)
  for (const side of ['a', 'b']) {
    fs.mkdirSync(path.join(dir, side, 'sub'), { recursive: true })
    script(path.join(dir, side), 'prog.sh', `#!/bin/sh\necho ${side}-script\n`)
  }
  const here = process.cwd()
  process.chdir(path.join(dir, 'a'))
  try {
    // Launched once the loop takes them back (the launcher threads decline them), so always after
    // the chdir: a launcher thread may also get to one only after it.
    const ran = await withLaunchersUnlike(5, () => withOneInFlight(async () => {
      const inSub = spawnChild({ file: 'pwd', cwd: 'sub', stdin: 'ignore' })
      const program = spawnChild({ file: './prog.sh', stdin: 'ignore' })
      const inherited = spawnChild({ file: 'pwd', stdin: 'ignore' })
      const onPath = spawnChild({ file: 'prog.sh', env: { PATH: `.:${process.env.PATH}` }, stdin: 'ignore' })
      process.chdir(path.join(dir, 'b'))
      t.equal((await inSub).stdout.toString(), `${path.join(dir, 'a', 'sub')}\n`, 'cwd: a/sub, not b/sub')
      t.equal((await program).stdout.toString(), 'a-script\n', 'the program in a, not the one in b')
      t.equal((await inherited).stdout.toString(), `${path.join(dir, 'a')}\n`, 'no cwd: a, the directory of the call')
      t.equal((await onPath).stdout.toString(), 'a-script\n', "PATH's '.' is a")
    }))
    if (!ran) t.skip("the launcher threads' nice value cannot be raised to 5")
  } finally {
    process.chdir(here)
  }
})

t.test('a launch whose directory of the call is gone by the launch is made as on the loop', async t => {
  const dir = tempDir(t)
  const gone = path.join(dir, 'gone')
  fs.mkdirSync(gone)
  const here = process.cwd()
  process.chdir(gone)
  try {
    const ran = await withLaunchersUnlike(7, () => withOneInFlight(async () => {
      const late = spawnChild({ file: 'true', ...quiet })
      fs.rmdirSync(gone)  // this process's own working directory, before the launch
      const r = await late
      t.same({ spawnError: r.spawnError, exitCode: r.exitCode }, { spawnError: null, exitCode: 0 }, "ran in the process's directory, as a launch at the call would have")
    }))
    if (!ran) t.skip("the launcher threads' nice value cannot be raised to 7")
  } finally {
    process.chdir(here)
  }
})

t.test('a launch made late counts its deadline and durationMs from the launch, not the call', async t => {
  const ran = await withLaunchersUnlike(8, () => withOneInFlight(async () => {
    // Held for 1 s after the call, the loop launches it then (declined): its 0.8 s deadline is
    // 0.8 s after that launch, not already past, and its 0.2 s are 0.2 s, not 1.2.
    const late = spawnChild({ file: 'sleep', args: ['0.2'], ...quiet, timeout: 800 })
    holdLoop(1000)
    const r = await late
    t.equal(r.timedOut, false, 'not timed out')
    t.equal(r.exitCode, 0, 'ran its 0.2 s')
    t.ok(r.durationMs < 1000, `durationMs ${r.durationMs} is the child's, not the held loop's`)
  }))
  if (!ran) t.skip("the launcher threads' nice value cannot be raised to 8")
})

// A launch the launcher threads declined (their nice value not the caller's) was made on the loop
// when it came back, with the nice value the calling thread had by then: changed right after the
// calls, 19 of 20 children ran at the new one.
t.test('a nice value changed right after the call does not reach the children of the calls', async t => {
  await withOneInFlight(() => spawnChild({ file: 'true', ...quiet }))
  const before = os.getPriority(0)
  if (before >= 9) {
    t.skip(`this process's nice value (${before}) cannot be raised to 9`)
    return
  }
  os.setPriority(0, 9)
  try {
    const nices = await withOneInFlight(async () => {
      const runs = Array.from({ length: 10 }, () => spawnChild({ file: 'sh', args: ['-c', 'cut -d" " -f19 /proc/$$/stat'], stdin: 'ignore' }))
      os.setPriority(0, 10)
      return (await Promise.all(runs)).map((r) => Number(r.stdout.toString()))
    })
    t.same(nices, Array(10).fill(9), 'each child at 9, the nice value of its call')
  } finally {
    try { os.setPriority(0, before) } catch { /* lowering needs privilege */ }
  }
})

t.test("the child has the calling thread's nice value, whoever started the launcher threads", async t => {
  await withOneInFlight(() => spawnChild({ file: 'true', ...quiet }))
  t.ok(launcherTids().length >= 1, 'the launcher threads run')
  const niceOf = async () => {
    const r = await withOneInFlight(() => spawnChild({ file: 'sh', args: ['-c', 'cut -d" " -f19 /proc/$$/stat'], stdin: 'ignore' }))
    return Number(r.stdout.toString())
  }
  const before = os.getPriority(0)
  // os.setPriority(0, ...) changes the calling thread's only, on Linux: not the launcher threads'.
  os.setPriority(0, 15)
  try {
    t.equal(await niceOf(), 15, 'nice 15, as the calling thread')
  } finally {
    try { os.setPriority(0, before) } catch { /* lowering needs privilege: this process stays at 15 */ }
  }
})
