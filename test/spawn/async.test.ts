// What only the async API has: live output streams, kill() with escalation, AbortSignal,
// whole-group cleanup, killOnExit / PR_SET_PDEATHSIG, no threadpool, worker teardown. What applies
// to every launch path runs through each launcher, measured and not.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { finished } from 'node:stream/promises'
import { Worker } from 'node:worker_threads'
import { spawnChild, spawnChildSync, startChild, type ChildProcess, type ChildResult, type ChildSpec } from '../../lib/index.js'
import { StdioKind, native, rawNumbers, specNumbers, type NativeSpec } from '../../lib/spawn/native.js'
import { normalizeSpec } from '../../lib/spawn/normalize.js'
import { buildResult } from '../../lib/spawn/result.js'
import { LAUNCHERS, MEASURE, REPO_ROOT, eachPath, eventually, processState, tempDir, type Path } from '../helpers.js'

/** Resolves with the first `n` whitespace-separated numbers the child prints on stdout. */
function readPids(child: ChildProcess, n: number): Promise<number[]> {
  return new Promise(resolve => {
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      const nums = text.trim().split(/\s+/).filter(Boolean).map(Number)
      if (nums.length >= n) resolve(nums.slice(0, n))
    })
  })
}

const nodeEnv = { PATH: process.env.PATH! }

/** startChild on a path's launcher, measured or not. */
const starter = ({ launcher, measure }: Path) => (spec: ChildSpec) => startChild({ launcher, measure, ...spec })

t.test('output streams while the child runs; the result keeps the whole buffers', async t => {
  // The child waits on a FIFO after its first line, so the first chunk is all there is until the
  // test has seen it and lets the child go on.
  const gate = path.join(tempDir(t), 'gate')
  spawnChildSync({ file: 'mkfifo', args: [gate] })
  const child = startChild({ file: 'sh', args: ['-c', 'echo first; read x < "$0"; echo second; echo err >&2', gate] })
  // One listener for the whole stream: data emitted while no listener is attached is lost.
  const chunks: string[] = []
  const first = new Promise<string>(resolve => child.stdout.on('data', (c: Buffer) => { chunks.push(c.toString()); resolve(c.toString()) }))
  t.equal(await first, 'first\n')
  const errChunks: string[] = []
  child.stderr.on('data', (c: Buffer) => errChunks.push(c.toString()))
  await fs.promises.writeFile(gate, 'go\n')
  const r = await child.result
  t.equal(r.stdout.toString(), 'first\nsecond\n')
  t.equal(chunks.join(''), 'first\nsecond\n')
  t.equal(errChunks.join(''), 'err\n')
  t.ok(child.pid > 0)
  t.equal(r.pid, child.pid)
})

t.test('the first chunk arrives before the result settles', async t => {
  // The child cannot end before the chunk is seen: it waits for its stdin to close, which
  // happens only then.
  let settled = false
  const child = startChild({ file: 'sh', args: ['-c', 'echo early; cat >/dev/null; echo late'], stdin: 'pipe' })
  child.result.then(() => { settled = true })
  await new Promise(resolve => child.stdout.once('data', resolve))
  t.equal(settled, false, 'streamed before the child ended')
  child.stdin!.end()
  t.equal((await child.result).stdout.toString(), 'early\nlate\n')
})

t.test('streams see everything even past maxBuffer; the result is truncated and flagged', async t => {
  const child = startChild({ file: 'head', args: ['-c', '100000', '/dev/zero'], maxBuffer: 1000 })
  let streamed = 0
  child.stdout.on('data', (c: Buffer) => { streamed += c.length })
  const r = await child.result
  await finished(child.stdout)
  t.equal(streamed, 100000)
  t.equal(r.stdout.length, 1000)
  t.equal(r.stdoutTruncated, true)
})

