// Fuzzing ChildSpec validation end to end: random specs, most fields plausible, some junk,
// through spawnChildSync, spawnChild and startChild (+ kill). The only outcomes allowed are a
// typed validation error (TypeError/RangeError with the harness's codes) or a well-formed
// ChildResult; never a crash, a hang, another exception, a leaked fd or a leftover child.
//
// Safety: every program the fuzzer can run is silent and ends by itself within ~50 ms (the
// fuzzer never makes up a program name or a `sleep` argument); every relative path lands in a
// private temp directory, which is also the test's cwd, so core files and redirect targets go
// there and are removed with it.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { startChild, spawnChild, spawnChildSync, type ChildResult, type ChildSpec } from '../../lib/index.js'
import { childPids, eventually, openFds, startReaper, tempDir } from '../helpers.js'
import { fuzz } from './budget.js'

const work = tempDir(t, 'tileharness-fuzz-spec-')
const home = process.cwd()
process.chdir(work)
t.teardown(() => process.chdir(home))

const noExec = path.join(work, 'no-exec')
fs.writeFileSync(noExec, '#!/bin/sh\n', { mode: 0o644 })
const inputFile = path.join(work, 'input')
fs.writeFileSync(inputFile, 'input\n')
const heldFd = fs.openSync(inputFile, 'r')
t.teardown(() => fs.closeSync(heldFd))

interface Program { file: string; args: string[]; extraArgs: boolean }
const SLEEPER: Program = { file: 'sleep', args: ['0.05'], extraArgs: false }
const PROGRAMS: Program[] = [
  { file: '/bin/true', args: [], extraArgs: true },
  { file: 'true', args: [], extraArgs: true },
  { file: '/bin/false', args: [], extraArgs: true },
  { file: 'sh', args: ['-c', 'exit 3'], extraArgs: true },
  { file: 'sh', args: ['-c', 'kill -TERM $$'], extraArgs: true },
  { file: 'sh', args: ['-c', 'kill -SEGV $$'], extraArgs: true },
  SLEEPER,
  { file: '/nonexistent/th-fuzz', args: [], extraArgs: true },
  { file: 'th-fuzz-no-such-program', args: [], extraArgs: true },
  { file: noExec, args: [], extraArgs: true },
  { file: work, args: [], extraArgs: true }, // a directory: EACCES
]

const HARNESS_CODES = new Set(['ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_OUT_OF_RANGE', 'ERR_UNKNOWN_SIGNAL', 'ERR_INVALID_FD', 'ERR_INCOMPATIBLE_OPTION_PAIR'])
const STAGES = new Set(['exec', 'chdir', 'open', 'dup2', 'setsid', 'rlimit', 'signal', 'pipe', 'fork', 'spawn'])
const CHILD_STAGES = new Set(['exec', 'chdir', 'open', 'dup2', 'setsid', 'rlimit', 'signal'])
const STOP_SIGNALS = new Set(['SIGSTOP', 'STOP', 'SIGTSTP', 'TSTP', 'SIGTTIN', 'SIGTTOU', 19, 20, 21, 22])

/** Junk that is never a string (a made-up string could name a real program or path). */
const junk = fc.anything({ maxDepth: 1 }).filter(v => typeof v !== 'string')
/** Specs come in two kinds: plausible ones (each field absent, or a value a caller might write:
 * nearly always a valid one) and junky ones (any field may be invalid, or junk of any type). */
let withJunk = false
function field<T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U | unknown> {
  const absent = fc.constant(undefined)
  return withJunk
    ? fc.oneof({ arbitrary: absent, weight: 3 }, { arbitrary: valid, weight: 2 }, { arbitrary: invalid, weight: 1 }, { arbitrary: junk, weight: 1 })
    : fc.oneof({ arbitrary: absent, weight: 60 }, { arbitrary: valid, weight: 40 }, { arbitrary: invalid, weight: 1 })
}

