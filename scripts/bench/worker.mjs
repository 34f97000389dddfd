// One row group of the performance suite, in a fresh Node process so that each parent-RSS size
// (and each memory-hungry row) starts clean. Started by run.mjs:
//
//   node --expose-gc scripts/bench/worker.mjs TASK 'JSON params'
//
// Prints one JSON object on stdout; progress notes go to stderr. Every figure is taken side by
// side: within a round each method runs once (a batch), in an order shuffled afresh each round
// (roundOrder), so that drift on a shared machine reaches every method alike and no method always
// runs right behind the same other one. run.mjs turns rounds into ratios.
import childProcess from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { execa, execaSync } from 'execa'
import { spawnChild, spawnChildSync, startChild } from '../../dist/index.js'
import { median, mean, mulberry32, quantile } from '../../dist/bench/statistics.js'
import { native, rawNumbers, specNumbers } from '../../dist/spawn/native.js'
import { normalizeSpec } from '../../dist/spawn/normalize.js'

const [task, paramText] = process.argv.slice(2)
const params = JSON.parse(paramText ?? '{}')
const TRUE = '/bin/true'
const note = text => process.stderr.write(`  ${text}\n`)
const nsSince = t0 => Number(process.hrtime.bigint() - t0)

/** Resident memory held in Buffers filled with data, up to `targetBytes` of this process's RSS. */
function holdMemory(targetBytes) {
  const held = []
  const CHUNK = 256 * 1024 * 1024
  let missing = targetBytes - process.memoryUsage.rss()
  let seed = 1
  while (missing > 16 * 1024 * 1024) {
    const size = Math.min(CHUNK, missing)
    // fill() writes every byte, so every page is resident (not a shared zero page).
    held.push(Buffer.allocUnsafeSlow(size).fill(0x5a ^ seed++))
    missing = targetBytes - process.memoryUsage.rss()
  }
  return held
}