t.test('a stream destroyed mid-flight or at once: the pipe is read on into the result, the child never blocks', t => eachPath(t, '', async (t, path) => {
  // 1 MB, far past a pipe and a stream's buffer: a pipe left unread after the stream went would
  // hold the child on its next write for ever (no deadline here, only the test's own timeout).
  for (const stream of ['stdout', 'stderr'] as const) {
    const redirect = stream === 'stderr' ? ' >&2' : ''
    const child = starter(path)({ file: 'sh', args: ['-c', `head -c 1000000 /dev/zero${redirect}; echo done${redirect}`] })
    let seen = 0
    child[stream].on('data', (c: Buffer) => { seen += c.length; child[stream].destroy() })
    const r = await child.result
    t.same({ exitCode: r.exitCode, signal: r.signal, length: r[stream].length, tail: r[stream].subarray(-5).toString() },
      { exitCode: 0, signal: null, length: 1000005, tail: 'done\n' }, `${stream} destroyed after its first chunk: the child finished, the result has every byte`)
    t.ok(seen > 0 && seen < 1000005, `${stream}: the stream saw only what came before it was destroyed (${seen} bytes)`)
  }
  // Destroyed before anything came, with nothing attached.
  const early = starter(path)({ file: 'sh', args: ['-c', 'head -c 1000000 /dev/zero; echo done'] })
  early.stdout.destroy()
  t.equal((await early.result).stdout.length, 1000005, 'destroyed at once: every byte in the result')
}))

t.test('kill(): default signal, named signal, false once ended', t => eachPath(t, '', async (t, path) => {
  const start = starter(path)
  const a = start({ file: 'sleep', args: ['100'] })
  t.equal(a.kill(), true)
  t.equal((await a.result).signal, 'SIGKILL', "default killSignal is SIGKILL, as the contract has it")
  t.equal(a.kill(), false, 'nothing to kill after the end')
  const b = start({ file: 'sleep', args: ['100'] })
  b.kill('SIGTERM')
  const rb = await b.result
  t.equal(rb.signal, 'SIGTERM')
  t.equal(rb.diagnostic, 'Terminated')
  const c = start({ file: 'sleep', args: ['100'], killSignal: 'SIGINT' })
  c.kill()
  t.equal((await c.result).signal, 'SIGINT', 'kill() defaults to the spec\'s killSignal')
  const d = start({ file: 'sleep', args: ['100'] })
  t.throws(() => d.kill('SIGNOPE'), { code: 'ERR_INVALID_ARG_VALUE' })
  d.kill(9)
  await d.result
  // kill(0), as child_process's: sends nothing, says whether the child still runs (it was a
  // RangeError). Measured, before the target is reported too: true, and nothing waits to be sent.
  const e = start({ file: 'sleep', args: ['100'] })
  t.equal(e.kill(0), true, 'kill(0) on a running child: true')
  t.equal(processState(e.pid), 'alive', 'and it still runs')
  e.kill('SIGTERM')
  const re = await e.result
  t.same([re.signal, re.aborted], ['SIGTERM', false], 'the next signal is the one it ends by')
  t.equal(e.kill(0), false, 'kill(0) after the end: false')
}, { apis: ['start'] }))

/** Whether a process is stopped (state T in /proc/<pid>/stat). */
function isStopped(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')
  } catch {
    return false
  }
}

t.test('kill(SIGSTOP) stops the child, kill(SIGCONT) lets it go on', t => eachPath(t, '', async (t, path) => {
  const child = starter(path)({ file: 'sh', args: ['-c', 'echo $$; sleep 1; echo resumed'] })
  const [pid] = await readPids(child, 1)
  t.equal(child.kill('SIGSTOP'), true, 'delivered')
  t.ok(await eventually(() => isStopped(pid!)), 'the child is stopped')
  t.equal(child.kill('SIGCONT'), true, 'SIGCONT delivered')
  const r = await child.result
  t.same([r.exitCode, r.signal, r.stdout.toString()], [0, null, `${pid}\nresumed\n`], 'went on to its own end')
}, { apis: ['start'] }))