/** undefined, except once in `oneIn` runs. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number) => fc.oneof({ arbitrary: fc.constant(undefined), weight: oneIn - 1 }, { arbitrary, weight: 1 })
const text = fc.string({ maxLength: 12 }).filter(s => !s.includes('\0'))
const nulText = fc.string({ maxLength: 12 }).map(s => `${s}\0`)
const signal = fc.oneof(
  fc.constantFrom('SIGTERM', 'TERM', 'SIGKILL', 'SIGINT', 'SIGUSR1', 'SIGQUIT', 'SIGALRM', 'SIGCHLD', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGWINCH', 'SIGRTMIN+1', 'SIGTTIN'),
  fc.integer({ min: 1, max: 64 }).filter(n => n !== 32 && n !== 33),
)
const badSignal = fc.constantFrom('SIGFOO', 'sigterm', '', 0, -1, 65, 1.5, NaN)
const ms = fc.nat({ max: 60 })
const badMs = fc.constantFrom(-1, NaN, Infinity, -Infinity)
const fd = fc.constantFrom(heldFd, 0, 1, 2)
const badFd = fc.constantFrom(1023, -1, 2 ** 31, 1.5)
const stdin = fc.oneof(fc.constantFrom('ignore', 'closed', 'inherit'), fd, fc.constantFrom({ path: inputFile }, { path: 'missing' }))
const badStdin = fc.oneof(fc.constantFrom('pipe', 'stdout', { path: '' }, { path: inputFile, append: true }, { path: 'a\0' }), badFd)
const output = fc.oneof(fc.constantFrom('pipe', 'pipe', 'ignore', 'inherit', 'closed'), fd,
  fc.record({ path: fc.constantFrom('out', 'sub/out', 'input'), append: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: ['path'] }))
// fds: a held file, and this process's 0-2, at child fds 3 and up; junk: keys 0-2, 1024 or not a
// number, a closed fd, a pipe by name, an array.
const fds = fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom('3', '4', '7', '1023'), fd, { minKeys: 1, maxKeys: 3 }))
const badFds = fc.constantFrom({ 2: heldFd }, { 1024: heldFd }, { a: heldFd }, { '03': heldFd }, { 3: 987654 }, { 3: 'pipe' }, { 3: -1 }, [heldFd], 3)
const badOutput = fc.oneof(fc.constantFrom('bogus', { path: '' }, { path: 'out', append: 1 }, { path: 'out', mode: 0o600 }), badFd)
const limitValue = fc.oneof(fc.nat({ max: 4096 }), fc.constantFrom('unlimited' as const))
const limit = fc.oneof(limitValue, fc.record({ soft: fc.nat({ max: 4096 }), hard: fc.oneof(fc.integer({ min: 4096, max: 8192 }), fc.constant('unlimited')) }))
const rlimitNames = fc.constantFrom('as', 'core', 'cpu', 'data', 'fsize', 'nofile', 'nproc', 'stack', 'nice', 'sigpending', 'memlock', 'rtprio')
const rlimits = fc.dictionary(rlimitNames, limit, { maxKeys: 3 })
const badRlimits = fc.oneof(
  fc.dictionary(fc.constantFrom('files', 'toString', '__proto__'), limit, { minKeys: 1, maxKeys: 1 }),
  fc.dictionary(rlimitNames, fc.constantFrom(-1, 1.5, 2 ** 60, 'infinity', { soft: 10, hard: 5 }, { soft: 'unlimited', hard: 5 }), { minKeys: 1, maxKeys: 1 }),
)
const env = fc.oneof(
  fc.dictionary(fc.oneof(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/), text.filter(k => k !== '' && !k.includes('='))), fc.oneof(text, fc.constant(undefined)), { maxKeys: 4 }),
  fc.constant({ PATH: process.env.PATH }),
)
const badEnv = fc.constantFrom({ 'A=B': 'x' }, { '': 'x' }, { A: 'x\0' }, { A: 1 }, ['A=1'])
const input = fc.oneof(text, fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 3 }).map(n => Buffer.alloc(n * 100_000, 0x61)))

const specFields = () => fc.record({
  junky: fc.constant(withJunk),
  program: fc.oneof(fc.constantFrom(...PROGRAMS), fc.constant(SLEEPER)),  // the one that can time out, twice as often
  extraArgs: fc.array(withJunk ? fc.oneof({ arbitrary: text, weight: 5 }, nulText) : text, { maxLength: 3 }),
  argsJunk: withJunk ? rarely(fc.oneof(junk, fc.array(junk, { minLength: 1, maxLength: 2 })), 5) : fc.constant(undefined),
  fileJunk: withJunk ? rarely(fc.oneof(junk, fc.constantFrom('', 'true\0')), 5) : fc.constant(undefined),
  argv0: field(text, nulText),
  env: field(env, badEnv),
  cwd: field(fc.constantFrom(work, '.', 'missing-dir', inputFile), fc.constantFrom('', 'a\0')),
  stdin: field(stdin, badStdin),
  input: field(input, fc.constantFrom([1, 2], 42)),
  stdout: field(output, badOutput),
  stderr: field(fc.oneof(output, fc.constant('stdout')), badOutput),
  fds: field(fds, badFds),
  timeout: field(ms, badMs),
  killSignal: field(signal, badSignal),
  forceKillAfterDelay: field(ms, badMs),
  graceTimeout: field(ms, badMs),
  setsid: field(fc.boolean(), fc.constantFrom(1, 'yes')),
  rlimits: field(rlimits, badRlimits),
  // This process's own ids: changing them for real is credentials.test.ts's.
  uid: field(fc.constant(process.getuid!()), fc.constantFrom(-1, 2 ** 32 - 1, '0')),
  gid: field(fc.constant(process.getgid!()), fc.constantFrom(1.5, 'root')),
  groups: field(fc.constant(process.getgroups!()), fc.constantFrom(5, [-1], ['wheel'])),
  umask: field(fc.constantFrom(0, 0o022, 0o077), fc.constantFrom(-1, 0o1000, '022')),
  processGroup: field(fc.constantFrom(true, false, 0), fc.constantFrom(-1, 'new', 1.5)),
  cpus: field(fc.constant([0]), fc.constantFrom([], [-1], [1024], 0)),
  maxBuffer: field(fc.oneof(fc.nat({ max: 200_000 }), fc.constant(Infinity)), fc.constantFrom(-1, 1.5, NaN)),
  launcher: field(fc.constantFrom('auto', 'posix_spawn', 'fork'), fc.constantFrom('vfork', '')),
  killOnExit: field(fc.boolean(), fc.constant(0)),
  measure: field(fc.boolean(), fc.constant('true')),
  signal: field(fc.constantFrom('aborted', 'live'), fc.constant('not a signal')),
  unknownKey: withJunk ? rarely(fc.constantFrom('shell', 'stdio', 'detached', '__proto__x'), 5) : fc.constant(undefined),
  kill: fc.oneof({ arbitrary: fc.constant(null), weight: 2 }, signal, fc.constant(undefined), ...(withJunk ? [badSignal] : [])),
})
const plausibleSpec = specFields()
withJunk = true
const junkySpec = specFields()
const specArbitrary = fc.oneof({ arbitrary: plausibleSpec, weight: 3 }, { arbitrary: junkySpec, weight: 1 })
type Generated = typeof plausibleSpec extends fc.Arbitrary<infer G> ? G : never

function buildSpec(g: Generated, api: 'sync' | 'async'): ChildSpec {
  const spec: Record<string, unknown> = {
    file: g.fileJunk ?? g.program.file,
    args: g.argsJunk ?? [...g.program.args, ...(g.program.extraArgs ? g.extraArgs : [])],
  }
  for (const key of ['argv0', 'env', 'cwd', 'stdin', 'input', 'stdout', 'stderr', 'fds', 'timeout', 'killSignal', 'forceKillAfterDelay',
    'graceTimeout', 'setsid', 'rlimits', 'maxBuffer', 'launcher', 'killOnExit', 'measure', 'uid', 'gid', 'groups', 'umask',
    'processGroup', 'cpus'] as const) {
    if (g[key] !== undefined) spec[key] = g[key]
  }
  // A plausible caller gives input or stdin; posix_spawn with rlimits (or ids, umask, cpus), or
  // setsid with a process group, is the caller's mistake.
  if (!g.junky && spec.input !== undefined) delete spec.stdin
  if (!g.junky && spec.launcher === 'posix_spawn') for (const key of ['rlimits', 'uid', 'gid', 'groups', 'umask', 'cpus']) delete spec[key]
  if (!g.junky && spec.setsid === true) delete spec.processGroup
  if (api === 'sync' && !g.junky) g.signal = undefined  // spawnChildSync takes no AbortSignal
  if (g.signal === 'aborted') spec.signal = AbortSignal.abort()
  else if (g.signal === 'live') spec.signal = new AbortController().signal
  else if (g.signal !== undefined) spec.signal = g.signal
  if (g.unknownKey !== undefined) spec[g.unknownKey] = true
  // A stop signal at the deadline leaves the child stopped until the grace period ends: keep
  // that period short rather than the default 5 s (the path itself is what we want covered).
  // So does a huge forceKillAfterDelay, which postpones the SIGKILL (as the caller asked).
  // An abort or kill() with a stop signal and no escalation (absent, or 0) would leave it stopped
  // for good, as the caller asked: the result would never come.
  if (STOP_SIGNALS.has(spec.killSignal as string)) {
    if (spec.graceTimeout === undefined) spec.graceTimeout = 50
    const delay = spec.forceKillAfterDelay
    if (typeof delay !== 'number' || delay === 0 || delay > 60) spec.forceKillAfterDelay = 50
  }
  return spec as unknown as ChildSpec
}

const fdLinks = (fds: string[]) => fds.map(fd => { try { return `${fd} ${fs.readlinkSync(`/proc/self/fd/${fd}`)}` } catch { return fd } })

function describeProcess(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return `${stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`
  } catch {
    return 'gone'
  }
}

function isTypedError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code
  return (e instanceof TypeError || e instanceof RangeError) && HARNESS_CODES.has(code as string)
}

/** Throws unless r is a well-formed, self-consistent ChildResult for spec. */
function checkResult(r: ChildResult, spec: ChildSpec): void {
  const problems: string[] = []
  const expect = (ok: boolean, what: string) => { if (!ok) problems.push(what) }
  expect(Number.isInteger(r.pid) && r.pid >= 0, 'pid')
  expect(r.launcher === 'posix_spawn' || r.launcher === 'fork', 'launcher')
  expect(r.exitCode === null || (Number.isInteger(r.exitCode) && r.exitCode >= 0 && r.exitCode <= 255), 'exitCode range')
  expect(r.signal === null || /^SIG[A-Z0-9+]+$/.test(r.signal), 'signal name')
  expect(!(r.exitCode !== null && r.signal !== null), 'exitCode and signal both set')
  expect(typeof r.timedOut === 'boolean' && typeof r.aborted === 'boolean' && typeof r.coreDumped === 'boolean', 'flags')
  expect(typeof r.diagnostic === 'string', 'diagnostic')
  if (r.spawnError !== null) {
    const e = r.spawnError
    expect(STAGES.has(e.stage) && /^E[A-Z0-9]+$/.test(e.code) && Number.isInteger(e.errno) && e.errno > 0 && e.message.length > 0, 'spawnError shape')
    // A { path } open given up (deadline, abort, kill()) started no child: no exit code.
    const givenUp = e.stage === 'open' && (e.code === 'ETIMEDOUT' || e.code === 'ECANCELED')
    if (givenUp) expect(r.exitCode === null && r.pid === 0, `an open given up has no child (${r.exitCode})`)
    else if (CHILD_STAGES.has(e.stage)) expect(r.exitCode === 126 || r.exitCode === 127, `child-stage failure ${e.stage} has exit code ${r.exitCode}`)
    expect(r.diagnostic !== '', 'a spawn error has a diagnostic')
  } else if (r.exitCode === null && r.signal === null) {
    expect(r.diagnostic === "Child timed out but wouldn't die", `no status without a reason (${r.diagnostic})`)
  }
  if (r.diagnostic === "Child timed out but wouldn't die") expect(r.timedOut, "wouldn't die implies timedOut")
  expect(Buffer.isBuffer(r.stdout) && Buffer.isBuffer(r.stderr), 'buffers')
  const maxBuffer = typeof spec.maxBuffer === 'number' ? spec.maxBuffer : Infinity
  expect(r.stdout.length <= maxBuffer && r.stderr.length <= maxBuffer, 'maxBuffer respected')
  // Figures that could not be had honestly (a measured child whose helper was killed first) are
  // NaN and say so; every other figure is a count or a time.
  if (r.rusageSource === 'unavailable') expect(Object.values(r.rusage).every(v => Number.isNaN(v)), 'unavailable rusage is NaN')
  else expect(Object.values(r.rusage).every(v => Number.isFinite(v) && v >= 0), 'rusage')
  // Only a measured child's figures come from the helper; an unmeasured child that ran has wait4's;
  // a start that failed has wait4's when this process reaped the child, and none when there was
  // no child or glibc reaped it (posix_spawn).
  const sources = spec.measure === true || r.diagnostic === "Child timed out but wouldn't die" ? ['wait4', 'helper', 'unavailable']
    : r.spawnError !== null ? ['wait4', 'unavailable'] : ['wait4']
  expect(sources.includes(r.rusageSource), 'rusageSource')
  if (spec.measure === true && r.rusageSource === 'wait4') expect(r.spawnError !== null, 'a measured child with wait4 figures never started')
  expect(Number.isFinite(r.durationMs) && r.durationMs >= 0, 'durationMs')
  if (problems.length) throw new Error(`${problems.join('; ')}: ${JSON.stringify({ ...r, stdout: r.stdout.length, stderr: r.stderr.length })}`)
}