/** The floor program's own timing of `n` runs of argv (flags: ['-s'] for the harness's sequence). */
function floorRun(n, argv, flags = []) {
  const r = spawnChildSync({ file: params.floor, args: [...flags, String(n), ...argv], stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`floor failed: ${r.diagnostic || r.exitCode} ${r.stderr}`)
  const out = JSON.parse(r.stdout.toString())
  if (out.failures) throw new Error(`floor: ${out.failures} of ${n} runs of ${argv.join(' ')} failed`)
  return out
}

/**
 * A method for rounds(): a batch of n runs of /bin/true by the floor program with `flags`, after
 * params.floorWarmup untimed ones in the same process (floor -w): each batch is a fresh process,
 * whose first spawns are slower than a process's later ones (floor.c says by how much), while the
 * methods it is compared with run in a Node process that has been spawning for a while. Without
 * it, on a host where the first spawns cost 3 ms and the later ones 2.2, the floor came out
 * slower than every method in Node (row 1 0.86x).
 */
const floorBatch = flags => ({ batch: n => { const f = floorRun(n, [TRUE], [...flags, '-w', String(params.floorWarmup ?? 0)]); return { medianNs: f.medianNs, meanNs: f.totalNs / n, cpuNs: f.cpuNs } } })

const check = (ok, what) => { if (!ok) throw new Error(`${what}: unexpected result`) }

// floor-addon.c, built by run.mjs: floor -a's launch from a Node addon with nothing else in it.
const floorAddon = params.floorAddon ? createRequire(import.meta.url)(params.floorAddon) : null
const minimalAsync = () => new Promise(resolve => floorAddon.spawn(TRUE, status => { check(status === 0, 'floor addon'); resolve() }))

/**
 * The order in which round `k` runs `names`: a shuffle of its own for each round, from a PRNG
 * seeded with k (mulberry32), so that a run can be repeated. Not a rotation: a rotation keeps each
 * method right behind the same other one in nearly every round, and what a method leaves behind
 * is paid by whatever runs next (caches evicted; after child_process's fork, the parent's pages
 * write-protected, so that its next writes fault). Rotated, spawnChild ran behind execaSync in
 * nearly every round, and on a 2.2 ms-a-spawn host the median of its CPU per spawn came out
 * 84 / 146 / 281 µs above native.spawnAsync's (~50 MB, 1 GiB, 4 GiB parents); shuffled,
 * 6 / -23 / 42 µs, near the 31-59 µs the two differ by when they alternate alone.
 */
function roundOrder(names, k) {
  const random = mulberry32(k + 1)
  const order = [...names]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  return order
}

/**
 * Rounds of batches: in round k every method runs a batch of operations (roundOrder); each
 * method gets the median and mean of its per-operation times per round, in microseconds, and
 * its parent's CPU per operation in the round, every thread (this process's; the floor's own).
 * A method is either { each: () => void | Promise } (timed here, per operation) or
 * { batch: n => { medianNs, meanNs } } (times itself, the floor). A batch is `maxBatch`
 * operations, or fewer for a method so slow that a batch would pass `batchMs` (child_process at
 * 4 GiB costs a hundred times what the floor does; a few of its spawns tell that story).
 *
 * Each JavaScript method is first run `warmup.ops` times, or for `warmup.ms` if that comes first:
 * V8 compiles a function with its optimizing compiler only once it has run for a while (the
 * harness's normalizeSpec after some 800 spawns of /bin/true), and a figure taken before then
 * is the interpreter's, not what a process that spawns for a living pays.
 */
async function rounds(methods, count, maxBatch, batchMs, warmup) {
  const names = Object.keys(methods)
  const out = Object.fromEntries(names.map(n => [n, { batch: 0, medianUs: [], meanUs: [], cpuUs: [] }]))
  // Warm up each method (JIT, page cache, lazy imports) and size its batch from the median of a
  // few operations (a median, so one stall on a busy machine does not shrink the batch).
  for (const name of names) {
    await runBatch(methods[name], 2)
    if (methods[name].each) {
      const end = performance.now() + warmup.ms
      for (let i = 0; i < warmup.ops && performance.now() < end; i++) await runBatch(methods[name], 1)
    }
    const { medianNs } = await runBatch(methods[name], 5)
    out[name].batch = Math.max(1, Math.min(maxBatch, Math.floor((batchMs * 1e6) / medianNs)))
  }
  for (let k = 0; k < count; k++) {
    for (const name of roundOrder(names, k)) {
      const { medianNs, meanNs, cpuNs } = await runBatch(methods[name], out[name].batch)
      out[name].medianUs.push(medianNs / 1000)
      out[name].meanUs.push(meanNs / 1000)
      if (cpuNs !== undefined) out[name].cpuUs.push(cpuNs / 1000)
    }
  }
  return out
}

async function runBatch(method, n) {
  if (method.batch) return method.batch(n)
  const times = []
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    const pending = method.each()
    if (pending) await pending
    times.push(nsSince(t0))
  }
  const cpu = process.cpuUsage(cpu0)
  return { medianNs: median(times), meanNs: mean(times), cpuNs: ((cpu.user + cpu.system) * 1000) / n }
}

const quiet = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' }
const cpExit = (file, args, options) => new Promise((resolve, reject) => {
  const child = childProcess.spawn(file, args, options)
  child.once('error', reject)
  child.once('exit', (code, signal) => resolve({ code, signal }))
})