t.test('kill escalation: SIGKILL follows a gentler signal after forceKillAfterDelay', t => eachPath(t, '', async (t, path) => {
  const child = starter(path)({
    file: 'sh', args: ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'], setsid: true,
    killSignal: 'SIGTERM', forceKillAfterDelay: 150,
  })
  await new Promise(resolve => child.stdout.once('data', resolve))
  child.kill()
  const r = await child.result
  t.equal(r.signal, 'SIGKILL', 'the TERM-ignoring child was force-killed')
  t.equal(r.timedOut, false)
}, { apis: ['start'] }))

// A new session, or a new process group in this one: either way kills reach the whole group.
const GROUPINGS: Array<[string, Partial<ChildSpec>]> = [
  ['setsid', { setsid: true }],
  ['processGroup', { processGroup: true }],
]
for (const [grouping, extra] of GROUPINGS) for (const how of ['timeout', 'abort', 'kill'] as const) {
  t.test(`${grouping}: ${how} leaves nothing of the group behind`, t => eachPath(t, '', async (t, path) => {
    const ac = new AbortController()
    const child = starter(path)({
      file: 'sh', args: ['-c', 'sleep 100 & echo $!; sleep 100 & echo $!; wait'], ...extra,
      // Long enough for both pids to be printed first on a loaded machine; nothing times it.
      timeout: how === 'timeout' ? 1500 : 0, signal: ac.signal,
    })
    const pids = await readPids(child, 2)
    if (how === 'abort') ac.abort()
    if (how === 'kill') child.kill()
    const r = await child.result
    t.equal(r.timedOut, how === 'timeout')
    t.equal(r.aborted, how === 'abort')
    for (const pid of pids) t.ok(await eventually(() => processState(pid) !== 'alive'), `grandchild ${pid} is gone`)
  }, { apis: ['start'] }))
}

t.test('AbortSignal', t => eachPath(t, '', async (t, { run }) => {
  const ac = new AbortController()
  ac.abort()
  const pre = await run({ file: 'sleep', args: ['100'], signal: ac.signal })
  t.equal(pre.aborted, true, 'an already-aborted signal kills at once')
  t.equal(pre.signal, 'SIGKILL')
  t.equal(pre.diagnostic, 'Child aborted')
  const late = new AbortController()
  const done = await run({ file: 'true', signal: late.signal })
  late.abort()
  t.equal(done.aborted, false, 'aborting after the end changes nothing')
  t.equal(done.exitCode, 0)
  // A real, aborted signal with an own `aborted` property that says otherwise (or throws): the
  // harness asks AbortSignal's own getter, as its brand check does, never the object's property.
  for (const [label, own] of [['false', { get: () => false }], ['a throwing getter', { get: () => { throw new Error('own getter') } }]] as const) {
    const lying = new AbortController()
    lying.abort()
    Object.defineProperty(lying.signal, 'aborted', own)
    const r = await run({ file: 'sleep', args: ['100'], signal: lying.signal })
    t.same([r.aborted, r.signal], [true, 'SIGKILL'], `an aborted signal whose own 'aborted' is ${label}: killed at once, aborted`)
  }
}, { apis: ['async', 'start'] }))

