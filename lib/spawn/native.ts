// Loads the addon: a prebuild from prebuilds/ when one matches, else the build/Release output of
// node-gyp or cmake-js (node-gyp-build decides). TILEHARNESS_ADDON names an addon file to load
// instead (scripts/check-asan.sh points it at the sanitized build in build-asan/), and the
// measuring helper is then taken from that file's directory.
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface NativeStdio { kind: number; fd?: number; path?: string; append?: boolean }

/** The spec as native/spec.cc reads it: every decision made (normalize.ts), only values left. */
export interface NativeSpec {
  /** The program exec'd: the target, or the measuring helper when `measure`. */
  file: string
  argv: string[]
  /** The child's whole environment; null: this process's, copied by the addon under Node's lock. */
  env: string[] | null
  cwd: string | null
  stdio: [NativeStdio, NativeStdio, NativeStdio]
  /** Extra fds: [child fd, this process's fd], ascending by child fd (each 3..1023). */
  fds: Array<[number, number]>
  /** measure: the child fd the helper reports on (3, or moved off the `fds` targets; the helper's -R). */
  reportFd: number
  /** A new terminal of [columns, rows] on fds 0-2 (every stdio kind 'terminal'); null: none. */
  terminal: [number, number] | null
  /** The child takes the terminal as its controlling one (fork path); measured, the helper's -t does it for the target. */
  controllingTerminal: boolean
  setsid: boolean
  deathSignal: boolean
  rlimits: Array<[number, number, number]>
  /** The child's uid, gid and umask; -1: not changed. */
  uid: number
  gid: number
  umask: number
  /** The supplementary groups; null: not given (cleared where allowed when uid or gid is). */
  groups: number[] | null
  /** -1: the parent's process group; 0: a new group the child leads; else the group it joins. */
  processGroup: number
  /** The CPUs the child is pinned to; empty: inherited. */
  cpus: number[]
  launcher: number
  timeout: number
  killSignal: number
  forceKillAfterDelay: number
  graceTimeout: number
  maxBuffer: number
  /** `file` is the measuring helper; the child gets its report pipe. */
  measure: boolean
  /** Signals go to the child's process group (setsid or a new group: the child's, or with measure the target's). */
  group: boolean
  /** ms the pipes are read on after the exit, while a grandchild holds them. */
  waitDelay: number
}

export interface NativeChildHandle {
  kill(signal: number): boolean
  /** The stream's reader wants more: read its pipe again (backpressure released). */
  resume(stream: 1 | 2): void
  /** A terminal's input: 1, all written; 0, the rest is written as the terminal takes it, then
   * spawnAsync's onWritable() is called; -1, not written (no terminal, or it is gone). */
  write(bytes: Buffer): 1 | 0 | -1
  /** A terminal's new size (TIOCSWINSZ; SIGWINCH to its foreground group); false once the child exited. */
  resize(columns: number, rows: number): boolean
  /** 0 until the child exists (its { path } targets are opened first). */
  readonly pid: number
}

/** A run's captured output: [stdout, stderr], or null when nothing was captured. */
export type NativeBuffers = [Buffer, Buffer] | null

/** null: running, and no handle was asked for (wantHandle false). */
export type SpawnAsyncOutcome =
  | { numbers: Float64Array; buffers: NativeBuffers }
  | { handle: NativeChildHandle }
  | null

export interface NativeAddon {
  /** Runs to completion; writes the run's numbers into `numbers` (layout.slots, then layout.rusage; decoded by result.ts).
   * Both calls take the spec with its numeric facts beside it, laid out by specNumbers(spec). */
  spawnSync(spec: NativeSpec, specNumbers: Float64Array, input: ArrayBufferView | null, numbers: Float64Array): NativeBuffers
  /** onDone's numbers (and a failed launch's) are the environment's one result array: read them at once, the next result overwrites them. */
  spawnAsync(
    spec: NativeSpec, specNumbers: Float64Array, input: ArrayBufferView | null, onDone: (numbers: Float64Array, buffers: NativeBuffers) => void,
    onData: ((stream: 1 | 2, chunk: Buffer) => boolean) | null,
    /** A stdin pipe with no input: given the pipe's write end once the child runs, and take(),
     * which JS calls the moment it owns the fd (then JS closes it); not taken, the addon closes it. */
    onStdin?: ((fd: number, take: () => boolean) => boolean) | null,
    /** A terminal: a handle.write() that returned 0 has all been written. */
    onWritable?: (() => void) | null,
    /** false: nothing will kill, resume, write to or ask the pid of this child; no handle is made (default true). */
    wantHandle?: boolean,
  ): SpawnAsyncOutcome
  /** native/boundary.h's lists, by name, in their order. */
  layout: {
    slots: string[]; rusage: string[]; stdioKinds: string[]; launchers: string[]; stages: string[]; rusageSources: string[]
    specNumbers: string[]; specOptionals: string[]; length: number
  }
  /** Whether the addon copies the inherited environment under Node's own lock (native/environ.h). */
  envLock: boolean
  errnoInfo(errno: number): [string, string]
  /** A close-on-exec memfd holding `bytes` (native/anonymous-file.cc); throws with the errno's name as `code`. */
  anonymousFile(name: string, bytes: Uint8Array): number
  /** Every extended attribute of `from` (a POSIX ACL among them) set on `toFd` (native/file-attrs.cc); the names it could not copy. */
  copyExtendedAttributes(from: string, toFd: number): string[]
  signals: Array<[number, string, string]>
  rlimits: Record<string, number>
  /** glibc's CPU_SETSIZE: every CPU number in `cpus` is below it. */
  cpuSetSize: number
}