/** How the runs ended, so the log shows the fuzzer got past validation. */
const outcomes = new Map<string, number>()
const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1)

const trace = process.env.TILEHARNESS_FUZZ_TRACE
async function attempt(run: () => ChildResult | Promise<ChildResult>, spec: ChildSpec): Promise<void> {
  if (trace) fs.appendFileSync(trace, `${JSON.stringify(spec, (k, v) => (v instanceof Uint8Array ? `<${v.length} bytes>` : typeof v === 'bigint' ? `${v}n` : v))}\n`)
  let r: ChildResult
  try {
    r = await run()
  } catch (e) {
    if (isTypedError(e)) return void count(`threw ${(e as { code: string }).code}`)
    throw e
  }
  checkResult(r, spec)
  if (r.spawnError) count(`spawnError ${r.spawnError.stage} ${r.spawnError.code}`)
  else if (r.timedOut) count(r.exitCode === null && r.signal === null ? "wouldn't die" : 'timed out')
  else if (r.signal) count(`signal ${r.signal}`)
  else count(`exit ${r.exitCode}`)
}

t.test('random specs: a typed error or a well-formed result', async t => {
  // Warm up lazily created state before taking the baseline: the addon, and the reaper.
  spawnChildSync({ file: '/bin/true' })
  await spawnChild({ file: '/bin/true' })
  await startReaper()
  const fdsBefore = openFds()
  const childrenBefore = childPids()

  await fuzz(t, 'spawnChildSync', fc.asyncProperty(specArbitrary, async g => {
    const spec = buildSpec(g, 'sync')
    await attempt(() => spawnChildSync(spec), spec)
  }), 150)

  await fuzz(t, 'spawnChild', fc.asyncProperty(specArbitrary, async g => {
    const spec = buildSpec(g, 'async')
    await attempt(() => spawnChild(spec), spec)
  }), 150)

  await fuzz(t, 'startChild and kill()', fc.asyncProperty(specArbitrary, async g => {
    const spec = buildSpec(g, 'async')
    await attempt(async () => {
      const child = startChild(spec)
      if (g.kill !== null) {
        try {
          child.kill(g.kill as string | number | undefined)
          // A stopped child with no deadline would wait forever: stopped, then continued.
          if (STOP_SIGNALS.has(g.kill as string) || (g.kill === undefined && STOP_SIGNALS.has(spec.killSignal as string))) child.kill('SIGCONT')
        } catch (e) {
          if (!isTypedError(e)) throw e
        }
      }
      return child.result
    }, spec)
  }), 100)

  // The same spec through both launch paths gives the same observable child. Timing-dependent
  // specs (deadlines, aborts) and the fork-only options are left out.
  await fuzz(t, 'posix_spawn and fork agree', fc.asyncProperty(plausibleSpec, async g => {
    const spec = buildSpec(g, 'sync') as ChildSpec & Record<string, unknown>
    for (const key of ['timeout', 'killSignal', 'forceKillAfterDelay', 'graceTimeout', 'rlimits', 'setsid', 'launcher', 'uid', 'gid', 'groups', 'umask', 'cpus']) delete spec[key]
    const observe = (launcher: 'posix_spawn' | 'fork') => {
      let r: ChildResult
      try {
        r = spawnChildSync({ ...spec, launcher })
      } catch (e) {
        if (isTypedError(e)) return `threw ${(e as { code: string }).code}`
        throw e
      }
      return JSON.stringify({
        exitCode: r.exitCode, signal: r.signal, stage: r.spawnError?.stage, code: r.spawnError?.code, diagnostic: r.diagnostic,
        stdout: r.stdout.toString('latin1'), stderr: r.stderr.toString('latin1'),
      })
    }
    const viaSpawn = observe('posix_spawn')
    const viaFork = observe('fork')
    if (viaSpawn !== viaFork) throw new Error(`posix_spawn ${viaSpawn}\nfork        ${viaFork}`)
  }), 150)

  t.comment([...outcomes].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join(', '))
  // Children handed to the reaper (a stop signal at the deadline) go away shortly after.
  t.ok(await eventually(() => JSON.stringify(childPids()) === JSON.stringify(childrenBefore)), 'no children left behind')
  t.same(childPids().map(pid => `${pid} ${describeProcess(pid)}`), childrenBefore.map(pid => `${pid} ${describeProcess(pid)}`))
  t.ok(await eventually(() => JSON.stringify(openFds()) === JSON.stringify(fdsBefore)), 'no fds left behind')
  t.same(fdLinks(openFds()), fdLinks(fdsBefore))
})