const TASKS = {
  // Rows 1 and 2: spawn+wait of /bin/true at one parent RSS, every method side by side.
  async spawn() {
    const held = holdMemory(params.rssBytes)
    const rss = process.memoryUsage.rss()
    note(`parent RSS ${(rss / 2 ** 20).toFixed(0)} MiB (${held.length} buffers)`)
    // The API as called: 'auto' takes the fork path, since killOnExit is the default. The
    // posix_spawn path by name beside it, which row 2 compares.
    const th = { file: TRUE, ...quiet }
    const thPosix = { ...th, launcher: 'posix_spawn' }
    // A diagnostic, not an API: the addon's call alone, the spec normalized once, no result built.
    // The gap between it and thSync is the JS layer; between it and the floor, the native call
    // from inside a Node process.
    const normalized = normalizeSpec(th)
    const numbers = rawNumbers()
    // Row 2's diagnostics: the addon's async call alone (a bare promise around it), and the same
    // with postLaunchUs of JavaScript run right after each launch, while the child runs: how much
    // of what the parent does then is paid on top of the child's own time.
    const normalizedAsync = normalizeSpec(th, 'async').native
    const spin = us => { const end = performance.now() + us / 1000; while (performance.now() < end); }
    const asyncCall = postLaunchUs => new Promise(resolve => {
      native.spawnAsync(normalizedAsync, specNumbers(normalizedAsync), null, numbers => { check(numbers[2] === 0, 'native.spawnAsync'); resolve() }, null, null, null, false)
      if (postLaunchUs > 0) spin(postLaunchUs)
    })
    const methods = {
      floor: floorBatch([]),
      floorHarness: floorBatch(['-s']),
      thSync: { each: () => check(spawnChildSync(th).exitCode === 0, 'spawnChildSync') },
      thNative: { each: () => { native.spawnSync(normalized.native, specNumbers(normalized.native), normalized.input, numbers); check(numbers[2] === 0, 'native.spawnSync') } },
      floorAsync: floorBatch(['-a']),
      floorAsyncClock: floorBatch(['-A']),
      floorAddon: { each: minimalAsync },
      thNativeAsync: { each: () => asyncCall(0) },
      thNativeAsyncWork: { each: () => asyncCall(params.postLaunchUs) },
      thSyncPosix: { each: () => check(spawnChildSync(thPosix).exitCode === 0, 'spawnChildSync posix_spawn') },
      cpSync: { each: () => check(childProcess.spawnSync(TRUE, [], { stdio: 'ignore' }).status === 0, 'spawnSync') },
      execaSync: { each: () => check(execaSync(TRUE, [], { stdio: 'ignore' }).exitCode === 0, 'execaSync') },
      thAsync: { each: async () => check((await spawnChild(th)).exitCode === 0, 'spawnChild') },
      thAsyncPosix: { each: async () => check((await spawnChild(thPosix)).exitCode === 0, 'spawnChild posix_spawn') },
      cpAsync: { each: async () => check((await cpExit(TRUE, [], { stdio: 'ignore' })).code === 0, 'spawn') },
      execaAsync: { each: async () => check((await execa(TRUE, [], { stdio: 'ignore' })).exitCode === 0, 'execa') },
    }
    const result = await rounds(methods, params.rounds, params.batch, params.batchMs, params.warmup)
    held.length = 0
    return { rssBytes: rss, rounds: params.rounds, methods: result }
  },

  // Row 3: `count` runs of /bin/true, `inFlight` at a time; wall time of the whole batch. The
  // floor is the C program keeping as many in flight (floor -j), in its own small process.
  async throughput() {
    const pool = async start => {
      let next = 0
      const t0 = process.hrtime.bigint()
      await Promise.all(Array.from({ length: params.inFlight }, async () => {
        while (next < params.count) {
          next++
          await start()
        }
      }))
      return nsSince(t0)
    }
    // The breakdown, as row 2's: the async waiter's system calls in C with as many in flight
    // (floor -a -j), the same launch from the minimal addon, and the addon's async call alone from
    // Node (the spec normalized once, a bare promise, no result built).
    const normalizedAsync = normalizeSpec({ file: TRUE, ...quiet }, 'async').native
    const methods = {
      thAsync: async () => check((await spawnChild({ file: TRUE, ...quiet })).exitCode === 0, 'spawnChild'),
      thNativeAsync: () => new Promise(resolve => {
        native.spawnAsync(normalizedAsync, specNumbers(normalizedAsync), null, numbers => { check(numbers[2] === 0, 'native.spawnAsync'); resolve() }, null, null, null, false)
      }),
      floorAddon: minimalAsync,
      cpAsync: async () => check((await cpExit(TRUE, [], { stdio: 'ignore' })).code === 0, 'spawn'),
    }
    const floors = {
      floor: () => floorRun(params.count, [TRUE], ['-j', String(params.inFlight)]).totalNs,
      floorAsync: () => floorRun(params.count, [TRUE], ['-a', '-j', String(params.inFlight)]).totalNs,
      floorAsyncClock: () => floorRun(params.count, [TRUE], ['-A', '-j', String(params.inFlight)]).totalNs,
    }
    const out = { floor: [], floorAsync: [], floorAsyncClock: [], floorAddon: [], thNativeAsync: [], thAsync: [], cpAsync: [] }
    for (const name of Object.keys(methods)) await pool(methods[name]) // warm-up round, not kept
    for (const name of Object.keys(floors)) floors[name]()
    for (let k = 0; k < params.rounds; k++) {
      for (const name of roundOrder(Object.keys(out), k)) {
        out[name].push((name in floors ? floors[name]() : await pool(methods[name])) / 1e6)
      }
    }
    return { count: params.count, inFlight: params.inFlight, rounds: params.rounds, wallMs: out }
  },

  // Row 8: the event loop's delay while children start and finish from a big parent. `inFlight`
  // children (`sleep 0.05`) are kept running, `count` in all; starts are paced by the loop, one
  // per turn (as a server starting a child per request would), so what the histogram sees is
  // what one start costs the loop, not a burst of a hundred in one tick.
  async loopDelay() {
    const { monitorEventLoopDelay, performance } = await import('node:perf_hooks')
    const held = holdMemory(params.bytes)
    const rss = process.memoryUsage.rss()
    const RESOLUTION = 1
    const queue = []
    const drain = () => {
      queue.shift()()
      if (queue.length) setImmediate(drain)
    }
    // The histogram records the interval between its 1 ms samples: the delay is what exceeds it.
    const delay = ns => Math.max(0, ns / 1e6 - RESOLUTION)
    // Besides the delays: the share of the wall the loop was busy (eventLoopUtilization), and for
    // a method, how long each start's call held the loop (the call, until it returned): where a
    // delay comes from the starts, and where from the machine (its CPUs busy with the children).
    // watch() starts both; what it returns stops them and gives the figures.
    const watch = () => {
      const h = monitorEventLoopDelay({ resolution: RESOLUTION })
      h.enable()
      const elu0 = performance.eventLoopUtilization()
      return (count, wallMs, holds = []) => {
        const busy = performance.eventLoopUtilization(elu0).utilization
        h.disable()
        const hold = q => (holds.length ? quantile(holds, q) : null)
        return { count, wallMs, samples: h.count, p50: delay(h.percentile(50)), p99: delay(h.percentile(99)), max: delay(h.max), busy, holdP50: hold(0.5), holdP99: hold(0.99) }
      }
    }
    const paced = (start, holds) => new Promise((resolve, reject) => {
      queue.push(() => {
        const t0 = performance.now()
        const pending = start()
        holds.push(performance.now() - t0)
        pending.then(resolve, reject)
      })
      if (queue.length === 1) setImmediate(drain)
    })
    const measure = async (count, start) => {
      const holds = []
      let next = 0
      const stop = watch()
      const t0 = process.hrtime.bigint()
      await Promise.all(Array.from({ length: params.inFlight }, async () => {
        while (next < count) {
          next++
          await paced(start, holds)
        }
      }))
      return stop(count, nsSince(t0) / 1e6, holds)
    }
    const idle = async ms => {
      const stop = watch()
      await new Promise(resolve => setTimeout(resolve, ms))
      return stop(0, ms)
    }
    const SLEEP = ['0.05']
    const th = () => spawnChild({ file: 'sleep', args: SLEEP, ...quiet }).then(r => check(r.exitCode === 0, 'spawnChild'))
    const cp = () => cpExit('sleep', SLEEP, { stdio: 'ignore' }).then(r => check(r.code === 0, 'spawn'))
    // The floor: the same children, as many in flight, started by another process (xargs) while
    // this loop has nothing to do. What it sees is what the children's own start-up and exit
    // cost a loop on this machine's CPUs, whoever starts them.
    const elsewhere = async count => {
      const list = path.join(os.tmpdir(), `tileharness-bench-sleeps-${process.pid}`)
      fs.writeFileSync(list, `${SLEEP[0]}\n`.repeat(count))
      try {
        // Started, then held on its stdin until the histogram runs: its own launch is not counted.
        const xargs = startChild({ file: 'sh', args: ['-c', `read go; exec xargs -P ${params.inFlight} -n 1 sleep < "$0"`, list], stdin: 'pipe', stdout: 'ignore', stderr: 'pipe' })
        const stop = watch()
        const t0 = process.hrtime.bigint()
        xargs.stdin.end('go\n')
        const r = await xargs.result
        const figures = stop(count, nsSince(t0) / 1e6)
        check(r.exitCode === 0, `xargs sleep: ${r.stderr}`)
        return figures
      } finally {
        fs.rmSync(list, { force: true })
      }
    }
    await measure(params.inFlight, th) // warm-up, not kept
    const out = {
      idle: await idle(1000),
      elsewhere: await elsewhere(params.thCount),
      th: await measure(params.thCount, th),
      cp: await measure(params.cpCount, cp),
    }
    held.length = 0
    return { rssBytes: rss, inFlight: params.inFlight, ...out }
  },

  // Row 9: a compile farm on one machine. compileMany over every example kernel for every target
  // (PTX to cubin to host object), against xargs -P of ptxas on the same PTX files with the same
  // options; both `concurrency` at a time. Wall and CPU (this process's and every reaped child's,
  // from /proc/self/stat) per round, rotated order.
  async compileFarm() {
    const { Program, compileMany } = await import('../../dist/cuda/index.js')
    const { EXAMPLE_KERNELS, PTX_ISA_BY_TARGET, examplePtx } = await import('../../dist/ptx/index.js')
    const jobs = EXAMPLE_KERNELS.flatMap(kernel => Object.keys(PTX_ISA_BY_TARGET).map(gpu => ({ kernel, gpu, ptx: examplePtx(kernel, gpu) })))
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-bench-'))
    const TICK_MS = 1000 / 100 // /proc's clock ticks (USER_HZ)
    const cpuMs = () => {
      const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
      return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS
    }
    try {
      const lines = jobs.map(({ kernel, gpu, ptx }, i) => {
        const file = path.join(dir, `${i}-${kernel}-${gpu}.ptx`)
        fs.writeFileSync(file, ptx)
        return ['-arch', gpu, '--opt-level', '3', file, '-o', file.replace(/\.ptx$/, '.cubin')].join(' ')
      })
      const list = path.join(dir, 'jobs.txt')
      fs.writeFileSync(list, lines.join('\n') + '\n')
      const methods = {
        floor: () => {
          const r = spawnChildSync({ file: 'xargs', args: ['-P', String(params.concurrency), '-L', '1', 'ptxas'], stdin: { path: list }, stdout: 'ignore', stderr: 'pipe' })
          check(r.exitCode === 0, `xargs ptxas: ${r.stderr}`)
        },
        th: async () => {
          const programs = jobs.map(({ kernel, gpu, ptx }) => Program.create({ input: ptx, gpuName: gpu, optLevel: 3, hostArch: 'x86_64', name: `${kernel}_${gpu}`, allowAnyTarget: true }))
          const results = await compileMany(programs, { concurrency: params.concurrency })
          for (const program of programs) program.release()
          check(results.every(r => r.status === 0), 'compileMany')
        },
      }
      const out = { floor: { wallMs: [], cpuMs: [] }, th: { wallMs: [], cpuMs: [] } }
      for (const name of Object.keys(methods)) await methods[name]() // warm-up, not kept
      for (let k = 0; k < params.rounds; k++) {
        for (const name of k % 2 ? ['th', 'floor'] : ['floor', 'th']) {
          const cpu0 = cpuMs()
          const t0 = process.hrtime.bigint()
          await methods[name]()
          out[name].wallMs.push(nsSince(t0) / 1e6)
          out[name].cpuMs.push(cpuMs() - cpu0)
        }
      }
      return { compiles: jobs.length, kernels: EXAMPLE_KERNELS.length, targets: Object.keys(PTX_ISA_BY_TARGET).length, concurrency: params.concurrency, rounds: params.rounds, ...out }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },

  // Row 4: `bytes` of zeros captured through a stdout pipe.
  async capture() {
    const bytes = params.bytes
    const args = ['-c', String(bytes), '/dev/zero']
    const methods = {
      floor: () => floorRun(1, ['sh', '-c', `head -c ${bytes} /dev/zero | cat > /dev/null`]).totalNs,
      floorKeep: () => {
        const f = floorRun(1, ['head', ...args], ['-c'])
        check(f.kept === bytes, 'floor -c capture')
        return f.totalNs
      },
      thSync: () => {
        const t0 = process.hrtime.bigint()
        const r = spawnChildSync({ file: 'head', args, stdin: 'ignore', stdout: 'pipe', stderr: 'ignore', maxBuffer: bytes + 1 })
        const ns = nsSince(t0)
        check(r.exitCode === 0 && r.stdout.length === bytes && !r.stdoutTruncated, 'spawnChildSync capture')
        return ns
      },
      cpSync: () => {
        const t0 = process.hrtime.bigint()
        const r = childProcess.spawnSync('head', args, { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: bytes + 1 })
        const ns = nsSince(t0)
        check(r.status === 0 && r.stdout.length === bytes, 'spawnSync capture')
        return ns
      },
    }
    const names = Object.keys(methods)
    const out = Object.fromEntries(names.map(n => [n, []]))
    for (let k = 0; k < params.rounds; k++) {
      for (const name of roundOrder(names, k)) {
        out[name].push(methods[name]() / 1e6)
        // Drop the last capture before the next one, outside the timing: the GC finds it dead, and
        // a large capture's memory (an external Buffer) is freed by a finalizer that runs from the
        // event loop, so the loop is given a turn; else every round would start on fresh memory.
        globalThis.gc?.()
        await new Promise(resolve => setImmediate(resolve))
      }
    }
    return { bytes, rounds: params.rounds, wallMs: out }
  },

  // Row 5: lateness of timeouts, `children` `sleep 10` with `timeoutMs` each, `concurrency` at once.
  async timeout() {
    const { children, concurrency, timeoutMs } = params
    const pool = async one => {
      const late = []
      let next = 0
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < children) {
          next++
          late.push(await one())
        }
      }))
      return late
    }
    const th = await pool(async () => {
      const t0 = performance.now()
      const r = await spawnChild({ file: 'sleep', args: ['10'], ...quiet, timeout: timeoutMs })
      const delivered = performance.now() - t0 - timeoutMs
      check(r.timedOut && r.signal === 'SIGKILL', 'spawnChild timeout')
      return { reaped: r.durationMs - timeoutMs, delivered }
    })
    const cp = await pool(async () => {
      const t0 = performance.now()
      const r = await cpExit('sleep', ['10'], { stdio: 'ignore', timeout: timeoutMs, killSignal: 'SIGKILL' })
      check(r.signal === 'SIGKILL', 'child_process timeout')
      return performance.now() - t0 - timeoutMs
    })
    // Control: the same timeout with nothing else on the loop.
    const idle = []
    for (let i = 0; i < params.idleChildren; i++) {
      const r = await spawnChild({ file: 'sleep', args: ['10'], ...quiet, timeout: timeoutMs })
      check(r.timedOut, 'spawnChild timeout')
      idle.push(r.durationMs - timeoutMs)
    }
    return {
      children, concurrency, timeoutMs,
      thReapedMs: th.map(x => x.reaped), thDeliveredMs: th.map(x => x.delivered), cpExitMs: cp, idleReapedMs: idle,
    }
  },

  // Row 6: ptxas on the same PTX, directly (the floor program) and through spawnChildSync.
  async ptxas() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-bench-'))
    try {
      const { examplePtx } = await import('../../dist/ptx/index.js')
      const ptxFile = path.join(dir, 'vadd.ptx')
      fs.writeFileSync(ptxFile, examplePtx('vadd', 'sm_100'))
      const argv = ['ptxas', '-arch', 'sm_100', ptxFile, '-o', path.join(dir, 'out.cubin')]
      const spec = { file: argv[0], args: argv.slice(1), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' }
      const methods = {
        floor: { batch: n => { const f = floorRun(n, argv); return { medianNs: f.medianNs, meanNs: f.totalNs / n } } },
        thSync: { each: () => check(spawnChildSync(spec).exitCode === 0, 'ptxas through spawnChildSync') },
      }
      const result = await rounds(methods, params.rounds, params.batch, params.batchMs, params.warmup)
      return { rounds: params.rounds, argv: ['ptxas', '-arch', 'sm_100', 'vadd.ptx', '-o', 'out.cubin'], methods: result }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },
}

if (!TASKS[task]) {
  process.stderr.write(`worker: unknown task '${task}'\n`)
  process.exit(2)
}
const started = performance.now()
const result = await TASKS[task]()
result.seconds = (performance.now() - started) / 1000
process.stdout.write(JSON.stringify(result) + '\n')