t.test('killOnExit: children die with a process that exits normally or by a handled signal', async t => {
  const script = (killOnExit: boolean, ending: string) => `
    const { startChild } = require(${JSON.stringify(REPO_ROOT)})
    process.on('SIGTERM', () => process.exit(3))
    const c = startChild({ file: 'sleep', args: ['100'], killOnExit: ${killOnExit} })
    console.log(c.pid)
    ${ending}
  `
  for (const [killOnExit, ending, label] of [
    [true, 'setTimeout(() => process.exit(0), 100)', 'process.exit'],
    [true, 'setInterval(() => {}, 1000)', 'handled SIGTERM'],
    [false, 'setTimeout(() => process.exit(0), 100)', 'killOnExit: false'],
  ] as const) {
    const parent = startChild({ file: process.execPath, args: ['-e', script(killOnExit, ending)], env: nodeEnv, timeout: 30000 })
    const [pid] = await readPids(parent, 1)
    if (label === 'handled SIGTERM') parent.kill('SIGTERM')
    await parent.result
    if (killOnExit) {
      t.ok(await eventually(() => processState(pid) !== 'alive'), `${label}: the child was killed`)
      if (processState(pid) === 'alive') process.kill(pid, 'SIGKILL')
    } else {
      t.equal(processState(pid), 'alive', `${label}: the child survives`)
      process.kill(pid, 'SIGKILL')
    }
  }
})

// The fork path sets the death signal in the child, and 'auto' takes it whenever killOnExit is
// set (the default); posix_spawn cannot, so a measured child's helper started by posix_spawn takes
// it itself (-p), and its target dies with it. An unmeasured child forced onto posix_spawn has only
// the exit-time kill (README, killOnExit).
const DEATH_SIGNAL_PATHS: Array<[string, Record<string, unknown>]> = [
  ['default options', {}],
  ['default options, measured', { measure: true }],
  ['fork path', { launcher: 'fork' }],
  ['fork path, measured', { launcher: 'fork', measure: true }],
  ['posix_spawn, measured', { launcher: 'posix_spawn', measure: true }],
  // A change of credentials clears the death signal: the child takes it again as the new user.
  ...process.getuid?.() === 0 ? [
    ['as nobody', { uid: 65534, gid: 65534, cwd: '/' }],
    ['as nobody, measured', { uid: 65534, gid: 65534, cwd: '/', measure: true }],
  ] as Array<[string, Record<string, unknown>]> : [],
]
for (const [name, extra] of DEATH_SIGNAL_PATHS) t.test(`PR_SET_PDEATHSIG: a SIGKILLed parent leaves no orphan (${name})`, async t => {
  // The sleep writes to the parent's stdout (inherit), our pipe: the parent's result arrives when
  // the pipe reaches EOF, that is when the sleep (and a measured one's helper) is dead too, or
  // after waitDelay says that something still held it.
  const code = `
    const { startChild } = require(${JSON.stringify(REPO_ROOT)})
    const c = startChild({ file: 'sleep', args: ['100'], stdout: 'inherit', ...${JSON.stringify(extra)} })
    console.log(c.pid)
    setInterval(() => {}, 1000)
  `
  const parent = startChild({ file: process.execPath, args: ['-e', code], env: nodeEnv, timeout: 30000, waitDelay: 30000 })
  const [pid] = await readPids(parent, 1)
  t.teardown(() => { if (processState(pid) === 'alive') process.kill(pid, 'SIGKILL') })
  parent.kill('SIGKILL')
  const r = await parent.result
  t.equal(r.signal, 'SIGKILL')
  t.equal(r.waitDelayExpired, false, 'the pipe the orphan held closed: it died with its parent')
  // Its fds close a moment before /proc shows it dead (exit_files before exit_notify).
  t.ok(await eventually(() => processState(pid) !== 'alive'), 'the orphan got SIGKILL from the kernel')
})

t.test('waiting never occupies the libuv threadpool', async t => {
  // With a threadpool of one thread, a file read must complete while 8 children are still
  // running: if any wait sat on the pool, the read would queue behind it (and, as the children
  // end only when aborted after the read, never complete).
  const code = `
    const fs = require('fs')
    const { spawnChild } = require(${JSON.stringify(REPO_ROOT)})
    let ended = 0
    const stop = new AbortController()
    const all = Array.from({ length: 8 }, () => spawnChild({ file: 'sleep', args: ['100'], signal: stop.signal }).then(() => { ended++ }))
    fs.promises.readFile('/proc/self/status').then(() => {
      console.log('read done, children ended: ' + ended)
      stop.abort()
      return Promise.all(all)
    })
  `
  const r = await spawnChild({ file: process.execPath, args: ['-e', code], env: { ...nodeEnv, UV_THREADPOOL_SIZE: '1' }, timeout: 30000 })
  t.equal(r.stdout.toString(), 'read done, children ended: 0\n', r.stderr.toString())
})