const require = createRequire(import.meta.url)
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const load = require('node-gyp-build') as ((dir: string) => NativeAddon) & { resolve(dir: string): string }

const override = process.env.TILEHARNESS_ADDON
const addonPath = override ? path.resolve(override) : load.resolve(packageRoot)

export const native: NativeAddon = override ? (require(addonPath) as NativeAddon) : load(packageRoot)
// Another package's addon (a bundle whose package root resolves elsewhere, or TILEHARNESS_ADDON
// pointing at one) declares no boundary at all.
if (typeof native?.layout !== 'object' || native.layout === null) {
  throw new Error(`tileharness: ${addonPath} is not tileharness's addon (it declares no layout): rebuild it, or check TILEHARNESS_ADDON`)
}

// The numbering of the boundary, built from the names the addon declares (native/boundary.h):
// each name this side uses must be there, or the load fails here rather than decoding wrongly.
function numbering<const N extends string>(list: string, names: readonly N[]): Record<N, number> {
  const declared = native.layout[list as keyof NativeAddon['layout']] as string[] | undefined
  if (!Array.isArray(declared)) throw new Error(`tileharness: the addon (${addonPath}) declares no ${list}: rebuild it`)
  const out = {} as Record<N, number>
  for (const name of names) {
    const index = declared.indexOf(name)
    if (index < 0) throw new Error(`tileharness: the addon (${addonPath}) declares no ${list} '${name}': rebuild it`)
    out[name] = index
  }
  if (declared.length !== names.length) throw new Error(`tileharness: the addon (${addonPath}) declares ${declared.length} ${list}, this package ${names.length}: rebuild it`)
  return out
}

/** Where each fact of a run sits in its numbers. */
export const RAW = numbering('slots', [
  'pid', 'fork', 'status', 'timedOut', 'wouldntDie', 'stage', 'errnum', 'detail', 'stdoutTruncated', 'stderrTruncated', 'durationMs',
  'rusageSource', 'waitDelayExpired',
] as const)
/** Where each rusage field sits in a run's numbers (after the slots). */
export const RUSAGE = Object.fromEntries(Object.entries(numbering('rusage', [
  'userCPUTime', 'systemCPUTime', 'maxRSS', 'sharedMemorySize', 'unsharedDataSize', 'unsharedStackSize', 'minorPageFault',
  'majorPageFault', 'swappedOut', 'fsRead', 'fsWrite', 'ipcSent', 'ipcReceived', 'signalsCount', 'voluntaryContextSwitches',
  'involuntaryContextSwitches',
] as const)).map(([name, index]) => [name, native.layout.slots.length + index])) as Record<keyof ResourceUsageFields, number>
type ResourceUsageFields = import('./types.js').ChildResult['rusage']
/** The stdio kinds, numbered as the addon numbers them. */
export const StdioKind = numbering('stdioKinds', ['inherit', 'ignore', 'closed', 'fd', 'path', 'pipe', 'mergeStdout', 'terminal'] as const)
/** The launch paths, numbered as the addon numbers them. */
export const LauncherChoice = numbering('launchers', ['auto', 'posix_spawn', 'fork'] as const)
/** Stage names by number. */
export const STAGES = native.layout.stages
/** Whose figures a result's rusage holds, by number. */
export const RUSAGE_SOURCES = native.layout.rusageSources as Array<'wait4' | 'helper' | 'unavailable'>

/** Where each numeric fact of a spec sits in the numbers that cross beside it (native/boundary.h's TH_SPEC_NUMBERS). */
const SPEC = numbering('specNumbers', [
  'reportFd', 'controllingTerminal', 'setsid', 'deathSignal', 'uid', 'gid', 'umask', 'processGroup', 'launcher', 'timeout',
  'killSignal', 'forceKillAfterDelay', 'graceTimeout', 'waitDelay', 'maxBuffer', 'measure', 'group', 'stdin', 'stdout', 'stderr', 'given',
] as const)
/** The bit of `given` for each optional field (native/boundary.h's TH_SPEC_OPTIONALS). */
const GIVEN = Object.fromEntries(Object.entries(numbering('specOptionals', ['cwd', 'fds', 'terminal', 'rlimits', 'groups', 'cpus'] as const))
  .map(([name, index]) => [name, 1 << index])) as Record<'cwd' | 'fds' | 'terminal' | 'rlimits' | 'groups' | 'cpus', number>
