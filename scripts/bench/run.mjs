// The performance suite: `npm run bench` writes bench/RESULTS.md (and bench/spawn.svg);
// `npm run bench -- --quick` is the short form for CI (fewer rounds, smaller sizes; prints the
// results and writes nothing unless --out is given).
//
//   node scripts/bench/run.mjs [--quick] [--out FILE] [--svg FILE] [--rows 1,2,...] [--strict]
//
// Every figure is a ratio measured side by side in this one run: each row group runs in a fresh
// Node process (scripts/bench/worker.mjs) that interleaves its methods round by round, and a
// ratio is the median of the per-round ratios, so a busy neighbour slows both sides of it.
// --strict: exit 1 when a target is missed (by default only a failed measurement exits 1).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnChildSync } from '../../dist/index.js'
import { median, pairedRatio, quantile } from '../../dist/bench/statistics.js'
import { carriedSections } from './results-file.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(HERE, '../..')
const GiB = 1024 ** 3

const argv = process.argv.slice(2)
const flag = name => argv.includes(name)
const option = name => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined }
const quick = flag('--quick')
const strict = flag('--strict')
const out = option('--out') ?? (quick ? null : path.join(ROOT, 'bench/RESULTS.md'))
const svgOut = option('--svg') ?? (quick ? null : path.join(ROOT, 'bench/spawn.svg'))
const onlyRows = option('--rows')?.split(',').map(Number) ?? [1, 2, 3, 4, 5, 6, 7, 8, 9]

const CONFIG = quick
  ? {
      sizes: [{ label: '~50 MB', bytes: 0 }, { label: '1 GiB', bytes: GiB }],
      spawn: { rounds: 10, batch: 10, batchMs: 20, warmup: { ops: 300, ms: 300 }, floorWarmup: 50 },
      throughput: { count: 1000, inFlight: 32, rounds: 2 },
      capture: { bytes: 256 * 1024 ** 2, label: '256 MiB', rounds: 2 },
      timeout: { children: 200, concurrency: 100, timeoutMs: 50, idleChildren: 10 },
      ptxas: { rounds: 3, batch: 2, batchMs: 1000, warmup: { ops: 2, ms: 1000 } },
      accuracy: { rounds: 2, runs: { '/bin/true': 100, 'sleep 0.005': 40, 'sleep 0.1': 5 } },
      loopDelay: { bytes: GiB, label: '1 GiB', inFlight: 100, thCount: 300, cpCount: 30 },
      compileFarm: { rounds: 2, concurrency: os.availableParallelism() },
      svg: { runs: 10, warmup: 2 },
    }
  : {
      sizes: [{ label: '~50 MB', bytes: 0 }, { label: '1 GiB', bytes: GiB }, { label: '4 GiB', bytes: 4 * GiB }],
      // The warm-up's time cap is for the slow methods (child_process from a 4 GiB parent: 80 ms a
      // spawn). A fast method must reach its ops under it on a slow host too: /bin/true takes
      // 2.5 ms a spawn on a PVM guest, where a 1500 ms cap gave spawnChild some 600 warm-up runs
      // (in a loop there, the 1,200 spawns after 600 warm-up runs took 100-150 us more user CPU
      // each than after 3,000: V8 had not yet optimized the JS layer).
      spawn: { rounds: 60, batch: 20, batchMs: 30, warmup: { ops: 1500, ms: 6000 }, floorWarmup: 50 },
      throughput: { count: 1000, inFlight: 32, rounds: 6 },
      capture: { bytes: GiB, label: '1 GiB', rounds: 5 },
      timeout: { children: 200, concurrency: 100, timeoutMs: 50, idleChildren: 20 },
      ptxas: { rounds: 12, batch: 3, batchMs: 1000, warmup: { ops: 3, ms: 1000 } },
      accuracy: { rounds: 5, runs: { '/bin/true': 300, 'sleep 0.005': 100, 'sleep 0.1': 10 } },
      loopDelay: { bytes: 4 * GiB, label: '4 GiB', inFlight: 100, thCount: 1000, cpCount: 100 },
      compileFarm: { rounds: 6, concurrency: os.availableParallelism() },
      svg: { runs: 40, warmup: 3 },
    }

const TARGET_FLOOR = 1.10
const TARGET_FORK = 1.50
const TARGET_ASYNC = 1.05
const TARGET_LOOP_P99_MS = 1
const TARGET_FARM = 1.05
const TARGET_CAPTURE = 1.30
const TARGET_THROUGHPUT = 1 / 0.95 // wall vs the floor's: at least 95% of its rate
/** Row 2's diagnostic: µs of JavaScript the worker runs right after a launch. */
const POST_LAUNCH_US = 100
const started = performance.now()
const log = text => process.stderr.write(`bench: ${text}\n`)
const sections = []
const targets = [] // { row, what, ratio, limit, met }
const failures = []
const readings = [] // lines that say where a missed spawn or capture target's time goes

// ----- helpers --------------------------------------------------------------------------------

