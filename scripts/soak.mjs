#!/usr/bin/env node
// Soak: many spawns of mixed outcomes, then the process must be as it was.
//
//   node scripts/soak.mjs           short: 5,000 sequential + 2,000 async spawns (64 in flight)
//   node scripts/soak.mjs --long    long: 100,000 sequential + 10,000 async spawns (64 in flight)
//        [--sync N] [--async N] [--in-flight N] [--results]   --results: write "## Soak" in bench/RESULTS.md
//
// Outcomes are mixed on purpose: exit codes, deaths by signal, deadlines (SIGKILL and SIGTERM),
// children that wouldn't die (handed to the reaper), exec failures (ENOENT, EACCES), chdir
// failures, 1 MiB outputs, truncated outputs, piped input, files, setsid and rlimits, measured
// runs, aborts and kill(). Every result is checked against what its kind must give.
//
// Afterwards: the open fds are the same fds, there are no children (no zombies), and RSS (after a
// full GC) is within 10 MiB of where it started. Exit status 1 otherwise. Figures go to stdout and,
// with --results, to the "## Soak" section of bench/RESULTS.md (only that section is replaced).
// Uses the compiled package (dist/): run `npm run build:ts` first.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnChild, spawnChildSync, startChild } from '../dist/index.js'
import { RESULTS_FILE, writeSection } from './bench/results-file.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const flag = name => args.includes(name)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const long = flag('--long')
const SYNC = option('--sync', long ? 100_000 : 5_000)
const ASYNC = option('--async', long ? 10_000 : 2_000)
const IN_FLIGHT = option('--in-flight', 64)
const RSS_LIMIT_MIB = 10
// Under AddressSanitizer (npm run check:asan) freed memory sits in ASan's quarantine: RSS is
// reported but not judged there.
const UNDER_ASAN = /\blibasan\.so/.test(fs.readFileSync('/proc/self/maps', 'utf8'))

// RSS is compared after a full GC, with the process set up so that RSS measures live memory:
//   --expose-gc                   a full GC before each reading;
//   --min-semi-space-size=16      V8's young generation at its full size from the start: it
//                                 otherwise grows in steps with the allocation rate (~25 MiB more
//                                 heap after some 25,000 async spawns), which reads as a leak;
//   GLIBC_TUNABLES mmap_threshold  buffers of 64 KiB and up mapped and unmapped: 64 captures at once,
//                                 each growing to 1 MiB, otherwise fragment glibc's brk heap, which
//                                 keeps the freed memory (RSS climbs to a high-water mark and stays).
// Run without them, the script starts itself again with them, through the harness.
const TUNABLES = 'glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=65536'
const FLAGS = ['--expose-gc', '--min-semi-space-size=16']
const configured = typeof globalThis.gc === 'function' && process.execArgv.some(a => a.startsWith('--min-semi-space-size')) &&
  (process.env.GLIBC_TUNABLES ?? '').includes('mmap_threshold')