let specSlots = new Float64Array(native.layout.specNumbers.length)

function refused(message: string): TypeError {
  return Object.assign(new TypeError(`native spec: ${message}`), { code: 'ERR_INVALID_ARG_TYPE' })
}

function num(field: string, value: unknown): number {
  if (typeof value !== 'number') throw refused(`${field} must be a number`)
  return value
}

/** The stdio entries, checked once: three objects (each kind a number; the addon checks its range). */
function stdioEntries(stdio: unknown): [NativeStdio, NativeStdio, NativeStdio] {
  if (!Array.isArray(stdio) || stdio.length !== 3) throw refused('stdio must be an array of 3')
  for (const entry of stdio as unknown[]) if (entry === null || typeof entry !== 'object') throw refused('stdio entries must be objects')
  return stdio as [NativeStdio, NativeStdio, NativeStdio]
}

/** Unless null or an empty array: the addon reads only the optional fields given. */
const isGiven = (value: unknown) => value !== null && !(Array.isArray(value) && value.length === 0)

/**
 * The spec's numeric facts, laid out for the addon, which reads them from memory by slot instead
 * of looking each up by name (native/spec.cc). One array serves every call: it is filled here and
 * read by the addon before any other JavaScript runs. Every field is read before any slot is
 * written, so that a getter (normalize.ts makes none) cannot leave another spec's numbers behind.
 */
export function specNumbers(spec: NativeSpec): Float64Array {
  const reportFd = num('reportFd', spec.reportFd), uid = num('uid', spec.uid), gid = num('gid', spec.gid)
  const umask = num('umask', spec.umask), processGroup = num('processGroup', spec.processGroup)
  const launcher = num('launcher', spec.launcher), timeout = num('timeout', spec.timeout)
  const killSignal = num('killSignal', spec.killSignal), forceKillAfterDelay = num('forceKillAfterDelay', spec.forceKillAfterDelay)
  const graceTimeout = num('graceTimeout', spec.graceTimeout), waitDelay = num('waitDelay', spec.waitDelay)
  const maxBuffer = num('maxBuffer', spec.maxBuffer)
  const controllingTerminal = spec.controllingTerminal ? 1 : 0, setsid = spec.setsid ? 1 : 0, deathSignal = spec.deathSignal ? 1 : 0
  const measure = spec.measure ? 1 : 0, group = spec.group ? 1 : 0
  const stdio = stdioEntries(spec.stdio)
  const stdin = num('kind', stdio[0].kind), stdout = num('kind', stdio[1].kind), stderr = num('kind', stdio[2].kind)
  const given = (isGiven(spec.cwd) ? GIVEN.cwd : 0) | (isGiven(spec.fds) ? GIVEN.fds : 0) | (isGiven(spec.terminal) ? GIVEN.terminal : 0) |
    (isGiven(spec.rlimits) ? GIVEN.rlimits : 0) | (isGiven(spec.groups) ? GIVEN.groups : 0) | (isGiven(spec.cpus) ? GIVEN.cpus : 0)
  // Detached (its buffer transferred away by whoever held what this returned): a new one.
  if (specSlots.length === 0) specSlots = new Float64Array(native.layout.specNumbers.length)
  const n = specSlots
  n[SPEC.reportFd] = reportFd
  n[SPEC.uid] = uid
  n[SPEC.gid] = gid
  n[SPEC.umask] = umask
  n[SPEC.processGroup] = processGroup
  n[SPEC.launcher] = launcher
  n[SPEC.timeout] = timeout
  n[SPEC.killSignal] = killSignal
  n[SPEC.forceKillAfterDelay] = forceKillAfterDelay
  n[SPEC.graceTimeout] = graceTimeout
  n[SPEC.waitDelay] = waitDelay
  n[SPEC.maxBuffer] = maxBuffer
  n[SPEC.controllingTerminal] = controllingTerminal
  n[SPEC.setsid] = setsid
  n[SPEC.deathSignal] = deathSignal
  n[SPEC.measure] = measure
  n[SPEC.group] = group
  n[SPEC.stdin] = stdin
  n[SPEC.stdout] = stdout
  n[SPEC.stderr] = stderr
  n[SPEC.given] = given
  return n
}

/** A typed array to receive one run's numbers. */
export function rawNumbers(): Float64Array {
  return new Float64Array(native.layout.length)
}

/** The measuring helper executable (native/exec-helper.c), built and shipped beside the addon. */
export const helperPath = path.join(path.dirname(addonPath), 'tileharness-exec')