function run(file, args, extra = {}) {
  return spawnChildSync({ file, args, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', maxBuffer: 64 * 1024 ** 2, ...extra })
}

function firstLine(file, args) {
  try {
    const r = run(file, args, { timeout: 10000 })
    return r.exitCode === 0 ? r.stdout.toString().trim().split('\n')[0] : null
  } catch {
    return null
  }
}

/** Compiles floor.c into a private temp dir; the path of the program. */
function buildFloor(dir) {
  const exe = path.join(dir, 'floor')
  const r = run('cc', ['-O2', '-Wall', '-pthread', '-o', exe, path.join(HERE, 'floor.c')], { stderr: 'stdout' })
  if (r.exitCode !== 0) throw new Error(`cc floor.c failed: ${r.diagnostic || r.stdout.toString()}`)
  return exe
}

/**
 * Compiles floor-addon.c (the async floor inside Node) into dir against this Node's headers, where
 * node-gyp finds them: npm's nodedir, the tree this node binary came from, node-gyp's cache.
 */
function buildFloorAddon(dir) {
  const version = process.version.slice(1)
  const roots = [process.env.npm_config_nodedir, path.resolve(path.dirname(process.execPath), '..'),
    path.join(os.homedir(), '.cache', 'node-gyp', version)].filter(Boolean)
  const include = roots.map(root => path.join(root, 'include', 'node')).find(dir => fs.existsSync(path.join(dir, 'node_api.h')))
  if (!include) throw new Error(`cannot build floor-addon.c: no node_api.h in ${roots.map(r => path.join(r, 'include', 'node')).join(', ')}`)
  const addon = path.join(dir, 'floor.node')
  const r = run('cc', ['-O2', '-Wall', '-shared', '-fPIC', `-I${include}`, '-o', addon, path.join(HERE, 'floor-addon.c')], { stderr: 'stdout' })
  if (r.exitCode !== 0) throw new Error(`cc floor-addon.c failed: ${r.diagnostic || r.stdout.toString()}`)
  return addon
}

/** Runs one row group in a fresh Node process; its JSON, or null (and a recorded failure). */
function worker(task, params, row) {
  log(`row ${row}: ${task} ${JSON.stringify(params)}`)
  const r = run(process.execPath, ['--expose-gc', path.join(HERE, 'worker.mjs'), task, JSON.stringify(params)],
    { stderr: 'inherit', timeout: 8 * 60 * 1000 })
  if (r.exitCode !== 0) {
    failures.push(`row ${row} (${task}): the worker failed: ${r.diagnostic || `exit ${r.exitCode}`}`)
    return null
  }
  return JSON.parse(r.stdout.toString().trim().split('\n').pop())
}

const us = v => (v >= 10000 ? `${(v / 1000).toFixed(1)} ms` : `${v.toFixed(0)} µs`)
const ms = v => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ms'
const x = r => (r === null ? 'n/a' : `${r.median.toFixed(2)}x`)
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? '---:' : ':---')).join('|')}|`, ...rows.map(r => `| ${r.join(' | ')} |`)].join('\n')

function target(row, what, ratio, limit) {
  const met = ratio !== null && ratio.median <= limit
  targets.push({ row, what, ratio, limit, met })
  return `${x(ratio)} ≤ ${limit.toFixed(2)}x: **${met ? 'met' : 'MISSED'}**`
}

/** A target that is not a ratio limit: `figure` and `rule` say what was measured and held to. */
function verdict(row, what, figure, rule, met) {
  targets.push({ row, what, met, text: `${figure} (target: ${rule})` })
  return `${figure}: **${met ? 'met' : 'MISSED'}**`
}

/** Per-operation median of the round medians, and the paired ratio to `base` (round medians). */
function cell(methods, name, base = 'floor') {
  const m = methods[name]
  const ratio = name === base ? null : pairedRatio(m.medianUs, methods[base].medianUs)
  return { median: median(m.medianUs), mean: median(m.meanUs), ratio, meanRatio: name === base ? null : pairedRatio(m.meanUs, methods[base].meanUs) }
}
const show = c => `${us(c.median)} (mean ${us(c.mean)})${c.ratio ? ` — ${x(c.ratio)}` : ''}`

// ----- the rows -------------------------------------------------------------------------------

const machine = (() => {
  const cpus = os.cpus()
  const glibc = process.report?.getReport?.().header?.glibcVersionRuntime
  return `**Machine:** ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / GiB).toFixed(1)} GiB RAM, ` +
    `Linux ${os.release()}${glibc ? `, glibc ${glibc}` : ''}, Node ${process.version}, ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}` +
    `${quick ? ' — **quick run** (fewer rounds, smaller sizes)' : ''}`
})()

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-bench-'))
let floor, floorAddon
try {
  floor = buildFloor(tmp)
  floorAddon = buildFloorAddon(tmp)
  log(`built ${floor} and ${floorAddon}`)

  if (onlyRows.includes(1) || onlyRows.includes(2)) {
    const bySize = []
    for (const size of CONFIG.sizes) {
      const result = worker('spawn', { ...CONFIG.spawn, rssBytes: size.bytes, floor, floorAddon, postLaunchUs: POST_LAUNCH_US }, '1-2')
      if (result) bySize.push({ size, result })
    }
    for (const b of bySize) {
      const m = b.result.methods
      const r = name => x(pairedRatio(m[name].medianUs, m.floor.medianUs))
      readings.push(`at ${b.size.label}: the harness's system calls replayed in C ${r('floorHarness')} of the floor; ` +
        `the addon's call from Node ${r('thNative')}; spawnChildSync ${r('thSync')}; the async waiter's system calls in C ${r('floorAsync')}; ` +
        `the same launch from a minimal addon ${r('floorAddon')}; the addon's async call from Node ${r('thNativeAsync')}; spawnChild (async) ${r('thAsync')}`)
    }
    const rssLabel = ({ size, result }) => `${(result.rssBytes / 1024 ** 2).toFixed(0)} MiB${size.bytes ? '' : ' (no ballast)'}`
    const LABELS = {
      floor: 'floor', floorHarness: 'floor -s', thSync: 'spawnChildSync', thNative: 'native.spawnSync', thSyncPosix: 'spawnChildSync posix_spawn',
      floorAsync: 'floor -a', floorAsyncClock: 'floor -A', floorAddon: 'floor addon', thNativeAsync: 'native.spawnAsync', thNativeAsyncWork: 'native.spawnAsync + JS',
      cpSync: 'spawnSync', execaSync: 'execaSync', thAsync: 'spawnChild', thAsyncPosix: 'spawnChild posix_spawn', cpAsync: 'spawn', execaAsync: 'execa',
    }
    const batches = bySize.map(b => `${b.size.label}: ` + Object.entries(b.result.methods).map(([k, v]) => `${LABELS[k] ?? k} ${v.batch}`).join(', ')).join('; ')
    const method = `Per spawn: the median over ${CONFIG.spawn.rounds} rounds of each round's median (mean: the same of each round's mean); ` +
      `ratio: the median of the per-round ratios to the C floor, methods interleaved round by round in one process per size. ` +
      `stdio on /dev/null everywhere ('ignore'); tileharness's spec is that and nothing else, so it takes its default launch, the fork path ` +
      `('auto' with killOnExit). Before its rounds, each method in Node ran ${CONFIG.spawn.warmup.ops} times, or for ${CONFIG.spawn.warmup.ms} ms if that came first ` +
      `(V8 optimizes a function only once it has run for a while: the harness's normalizeSpec after some 800 spawns), and each C floor batch, a fresh process, first ran ${CONFIG.spawn.floorWarmup} untimed spawns of its own (\`floor -w\`: a process's first spawns are slower than its later ones). ` +
      `Spawns per round (fewer for a method whose batch would pass ${CONFIG.spawn.batchMs} ms): ${batches}.`
    if (onlyRows.includes(1)) {
      sections.push(`## 1. Spawn+wait of \`/bin/true\`, sync API\n\n` +
        `The floor is \`scripts/bench/floor.c\` (posix_spawnp + wait4 in a loop, compiled with cc at run time, its own small process); ` +
        `the others run inside a Node process holding the parent RSS in filled Buffers. ${method}\n\n` +
        table(['Parent RSS', 'C floor', 'tileharness spawnChildSync', 'child_process.spawnSync', 'execaSync', 'Target: spawnChildSync vs floor'],
          bySize.map(b => {
            const m = b.result.methods
            const th = cell(m, 'thSync')
            return [rssLabel(b), show(cell(m, 'floor')), show(th), show(cell(m, 'cpSync')), show(cell(m, 'execaSync')),
              target('1', `spawnChildSync vs floor at ${b.size.label}`, th.ratio, TARGET_FLOOR) + ` (means: ${x(th.meanRatio)})`]
          })) +
        `\n\nWhere the gap to the floor is, per size: (a) tileharness's own system calls replayed in C (\`floor -s\`: the fork path's clone, ` +
        `and in the child every signal to SIG_DFL, the death signal, the /dev/null opens and every fd from 3 up close-on-exec; then wait4) — ` +
        `the cost of the harness's choices; (b) the addon's call alone from Node (\`native.spawnSync\`, ` +
        `spec normalized once, no result object built) — (b) minus (a) is making those calls from inside Node; spawnChildSync minus (b) is the JS layer.\n\n` +
        table(['Parent RSS', '(a) harness sequence in C', '(b) native.spawnSync from Node', 'spawnChildSync'],
          bySize.map(b => [rssLabel(b), show(cell(b.result.methods, 'floorHarness')), show(cell(b.result.methods, 'thNative')), show(cell(b.result.methods, 'thSync'))])))
    }
    if (onlyRows.includes(2)) {
      sections.push(`## 2. The same through the async API, and the fork path\n\n` +
        `Async: sequential awaits (one child at a time). Measured in the same rounds and processes as row 1, against the same floor runs.\n\n` +
        table(['Parent RSS', 'C floor', 'tileharness spawnChild', 'child_process.spawn (await exit)', 'execa (await)', 'Target: spawnChild vs floor'],
          bySize.map(b => {
            const m = b.result.methods
            const th = cell(m, 'thAsync')
            return [rssLabel(b), show(cell(m, 'floor')), show(th), show(cell(m, 'cpAsync')), show(cell(m, 'execaAsync')),
              target('2', `spawnChild (async) vs floor at ${b.size.label}`, th.ratio, TARGET_ASYNC)]
          })) +
        `\n\nWhere the gap to the floor is, per size, as for row 1: (a) the async waiter's system calls replayed in C (\`floor -a\`: the same launch, ` +
        `its pidfd made by the clone, the pidfd added to two epoll sets, epoll_wait, wait4); (a′) is (a) with the exit clock's thread as well (\`floor -A\`: a second thread blocked in epoll_wait on the clock's set, ` +
        `woken by each exit to stamp it): what the second waiter costs in C; (n) is (a)'s launch from a minimal Node addon (\`scripts/bench/floor-addon.c\`: ` +
        `a uv_poll on the pidfd, wait4, one call into JavaScript, awaited as a promise; no spec, no exit clock, no handle, no result): (n) minus (a) is what Node itself ` +
        `costs an async spawn, and (b) minus (n) is the harness's own work; (b) the addon's async call alone from Node (\`native.spawnAsync\`, ` +
        `a bare promise around it, no handle and no result object built, as spawnChild calls it); spawnChild minus (b) is the JS layer; (c) is (b) with ${POST_LAUNCH_US} µs of JavaScript run right after each launch, while the child runs: ` +
        `(c) minus (b) is what that work adds to a spawn. An async API returns to the event loop after each launch (the call returns, the ` +
        `promise is chained, the loop turns into epoll_wait), where a C program waits at once. Where (c) minus (b) comes near ${POST_LAUNCH_US} µs, ` +
        `the parent's work after a launch was not overlapped with the child although a second CPU was free: the parent, woken when the ` +
        `child's exec releases it, is placed on the child's CPU (the scheduler's wake-up affinity), and the two take turns.\n\n` +
        table(['Parent RSS', '(a) async sequence in C', '(a′) with the exit clock\'s thread', '(n) (a) from a minimal addon', '(b) native.spawnAsync from Node', 'spawnChild', `(c) (b) + ${POST_LAUNCH_US} µs of JS after the launch`, '(c) minus (b)'],
          bySize.map(b => {
            const m = b.result.methods
            const added = median(m.thNativeAsyncWork.medianUs) - median(m.thNativeAsync.medianUs)
            return [rssLabel(b), show(cell(m, 'floorAsync')), show(cell(m, 'floorAsyncClock')), show(cell(m, 'floorAddon')), show(cell(m, 'thNativeAsync')), show(cell(m, 'thAsync')), show(cell(m, 'thNativeAsyncWork')),
              `+${us(added)}`]
          })) +
        `\n\nThe parent's CPU per spawn, user and system, every thread (the exit clock's too), the median of the rounds: the C programs' own ` +
        `(their children's not included), and the Node process's for the rest; the child's own is the same in each.\n\n` +
        table(['Parent RSS', 'C floor', '(a) async sequence in C', '(a′) with the exit clock\'s thread', '(n) (a) from a minimal addon', '(b) native.spawnAsync from Node', 'spawnChild'],
          bySize.map(b => [rssLabel(b), ...['floor', 'floorAsync', 'floorAsyncClock', 'floorAddon', 'thNativeAsync', 'thAsync'].map(name => us(median(b.result.methods[name].cpuUs)))])) +
        `\n\nThe posix_spawn path (\`launcher: 'posix_spawn'\`, glibc's posix_spawn with the harness's file actions and attributes) against ` +
        `the default fork path above (clone(CLONE_VM|CLONE_VFORK) and the contract's child-side sequence, with its death signal), ratios paired round by round as above:\n\n` +
        table(['Parent RSS', 'spawnChildSync posix_spawn', 'fork / posix_spawn (sync)', 'spawnChild posix_spawn', 'fork / posix_spawn (async)', 'sync posix_spawn vs floor', 'Target: fork / posix_spawn at 4 GiB'],
          bySize.map(b => {
            const m = b.result.methods
            const sync = pairedRatio(m.thSync.medianUs, m.thSyncPosix.medianUs)
            const async_ = pairedRatio(m.thAsync.medianUs, m.thAsyncPosix.medianUs)
            const at4 = b.size.bytes >= 4 * GiB
            return [rssLabel(b), show(cell(m, 'thSyncPosix', 'thSyncPosix')), x(sync), show(cell(m, 'thAsyncPosix', 'thAsyncPosix')), x(async_),
              x(cell(m, 'thSyncPosix').ratio), at4 ? target('2', 'fork path vs posix_spawn path (sync) at 4 GiB', sync, TARGET_FORK) : '—']
          })))
    }
  }

  if (onlyRows.includes(3)) {
    const r = worker('throughput', { ...CONFIG.throughput, floor, floorAddon }, 3)
    if (r) {
      const th = median(r.wallMs.thAsync), cp = median(r.wallMs.cpAsync), fl = median(r.wallMs.floor)
      const ratio = pairedRatio(r.wallMs.thAsync, r.wallMs.cpAsync)
      const vsFloor = pairedRatio(r.wallMs.thAsync, r.wallMs.floor)
      const rate = wall => `${ms(wall)} (${(r.count / wall * 1000).toFixed(0)} spawns/s)`
      sections.push(`## 3. Throughput: ${r.count} \`/bin/true\`, ${r.inFlight} in flight\n\n` +
        `Wall time of the whole batch, median of ${r.rounds} rounds (the order shuffled each round; a warm-up batch each first); ratios: medians of the per-round ratios. ` +
        `The floor is the C program (\`floor -j ${r.inFlight}\`: posix_spawnp, and wait4 on any child, ${r.inFlight} kept in flight, in its own small process): the most starts per second this machine gives. ` +
        `Target: tileharness's wall at most ${TARGET_THROUGHPUT.toFixed(2)}x the floor's, i.e. at least 95% of its rate.\n\n` +
        table(['Parent (this suite\'s worker)', 'tileharness spawnChild', 'child_process.spawn', 'C floor', 'tileharness / child_process', 'Target: tileharness / floor'],
          [['~50 MB', rate(th), rate(cp), rate(fl), x(ratio), target('3', `throughput, ${r.inFlight} in flight, vs the floor`, vsFloor, TARGET_THROUGHPUT)]]) +
        `\n\nWhere the gap to the floor is, as for row 2, with ${r.inFlight} in flight: (a) the async waiter's system calls in C (\`floor -a -j ${r.inFlight}\`: the harness's launch, the fork path, each child's pidfd in two epoll sets, the next exit taken from epoll_wait, wait4, close); ` +
        `(a′) the same with the exit clock's thread (\`floor -A -j ${r.inFlight}\`); (n) (a)'s launch from the minimal addon, as many in flight; ` +
        `(b) the addon's async call alone from Node (\`native.spawnAsync\`, the spec normalized once, a bare promise, no handle and no result built); spawnChild minus (b) is the JS layer. Ratios to the plain floor, paired round by round.\n\n` +
        table(['Parent (this suite\'s worker)', '(a) async sequence in C', '(a′) with the exit clock\'s thread', '(n) (a) from a minimal addon', '(b) native.spawnAsync from Node', 'spawnChild'],
          [['~50 MB', ...['floorAsync', 'floorAsyncClock', 'floorAddon', 'thNativeAsync', 'thAsync'].map(m => `${rate(median(r.wallMs[m]))} — ${x(pairedRatio(r.wallMs[m], r.wallMs.floor))}`)]]))
    }
  }

  if (onlyRows.includes(4)) {
    const r = worker('capture', { bytes: CONFIG.capture.bytes, rounds: CONFIG.capture.rounds, floor }, 4)
    if (r) {
      const mib = r.bytes / 1024 ** 2
      const line = (name, key, last) => {
        const wall = median(r.wallMs[key])
        const ratio = key === 'floor' ? null : pairedRatio(r.wallMs[key], r.wallMs.floor)
        return [name, ms(wall), `${(mib / wall * 1000).toFixed(0)} MiB/s`, ratio ? x(ratio) : '1.00x (floor)', last ?? '—']
      }
      const thRatio = pairedRatio(r.wallMs.thSync, r.wallMs.floor)
      sections.push(`## 4. Capture: ${CONFIG.capture.label} through a stdout pipe\n\n` +
        `\`head -c ${r.bytes} /dev/zero\`, the whole output kept in memory (maxBuffer above it), median of ${r.rounds} rounds, the order shuffled each round. ` +
        `The floor is \`head -c ${r.bytes} /dev/zero | cat > /dev/null\` run by the C floor program (the same bytes through a pipe, not kept). ` +
        `\`floor -c\` is the harness's capture in C: the same reads into a buffer grown and backed ahead as the addon's, kept until the child is done, then freed; ` +
        `what it adds to the floor is the kernel's cost of keeping the bytes (fresh pages, zeroed), which no capture into memory avoids.\n\n` +
        table(['Method', 'Wall (median)', 'Throughput', 'Ratio to floor', `Target: ≤ ${TARGET_CAPTURE.toFixed(2)}x the floor`], [
          line('floor: `head \\| cat > /dev/null`', 'floor'),
          line('(a) the harness\'s capture in C: `floor -c`', 'floorKeep'),
          line('tileharness spawnChildSync, stdout `pipe`', 'thSync', target('4', `capture ${CONFIG.capture.label} kept in memory vs head | cat`, thRatio, TARGET_CAPTURE)),
          line('child_process.spawnSync, large maxBuffer', 'cpSync'),
        ]))
      readings.push(`capture ${CONFIG.capture.label}: the harness's capture replayed in C ${x(pairedRatio(r.wallMs.floorKeep, r.wallMs.floor))} of the floor; spawnChildSync ${x(thRatio)}`)
    }
  }

  if (onlyRows.includes(5)) {
    const r = worker('timeout', CONFIG.timeout, 5)
    if (r) {
      const dist = xs => [median(xs), quantile(xs, 0.9), quantile(xs, 0.99), Math.max(...xs)].map(ms)
      sections.push(`## 5. Timeout accuracy: ${r.children} \`sleep 10\`, ${r.timeoutMs} ms timeouts, ${r.concurrency} at once (async API)\n\n` +
        `Lateness = when the killed child exited (or the result reached JS) minus its deadline (start + ${r.timeoutMs} ms). The exit is the exit clock's stamp (durationMs), taken off the event loop when the child's pidfd became readable.\n\n` +
        table(['Lateness', 'median', 'p90', 'p99', 'max'], [
          ['tileharness: exited (durationMs − timeout)', ...dist(r.thReapedMs)],
          ['tileharness: result delivered to JS (performance.now)', ...dist(r.thDeliveredMs)],
          ['child_process.spawn({ timeout }): \'exit\' event in JS', ...dist(r.cpExitMs)],
          [`control: tileharness one at a time (${r.idleReapedMs.length} children, loop idle): exited`, ...dist(r.idleReapedMs)],
        ]) +
        `\n\nA deadline is a uv timer on the main loop, so it fires only when the loop is free: with ${r.concurrency} children ` +
        `started back to back, the first is launched on the loop and the rest on the launcher threads, whose children the loop then takes back one by one, and part of the lateness above is that queue; ` +
        `the control row is the same timer with an idle loop. The gap between the first two rows is the loop's queue after the exit. child_process's timeout is a JS timer behind the same queue plus its own spawn cost.`)
    }
  }

  if (onlyRows.includes(6)) {
    const version = firstLine('sh', ['-c', 'ptxas --version | tail -n 2 | head -n 1'])
    if (!firstLine('sh', ['-c', 'command -v ptxas'])) {
      sections.push('## 6. ptxas through the harness\n\nSkipped: `ptxas` is not on the PATH.')
    } else {
      const r = worker('ptxas', { ...CONFIG.ptxas, floor }, 6)
      if (r) {
        const m = r.methods
        sections.push(`## 6. ptxas through the harness vs run directly\n\n` +
          `\`${r.argv.join(' ')}\` (the \`vadd\` example kernel from lib/ptx), ${version ?? 'ptxas'}; per run: median over ${r.rounds} rounds of each round's median; ` +
          `direct = the C floor program (posix_spawnp + wait4), through the harness = spawnChildSync with stdout and stderr piped.\n\n` +
          table(['Method', 'Per run', 'Ratio to direct'], [
            ['ptxas directly (C floor)', show(cell(m, 'floor')), '1.00x'],
            ['ptxas through spawnChildSync', show({ ...cell(m, 'thSync'), ratio: null }), x(cell(m, 'thSync').ratio)],
          ]))
      }
    }
  }

  if (onlyRows.includes(9)) {
    const r = worker('compileFarm', CONFIG.compileFarm, 9)
    if (r) {
      const wall = pairedRatio(r.th.wallMs, r.floor.wallMs)
      const cpu = pairedRatio(r.th.cpuMs, r.floor.cpuMs)
      sections.push(`## 9. Compile farm: ${r.compiles} compiles (${r.kernels} example kernels × ${r.targets} targets), ${r.concurrency} at a time\n\n` +
        `\`compileMany\` (PTX to cubin to host object, every program's ptxas through the harness) against \`xargs -P ${r.concurrency} -L 1 ptxas\` over the same PTX files with the same options (\`-arch T --opt-level 3\`), which writes cubins and nothing else. ` +
        `Median of ${r.rounds} rounds, alternating order; CPU is this process's and every reaped child's (/proc/self/stat, 10 ms ticks); ratios are medians of per-round ratios.\n\n` +
        table(['Method', 'Wall', 'CPU', 'Wall ratio', 'CPU ratio'], [
          ['floor: `xargs -P ptxas`', ms(median(r.floor.wallMs)), ms(median(r.floor.cpuMs)), '1.00x (floor)', '1.00x (floor)'],
          ['tileharness `compileMany`', ms(median(r.th.wallMs)), ms(median(r.th.cpuMs)), target('9', `compileMany vs xargs -P ptxas (wall), ${r.compiles} compiles`, wall, TARGET_FARM), x(cpu)],
        ]))
    }
  }

  if (onlyRows.includes(7)) {
    const hyperfine = firstLine('hyperfine', ['--version'])
    if (!hyperfine) {
      sections.push('## 7. `tileharness bench` against hyperfine\n\nSkipped: `hyperfine` is not on the PATH (Debian: `apt-get install hyperfine`).')
    } else {
      log(`row 7: accuracy ${JSON.stringify(CONFIG.accuracy)}`)
      // Per command and round, the three tools in rotated order, each its own process doing its
      // own warmup and runs; a figure is the median over rounds of each tool's median run.
      const cli = path.join(ROOT, 'dist/cli/main.js')
      const tools = {
        hyperfine: (cmd, n, file) => ['hyperfine', ['-N', '--style', 'none', '-w', '3', '-r', String(n), '--export-json', file, cmd]],
        measured: (cmd, n, file) => [process.execPath, [cli, 'bench', '-n', String(n), '--warmup', '3', '--json', file, cmd]],
        unmeasured: (cmd, n, file) => [process.execPath, [cli, 'bench', '--no-measure', '-n', String(n), '--warmup', '3', '--json', file, cmd]],
      }
      const medianMs = (tool, file) => {
        const j = JSON.parse(fs.readFileSync(file, 'utf8'))
        return tool === 'hyperfine' ? j.results[0].median * 1000 : j.commands[0].summary.wallMs.median
      }
      const rows = []
      for (const [cmd, n] of Object.entries(CONFIG.accuracy.runs)) {
        const got = { hyperfine: [], measured: [], unmeasured: [] }
        const names = Object.keys(tools)
        for (let round = 0; round < CONFIG.accuracy.rounds; round++) {
          for (let k = 0; k < names.length; k++) {
            const tool = names[(k + round) % names.length]
            const file = path.join(tmp, `accuracy-${tool}.json`)
            const [exe, args] = tools[tool](cmd, n, file)
            const r = run(exe, args, { timeout: 5 * 60 * 1000 })
            if (r.exitCode !== 0) throw new Error(`row 7: ${exe} ${args.join(' ')}: ${r.diagnostic || `exit ${r.exitCode}`}: ${r.stderr.toString().trim()}`)
            got[tool].push(medianMs(tool, file))
          }
        }
        const hf = median(got.hyperfine), me = median(got.measured), un = median(got.unmeasured)
        const within = v => Math.abs(v - hf) <= Math.max(0.03 * hf, 0.1)
        const diff = v => `${v >= hf ? '+' : '−'}${Math.abs(v - hf) < 1 ? `${(Math.abs(v - hf) * 1000).toFixed(0)} µs` : `${Math.abs(v - hf).toFixed(2)} ms`} (${((v / hf - 1) * 100).toFixed(1)}%)`
        rows.push([`\`${cmd}\` (${n})`, ms(hf), `${ms(me)} ${diff(me)}`, `${ms(un)} ${diff(un)}`,
          verdict('7', `\`tileharness bench\` (measured) vs \`hyperfine -N\`, \`${cmd}\``, `${ms(me)} vs ${ms(hf)}`, 'within 3% or 0.1 ms', within(me))])
      }
      sections.push(`## 7. \`tileharness bench\` against hyperfine\n\n` +
        `The median wall time of one run, as each tool reports it: \`hyperfine -N\` (${hyperfine}, no shell), \`tileharness bench\` (measured, the default: the wall time is the target's own, clocked by the measuring helper from just before it starts the target to its reaping) and \`tileharness bench --no-measure\` (launch to exit seen, by the harness). ` +
        `Each tool runs as its own process with 3 warmup runs and the same number of runs; ${CONFIG.accuracy.rounds} rounds in rotated order, the median of the rounds' medians. Target: the measured median within 3% or 0.1 ms of hyperfine's.\n\n` +
        table(['Command (runs per round)', 'hyperfine -N', 'tileharness bench', 'bench --no-measure', 'Target'],
          rows))
    }
  }
  // Row 8 runs last: measured just after its worker (4 GiB RSS, 100 forks by child_process),
  // row 9 came out 1.09-1.13x in six runs, against 1.00-1.06x alone and 1.04-1.05x 15 s later,
  // while the guest showed its CPUs idle: an aftermath this suite cannot see, kept out of the
  // rows after it.
  if (onlyRows.includes(8)) {
    const r = worker('loopDelay', CONFIG.loopDelay, 8)
    if (r) {
      const line = (name, m) => [name, m.count ? String(m.count) : '—', ms(m.wallMs), String(m.samples), ms(m.p50), ms(m.p99), ms(m.max),
        `${(m.busy * 100).toFixed(0)}%`, m.holdP50 === null ? '—' : `${ms(m.holdP50)} / ${ms(m.holdP99)}`]
      sections.push(`## 8. Event-loop delay while spawning from a ${CONFIG.loopDelay.label} parent\n\n` +
        `\`perf_hooks.monitorEventLoopDelay\` (1 ms resolution; the delay is what each sample's interval exceeds 1 ms by) while ${r.inFlight} \`sleep 0.05\` children are kept in flight from a parent of ${(r.rssBytes / GiB).toFixed(1)} GiB RSS. ` +
        `Starts are paced by the loop, one per turn, as a server starting a child per request would: the figure is what one start holds the loop for. ` +
        `child_process runs fewer children: each of its spawns copies the parent's page tables. ` +
        `The floor is this loop with nothing to do while \`xargs -P ${r.inFlight}\` (another process) runs the same children: what their own start-up and exit cost a loop on this machine's ${os.cpus().length} CPUs, whoever starts them. ` +
        `Loop busy: the share of the wall the loop was not waiting for events (\`performance.eventLoopUtilization\`). A start holds the loop: how long each start's call took to return, p50 / p99. child_process's returns once its child has exec'd (its fork and exec); with the CPUs busy with the other children, that is most of what its loop does. tileharness's, with other children in flight, returns once the launch is queued for a launcher thread (native/launch-thread.h), which waits for the exec instead.\n\n` +
        table(['Method', 'Children', 'Wall', 'Samples', 'Delay p50', 'Delay p99', 'Delay max', 'Loop busy', 'A start holds the loop (p50 / p99)'], [
          line('idle loop (control)', r.idle),
          line(`floor: idle loop, children started by \`xargs -P ${r.inFlight}\``, r.elsewhere),
          line('tileharness spawnChild', r.th),
          line('child_process.spawn', r.cp),
        ]) + '\n\n' +
        `Target: tileharness's p99 delay ≤ ${TARGET_LOOP_P99_MS} ms (the floor's: ${ms(r.elsewhere.p99)}): ` +
        verdict('8', `event-loop delay p99 with ${r.inFlight} in flight at ${CONFIG.loopDelay.label}`, `${ms(r.th.p99)} (child_process: ${ms(r.cp.p99)})`, `p99 ≤ ${TARGET_LOOP_P99_MS} ms`, r.th.p99 <= TARGET_LOOP_P99_MS))
    }
  }

  if (svgOut) {
    fs.mkdirSync(path.dirname(svgOut), { recursive: true })
    log(`tileharness bench for ${path.relative(ROOT, svgOut)}`)
    const md = path.join(tmp, 'spawn.md')
    const r = run(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), 'bench', '-n', String(CONFIG.svg.runs), '--warmup', String(CONFIG.svg.warmup),
      '--svg', svgOut, '--markdown', md, '/bin/true', 'sh -c true'], { stderr: 'inherit' })
    if (r.exitCode !== 0) failures.push(`tileharness bench for the SVG failed: ${r.diagnostic || `exit ${r.exitCode}`}`)
    else {
      sections.push(`## \`tileharness bench\`: \`/bin/true\` vs \`sh -c true\`\n\n` +
        `\`tileharness bench -n ${CONFIG.svg.runs} --warmup ${CONFIG.svg.warmup} --svg ${path.relative(ROOT, svgOut)} '/bin/true' 'sh -c true'\` (max RSS through the measuring helper):\n\n` +
        fs.readFileSync(md, 'utf8') + `\n![per-run wall time and max RSS](${path.relative(path.dirname(out ?? svgOut), svgOut)})`)
    }
  }
} catch (err) {
  failures.push(`the suite stopped: ${err.message}`)
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}