if (!configured) {
  const tunables = process.env.GLIBC_TUNABLES ? `${process.env.GLIBC_TUNABLES}:${TUNABLES}` : TUNABLES
  const r = spawnChildSync({
    file: process.execPath, args: [...FLAGS, fileURLToPath(import.meta.url), ...args],
    env: { ...process.env, GLIBC_TUNABLES: tunables }, stdin: 'inherit', stdout: 'inherit', stderr: 'inherit',
  })
  process.exit(r.exitCode ?? 1)
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-soak-'))
const noExec = path.join(work, 'no-exec')
fs.writeFileSync(noExec, '#!/bin/sh\n', { mode: 0o644 })
const outFile = path.join(work, 'out')
const MiB = 1 << 20
const input = Buffer.alloc(256 * 1024, 0x61)

// Each kind: a spec and what its result must be. `asyncOnly` kinds use startChild.
const KINDS = [
  ['exit 0', { file: '/bin/true' }, r => r.exitCode === 0],
  ['exit 42 (fork)', { file: 'sh', args: ['-c', 'exit 42'], launcher: 'fork' }, r => r.exitCode === 42],
  ['SIGSEGV', { file: 'sh', args: ['-c', 'kill -SEGV $$'], rlimits: { core: 0 } }, r => r.signal === 'SIGSEGV' && !r.coreDumped],
  ['deadline, SIGKILL', { file: 'sleep', args: ['5'], timeout: 5 }, r => r.timedOut && r.signal === 'SIGKILL'],
  ['deadline, SIGTERM (fork)', { file: 'sleep', args: ['5'], timeout: 5, killSignal: 'SIGTERM', launcher: 'fork' }, r => r.timedOut && r.signal === 'SIGTERM'],
  ["wouldn't die", { file: 'sleep', args: ['5'], timeout: 2, killSignal: 'SIGCHLD', graceTimeout: 5 }, r => r.diagnostic === "Child timed out but wouldn't die"],
  ['exec ENOENT', { file: '/nonexistent/th-soak' }, r => r.exitCode === 127 && r.spawnError?.code === 'ENOENT'],
  ['exec EACCES (fork)', { file: noExec, launcher: 'fork' }, r => r.exitCode === 126 && r.spawnError?.code === 'EACCES'],
  ['1 MiB stdout', { file: 'head', args: ['-c', String(MiB), '/dev/zero'] }, r => r.exitCode === 0 && r.stdout.length === MiB],
  ['1 MiB, 64 KiB kept, merged', { file: 'head', args: ['-c', String(MiB), '/dev/zero'], maxBuffer: 65536, stderr: 'stdout', launcher: 'fork' },
    r => r.exitCode === 0 && r.stdout.length === 65536 && r.stdoutTruncated],
  ['256 KiB through cat', { file: 'cat', input }, r => r.exitCode === 0 && r.stdout.length === input.length],
  ['chdir ENOENT', { file: '/bin/true', cwd: '/nonexistent/th-soak' }, r => r.exitCode === 126 && r.spawnError?.stage === 'chdir'],
  ['setsid + rlimits', { file: 'sh', args: ['-c', 'ulimit -n'], setsid: true, rlimits: { nofile: 64 } }, r => r.stdout.toString() === '64\n'],
  ['measured', { file: '/bin/true', measure: true }, r => r.exitCode === 0 && r.rusage.maxRSS > 0],
  ['stdout to a file', { file: 'sh', args: ['-c', 'echo hi'], stdout: { path: outFile } }, r => r.exitCode === 0],
  ['stderr output', { file: 'sh', args: ['-c', 'echo oops >&2; exit 1'] }, r => r.exitCode === 1 && r.stderr.toString() === 'oops\n'],
]
const ASYNC_KINDS = [
  ...KINDS,
  ['aborted', { file: 'sleep', args: ['5'], signal: 'abort' }, r => r.aborted && r.signal === 'SIGKILL'],
  ['kill()', { file: 'sleep', args: ['5'], kill: true }, r => r.signal === 'SIGKILL'],
]

function openFds() {
  return fs.readdirSync('/proc/self/fd').sort((a, b) => a - b)
}
function childPids() {
  return fs.readdirSync('/proc/self/task').flatMap(t => fs.readFileSync(`/proc/self/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
}
/** RSS after a full GC, and after the event loop has run the finalizers the GC queued. */
async function rssMiB() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await new Promise(r => setImmediate(r))
  }
  return process.memoryUsage.rss() / MiB
}
async function settle(children) {
  // Children that wouldn't die are reaped by a background thread shortly after; give it a moment.
  for (let i = 0; i < 500 && childPids().length > children; i++) await new Promise(r => setTimeout(r, 20))
}

const tally = new Map()
let failures = 0
function check(kind, r) {
  const [name, , ok] = kind
  tally.set(name, (tally.get(name) ?? 0) + 1)
  if (!ok(r)) {
    failures++
    if (failures <= 10) console.error(`soak: ${name}: unexpected result`, { ...r, stdout: r.stdout.length, stderr: r.stderr.length })
  }
}

function asyncRun(kind) {
  const [, spec] = kind
  if (spec.signal === 'abort') return spawnChild({ ...spec, signal: AbortSignal.abort() })
  if (spec.kill) {
    const { kill, ...rest } = spec
    const child = startChild(rest)
    child.kill()
    return child.result
  }
  return spawnChild(spec)
}

async function phase(name, count, run) {
  const fdsBefore = openFds()
  const childrenBefore = childPids().length
  const rssBefore = await rssMiB()
  const rssSeries = [rssBefore]
  const start = process.hrtime.bigint()
  await run(done => {
    if (done % Math.ceil(count / 10) === 0) rssSeries.push(process.memoryUsage.rss() / MiB)
  })
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  await settle(childrenBefore)
  const rssAfter = await rssMiB()
  const fdsAfter = openFds()
  const figures = {
    name, count, seconds, perSecond: count / seconds,
    fdsBefore: fdsBefore.length, fdsAfter: fdsAfter.length, sameFds: JSON.stringify(fdsBefore) === JSON.stringify(fdsAfter),
    childrenBefore, childrenAfter: childPids().length,
    rssBefore, rssAfter, rssPeak: Math.max(...rssSeries, rssAfter),
  }
  console.log(`soak: ${name}: ${count} spawns in ${seconds.toFixed(1)} s (${figures.perSecond.toFixed(0)}/s); fds ${figures.fdsBefore} -> ${figures.fdsAfter}` +
    `${figures.sameFds ? ' (the same fds)' : ' (DIFFERENT fds)'}; children ${childrenBefore} -> ${figures.childrenAfter}; ` +
    `RSS ${rssBefore.toFixed(1)} -> ${rssAfter.toFixed(1)} MiB (peak ${figures.rssPeak.toFixed(1)}; after GC; during: ${rssSeries.map(v => v.toFixed(0)).join(' ')})`)
  return figures
}

/** `count` async spawns, `IN_FLIGHT` at a time, cycling through ASYNC_KINDS. */
async function asyncWorkload(count, progress = () => {}) {
  let next = 0
  let done = 0
  let inFlight = 0
  let maxInFlight = 0
  const worker = async () => {
    while (next < count) {
      const kind = ASYNC_KINDS[next++ % ASYNC_KINDS.length]
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      const r = await asyncRun(kind)
      inFlight--
      check(kind, r)
      progress(++done)
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  if (maxInFlight !== Math.min(IN_FLIGHT, count)) console.error(`soak: only ${maxInFlight} in flight`)
}

// Warm up to the steady state before the baseline: the addon, the signal table, the reaper thread
// and its pipe, V8's code for the paths taken, at the concurrency the async phase runs at.
const rssAtStart = process.memoryUsage.rss() / MiB
const WARM_ASYNC = Math.max(1000, Math.ceil(ASYNC / 10))
for (let i = 0; i < 3; i++) for (const kind of KINDS) check(kind, spawnChildSync(kind[1]))
await asyncWorkload(WARM_ASYNC)
await settle(0)
const rssWarm = await rssMiB()
console.log(`soak: RSS ${rssAtStart.toFixed(1)} MiB at start, ${rssWarm.toFixed(1)} MiB after the warm-up (${3 * KINDS.length} sync, ${WARM_ASYNC} async spawns)`)
tally.clear()

const startedAt = new Date()
const syncFigures = await phase(`sequential (spawnChildSync)`, SYNC, async progress => {
  for (let i = 0; i < SYNC; i++) {
    const kind = KINDS[i % KINDS.length]
    check(kind, spawnChildSync(kind[1]))
    progress(i + 1)
  }
})
const asyncFigures = await phase(`async (spawnChild, ${IN_FLIGHT} in flight)`, ASYNC, progress => asyncWorkload(ASYNC, progress))
fs.rmSync(work, { recursive: true, force: true })

const problems = []
if (failures) problems.push(`${failures} results were not what their kind must give`)
for (const f of [syncFigures, asyncFigures]) {
  if (!f.sameFds) problems.push(`${f.name}: open fds changed (${f.fdsBefore} -> ${f.fdsAfter})`)
  if (f.childrenAfter !== f.childrenBefore) problems.push(`${f.name}: children ${f.childrenBefore} -> ${f.childrenAfter}`)
  if (!UNDER_ASAN && f.rssAfter - f.rssBefore > RSS_LIMIT_MIB) problems.push(`${f.name}: RSS grew ${(f.rssAfter - f.rssBefore).toFixed(1)} MiB (limit ${RSS_LIMIT_MIB})`)
}
const outcomes = [...tally].map(([name, n]) => `${name} ${n}`).join(', ')
console.log(`soak: outcomes: ${outcomes}`)

if (flag('--results')) writeResults()
if (problems.length) {
  for (const p of problems) console.error(`soak: FAILED: ${p}`)
  process.exit(1)
}
console.log(`soak: passed${UNDER_ASAN ? ' (RSS not judged under AddressSanitizer)' : ''}`)

function writeResults() {
  const file = RESULTS_FILE
  const row = f => `| ${f.name} | ${f.count.toLocaleString('en-US')} | ${f.seconds.toFixed(1)} s (${f.perSecond.toFixed(0)}/s) | ` +
    `${f.fdsBefore} → ${f.fdsAfter}${f.sameFds ? ' (same fds)' : ' (**changed**)'} | ${f.childrenBefore} → ${f.childrenAfter} | ` +
    `${f.rssBefore.toFixed(1)} → ${f.rssAfter.toFixed(1)} MiB (${f.rssAfter - f.rssBefore >= 0 ? '+' : ''}${(f.rssAfter - f.rssBefore).toFixed(1)}; peak between GCs ${f.rssPeak.toFixed(1)}) |`
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  const section = [
    '## Soak',
    '',
    `**Machine:** ${os.cpus().length} cores (${cpu}), Linux ${os.release()}, Node ${process.version}, ${startedAt.toISOString()}. ` +
      `Generated by \`node scripts/soak.mjs${args.length ? ' ' + args.join(' ') : ''}\` (which runs itself as \`GLIBC_TUNABLES=${TUNABLES} ` +
      `node ${FLAGS.join(' ')}\`: see the script's header).`,
    '',
    `Mixed outcomes, cycled in order, each result checked against what its kind must give (${failures} did not): ${KINDS.map(k => k[0]).join('; ')}; ` +
      `async also: aborted by an AbortSignal; kill(). Fds, children and RSS are read before and after each phase; RSS after a full GC, ` +
      `after a warm-up (the kinds 3 times in sequence, then ${WARM_ASYNC.toLocaleString('en-US')} async spawns ${IN_FLIGHT} at a time; ` +
      `RSS ${rssAtStart.toFixed(1)} MiB at the start of the process, ${rssWarm.toFixed(1)} MiB after it). Pass: the same open fds, no children (no zombies), ` +
      `RSS within ${RSS_LIMIT_MIB} MiB of the phase's start. RSS is made to measure live memory: V8's young generation at its full size ` +
      `from the start (it otherwise grows in steps with the allocation rate), and buffers of 64 KiB and up mapped and unmapped by glibc ` +
      `(64 captures growing to 1 MiB at once otherwise fragment its brk heap, which then keeps the freed memory).`,
    '',
    '| Phase | Spawns | Time | Open fds | Children | RSS (after GC) |',
    '|:---|---:|---:|---:|---:|---:|',
    row(syncFigures),
    row(asyncFigures),
    '',
    `Outcomes: ${outcomes}.`,
    '',
    `Verdict: ${problems.length ? `**FAILED**: ${problems.join('; ')}` : '**passed**'}.`,
    '',
  ].join('\n')
  writeSection(file, 'Soak', section)
  console.log(`soak: wrote the "## Soak" section of ${path.relative(ROOT, file)}`)
}