t.test('workers: context-aware addon, two workers at once, teardown kills their children', async t => {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { spawnChild, spawnChildSync, startChild } = require(${JSON.stringify(REPO_ROOT)})
    ;(async () => {
      if (workerData.hold) {
        const c = startChild({ file: 'sleep', args: ['100'] })
        parentPort.postMessage(c.pid)
        return
      }
      if (workerData.holdWithoutHandle) {
        // spawnChild without a signal: no handle, no pid in JS; the child exists once it returns.
        spawnChild({ file: 'sleep', args: [workerData.holdWithoutHandle] })
        parentPort.postMessage('started')
        return
      }
      const out = []
      for (let i = 0; i < 10; i++) {
        const a = await spawnChild({ file: 'sh', args: ['-c', 'echo ' + workerData.n + '-' + i], timeout: 5000 })
        const s = spawnChildSync({ file: 'sh', args: ['-c', 'echo ' + workerData.n + '-' + i], timeout: 5000 })
        out.push(a.stdout.toString().trim(), s.stdout.toString().trim())
      }
      parentPort.postMessage(out)
    })()
  `
  const run = (workerData: object) => {
    const w = new Worker(code, { eval: true, workerData })
    return { w, message: new Promise<unknown>((resolve, reject) => { w.once('message', resolve); w.once('error', reject) }) }
  }
  const [one, two] = await Promise.all([run({ n: 1 }).message, run({ n: 2 }).message])
  const want = (n: number) => Array.from({ length: 10 }, (_, i) => [`${n}-${i}`, `${n}-${i}`]).flat()
  t.same(one, want(1))
  t.same(two, want(2))
  const holder = run({ hold: true })
  const pid = await holder.message as number
  t.equal(processState(pid), 'alive')
  await holder.w.terminate()
  t.ok(await eventually(() => processState(pid) === 'gone'), "the terminated worker's child was killed and reaped")
  // The same for a child with no handle (spawnChild without a signal), found by its argument.
  const marker = `100.${process.pid}`
  const handleless = run({ holdWithoutHandle: marker })
  t.equal(await handleless.message, 'started')
  // Found by its command line, which the kernel fills in a moment after the launch returns (the
  // parent resumes once exec has replaced the child's memory; the new program's arguments are
  // laid out after that), so looked for until it shows.
  const find = () => fs.readdirSync('/proc').filter(d => /^\d+$/.test(d)).find(d => {
    try { return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') === `sleep\0${marker}\0` } catch { return false }
  })
  let sleeper: string | undefined
  t.ok(await eventually(() => (sleeper = find()) !== undefined), 'the handle-less child runs')
  t.equal(processState(Number(sleeper)), 'alive')
  await handleless.w.terminate()
  t.ok(await eventually(() => processState(Number(sleeper)) === 'gone'), "the terminated worker's handle-less child was killed and reaped")
})

t.test('a spec normalized for the sync API runs through the async waiter', async t => {
  // Nothing piped and no deadline: the sync waiter needs no pidfd for it. The async waiter
  // watches one always, and opens it itself (it once took the spec's word and crashed the
  // process on a poll handle with no fd).
  for (const launcher of LAUNCHERS) for (const measure of MEASURE) {
    const spec = normalizeSpec({ file: 'true', stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', launcher, measure })
    const label = `${launcher}${measure ? ' measured' : ''}`
    const r = await new Promise<ChildResult>((resolve, reject) => {
      const outcome = native.spawnAsync(spec.native, specNumbers(spec.native), null, (numbers, buffers) => resolve(buildResult(numbers, buffers, spec)), null, null, null)
      if (outcome === null) reject(new Error(`${label}: no handle, though one was asked for`))
      else if ('numbers' in outcome) reject(new Error(`${label}: the launch failed: ${buildResult(outcome.numbers, outcome.buffers, spec).diagnostic}`))
    })
    t.same([r.exitCode, r.spawnError, r.signal], [0, null, null], label)
  }
})

t.test('a child started without a handle runs, times out and is reaped like any other', async t => {
  // wantHandle false (spawnChild without a signal): spawnAsync returns null instead of a handle;
  // the deadline, the reaping and the result are the addon's alone.
  for (const launcher of LAUNCHERS) for (const measure of MEASURE) {
    const label = `${launcher}${measure ? ' measured' : ''}`
    const run = (file: string, args: string[], timeout: number) => {
      const spec = normalizeSpec({ file, args, stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', launcher, measure, timeout }, 'async')
      let outcome: ReturnType<typeof native.spawnAsync> | undefined
      const result = new Promise<ChildResult>(resolve => {
        outcome = native.spawnAsync(spec.native, specNumbers(spec.native), null, (numbers, buffers) => resolve(buildResult(numbers, buffers, spec)), null, null, null, false)
      })
      return { outcome, result }
    }
    const ok = run('true', [], 0)
    t.equal(ok.outcome, null, `${label}: no handle`)
    t.same([(await ok.result).exitCode, (await ok.result).spawnError], [0, null], `${label}: exit 0`)
    const slow = run('sleep', ['10'], 100)
    t.equal(slow.outcome, null, `${label}: no handle for the sleeper`)
    const r = await slow.result
    t.same([r.timedOut, r.signal], [true, 'SIGKILL'], `${label}: timed out and killed`)
    t.equal(processState(r.pid), 'gone', `${label}: reaped`)
  }
})

t.test('spawnChild asks for a handle only when something will use it', async t => {
  // A handle is a constructor call into V8 per spawn: spawnChild without a signal has no use for
  // one; with a signal, the abort kills through it; startChild hands it to the caller.
  const asked: boolean[] = []
  const spawnAsync = native.spawnAsync
  native.spawnAsync = (...args: Parameters<typeof spawnAsync>) => {
    asked.push(args[7] ?? true)
    return spawnAsync(...args)
  }
  t.teardown(() => { native.spawnAsync = spawnAsync })
  const quiet = { file: 'true', stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' } as const
  t.equal((await spawnChild(quiet)).exitCode, 0)
  const controller = new AbortController()
  const aborted = spawnChild({ ...quiet, file: 'sleep', args: ['10'], signal: controller.signal })
  controller.abort()
  t.equal((await aborted).aborted, true, 'the abort reached the child through its handle')
  t.equal((await startChild(quiet).result).exitCode, 0)
  t.same(asked, [false, true, true])
})

t.test("a result array whose buffer was transferred away is replaced, not written through", async t => {
  // The addon writes every child's numbers into one array per environment. A caller that detaches
  // its buffer (here: transferred to a structuredClone) leaves a dead pointer behind; the next
  // result must come in a fresh array, with the right facts, and nothing written to freed memory
  // (ASan runs this file).
  const spec = normalizeSpec({ file: 'sh', args: ['-c', 'exit 7'], stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' }, 'async')
  const run = () => new Promise<Float64Array>((resolve, reject) => {
    const outcome = native.spawnAsync(spec.native, specNumbers(spec.native), null, numbers => resolve(numbers), null, null, null, false)
    if (outcome !== null) reject(new Error('the launch failed'))
  })
  const first = await run()
  t.equal(buildResult(first, null, spec).exitCode, 7)
  const moved = structuredClone(first.buffer, { transfer: [first.buffer] })
  t.equal(first.length, 0, 'detached')
  t.equal(moved.byteLength, first.BYTES_PER_ELEMENT * rawNumbers().length, 'the numbers went with the transfer')
  const second = await run()
  t.not(second, first, 'a new array')
  t.equal(buildResult(second, null, spec).exitCode, 7, 'with the right facts')
  const third = await run()
  t.equal(third, second, 'which is kept for the next result')
  // Every slot is written for every result: nothing a caller (or an earlier child) left in the
  // array shows through.
  third.fill(12345)
  const fourth = buildResult(await run(), null, spec)
  t.same([fourth.exitCode, fourth.signal, fourth.timedOut, fourth.spawnError], [7, null, false, null])
  t.notOk(Object.values(fourth.rusage).includes(12345), 'no rusage slot left as it was')
  t.not(fourth.durationMs, 12345)
})

t.test("a spec's numbers cross in a Float64Array beside it; anything else is refused, never read", async t => {
  const spec = normalizeSpec({ file: 'sh', args: ['-c', 'exit 5'], stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', timeout: 10000 }, 'async')
  const refused = (field: string) => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`^native spec: ${field}`) })
  // specNumbers lays out what the object holds, each slot by the addon's declared order.
  const numbers = specNumbers(spec.native)
  const index = (name: string) => native.layout.specNumbers.indexOf(name)
  t.equal(numbers.length, native.layout.specNumbers.length)
  t.equal(numbers[index('timeout')], 10000)
  t.equal(numbers[index('deathSignal')], 1)
  t.equal(numbers[index('setsid')], 0)
  // A numeric field that is not a number is named, before anything runs.
  t.throws(() => specNumbers({ ...spec.native, timeout: '5' as unknown as number }), refused('timeout'))
  // The stdio kinds cross as numbers, and `given` says which optional fields hold something: the
  // addon reads no other (here none: no cwd, fds, terminal, rlimits, groups or cpus).
  const slot = (name: string) => numbers[index(name)]
  t.same([slot('stdin'), slot('stdout'), slot('stderr')], [StdioKind.ignore, StdioKind.ignore, StdioKind.ignore])
  t.equal(slot('given'), 0)
  const bit = (name: string) => 1 << native.layout.specOptionals.indexOf(name)
  const full = normalizeSpec({ file: 'sh', cwd: '/', rlimits: { core: 0 }, cpus: [0], stdout: 'pipe' }, 'async')
  t.equal(specNumbers(full.native)[index('given')], bit('cwd') | bit('rlimits') | bit('cpus'))
  t.throws(() => specNumbers({ ...spec.native, stdio: [null, { kind: 1 }, { kind: 1 }] as unknown as NativeSpec['stdio'] }), refused('stdio entries must be objects'))
  t.throws(() => specNumbers({ ...spec.native, stdio: [] as unknown as NativeSpec['stdio'] }), refused('stdio must be an array of 3'))
  // What the addon makes of the numbers is checked there too: a `given` that is no bit set of the
  // optional fields, or a kind out of range, is refused rather than read.
  for (const [name, value] of [['given', 1 << native.layout.specOptionals.length], ['given', 0.5], ['stdout', 99]] as const) {
    const bad = Float64Array.from(numbers)
    bad[index(name)] = value
    t.throws(() => native.spawnSync(spec.native, bad, null, rawNumbers()), refused(name === 'given' ? 'given' : 'bad stdio kind'), `${name} ${value}`)
  }
  // Given, an optional field is read and used (a cwd the child runs in).
  const inRoot = await spawnChild({ file: 'pwd', cwd: '/', stdout: 'pipe' })
  t.equal(inRoot.stdout.toString(), '/\n', 'cwd read when given')
  // The addon refuses numbers that are not a whole Float64Array of them, on both calls.
  for (const bad of [null, new Float32Array(32), new Float64Array(3), [...numbers]]) {
    t.throws(() => native.spawnSync(spec.native, bad as Float64Array, null, rawNumbers()), refused('numbers'))
    t.throws(() => native.spawnAsync(spec.native, bad as Float64Array, null, () => t.fail('no child'), null), refused('numbers'))
  }
  // Numbers detached by a caller: specNumbers lays out the next spec in a new array.
  const moved = specNumbers(spec.native)
  structuredClone(moved.buffer, { transfer: [moved.buffer] })
  t.equal(moved.length, 0, 'detached')
  const sync = rawNumbers()
  native.spawnSync(spec.native, specNumbers(spec.native), null, sync)
  t.equal(buildResult(sync, null, spec).exitCode, 5, 'the next call runs with fresh numbers')
  // A getter on the spec runs while the addon reads it, after the numbers were copied out: one
  // that detaches them changes nothing; one that detaches the sync call's result array gets a
  // refusal, not a write through a dead pointer (ASan runs this file).
  const own = Float64Array.from(specNumbers(spec.native))
  const detachNumbers = Object.defineProperty({ ...spec.native }, 'file', {
    get: () => { structuredClone(own.buffer, { transfer: [own.buffer] }); return '/bin/sh' },
  })
  const result = rawNumbers()
  native.spawnSync(detachNumbers, own, null, result)
  t.equal(own.length, 0, 'the getter detached the numbers')
  t.equal(buildResult(result, null, spec).exitCode, 5, 'the run used the copy taken before')
  const late = rawNumbers()
  const detachResult = Object.defineProperty({ ...spec.native }, 'file', {
    get: () => { structuredClone(late.buffer, { transfer: [late.buffer] }); return '/bin/sh' },
  })
  t.throws(() => native.spawnSync(detachResult, specNumbers(spec.native), null, late), { name: 'TypeError', message: /numbers was detached/ })
})

// With a { path } target (a FIFO its writer opens later) the launch waits, and the caller's code
// runs on. A process.chdir() meanwhile moved every relative name to the new directory: the cwd,
// the targets still to be opened, a program named by a relative path. They are the caller's as
// of the call.
t.test('relative names are resolved as of the call, whatever chdir() comes before the launch', async t => {
  const dir = tempDir(t)
  const home = process.cwd()
  t.teardown(() => process.chdir(home))
  for (const side of ['a', 'b']) {
    fs.mkdirSync(path.join(dir, side, 'work'), { recursive: true })
    fs.writeFileSync(path.join(dir, side, 'tool.sh'), `#!/bin/sh\necho tool of ${side}\n`, { mode: 0o755 })
  }
  for (const measure of MEASURE) for (const launcher of LAUNCHERS) {
    const label = `${launcher}${measure ? ' measured' : ''}`
    // A FIFO each: one writer's open releases the readers waiting then, not one still to come.
    const fifos = [1, 2].map(i => path.join(dir, `in${i}-${label.replace(' ', '-')}`))
    spawnChildSync({ file: 'mkfifo', args: fifos })
    process.chdir(path.join(dir, 'a'))
    const withCwd = spawnChild({ file: 'pwd', cwd: 'work', stdin: { path: fifos[0]! }, stdout: { path: `pwd-${label}` }, launcher, measure })
    const relativeFile = spawnChild({ file: './tool.sh', stdin: { path: fifos[1]! }, launcher, measure })
    process.chdir(path.join(dir, 'b'))
    for (const fifo of fifos) fs.writeFileSync(fifo, '')  // the writer: the stdin open returns
    const [r1, r2] = await Promise.all([withCwd, relativeFile])
    t.same([r1.exitCode, r1.spawnError], [0, null], label)
    t.equal(fs.readFileSync(path.join(dir, 'a', `pwd-${label}`), 'utf8'), `${path.join(dir, 'a', 'work')}\n`, `${label}: the cwd, and the stdout file, relative to where the call was made`)
    t.notOk(fs.existsSync(path.join(dir, 'b', `pwd-${label}`)), `${label}: nothing in the directory changed to`)
    t.equal(r2.stdout.toString(), 'tool of a\n', `${label}: ./tool.sh is the one beside the call`)
  }
})