// ----- the results file -----------------------------------------------------------------------

const missed = targets.filter(t => !t.met)
const minutes = ((performance.now() - started) / 60000).toFixed(1)
const doc = [
  '# tileharness performance',
  '',
  machine,
  '',
  `Generated by \`node scripts/bench/run.mjs${quick ? ' --quick' : ''}\` in ${minutes} min. Each figure is measured side by side in this one run; ratios are medians of per-round ratios (lower is faster).`,
  '',
  ...sections.flatMap(s => [s, '']),
  '## Targets',
  '',
  ...targets.map(t => `- ${t.met ? 'met' : '**MISSED**'}: row ${t.row}, ${t.what}: ${t.text ?? `${x(t.ratio)} (target ≤ ${t.limit.toFixed(2)}x)`}`),
  '',
  missed.length ? `**Missed targets (${missed.length} of ${targets.length}):**` : `All ${targets.length} targets met.`,
  ...missed.map(t => `- row ${t.row}: ${t.what}: ${t.text ?? `${x(t.ratio)} > ${t.limit.toFixed(2)}x`}`),
  ...(missed.some(t => ['1', '2', '4'].includes(t.row)) && readings.length
    ? ['', 'Where the time goes (ratios to the floor, from rows 1, 2 and 4):', ...readings.map(r => `- ${r}`)]
    : []),
  ...(failures.length ? ['', '**Measurements that failed:**', ...failures.map(f => `- ${f}`)] : []),
  '',
].join('\n')

if (out) {
  fs.mkdirSync(path.dirname(out), { recursive: true })
  // The sections other scripts own (results-file.mjs) are carried over.
  fs.writeFileSync(out, doc + carriedSections(out))
  log(`wrote ${path.relative(process.cwd(), out)}${svgOut ? ` and ${path.relative(process.cwd(), svgOut)}` : ''}`)
}
if (!out || quick) process.stdout.write(doc)
log(`${minutes} min; ${missed.length ? `${missed.length} target(s) missed` : 'all targets met'}${failures.length ? `; ${failures.length} measurement(s) failed` : ''}`)
process.exitCode = failures.length || (strict && missed.length) ? 1 : 0
