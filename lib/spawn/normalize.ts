// ChildSpec validation and normalization: the one place options are checked and defaulted.
// Everything the native side needs is converted here; the addon trusts this shape.
import { constants as bufferConstants } from 'node:buffer'
import fs from 'node:fs'
import { types } from 'node:util'
import { isMainThread } from 'node:worker_threads'
// Nested option objects and arrays are read by own() and element() (../errors.ts): an inherited
// `path`, `append`, `columns` or `soft`, or an element of Array.prototype, is never read.
import { isAbortSignal } from '../abort.js'
import { MAX_DELAY_MS, badFd, describe, element, incompatible, invalidType, invalidValue, isArray, isRecord, isView, optionKeys, outOfRange, own, ownOptions, requireNoNul, requirePath, unknownOption, viewBytes } from '../errors.js'
import { helperPath, LauncherChoice, native, StdioKind, type NativeSpec, type NativeStdio } from './native.js'
import { REAL_TIME_OFFSETS, isKnownSignal, realTimeSignal, signalNumber } from './status.js'
import type { ChildSpec, RlimitValue } from './types.js'

/** Default bytes kept per captured stream. */
export const DEFAULT_MAX_BUFFER = 100 * 1024 * 1024
/** Default time a killed child gets to be reaped before it is reported as one that wouldn't die. */
export const DEFAULT_GRACE_TIMEOUT = 5000
/**
 * Default time the pipes are read on after the child exits, until EOF, while a grandchild still
 * holds them (Go's WaitDelay): long enough for what such a process writes as it finishes, short
 * enough that a daemon started by the child never holds the call.
 */
export const DEFAULT_WAIT_DELAY = 1000

const SIGKILL = 9

// The measuring helper is looked for once it has been found: not a stat on every measured spawn.
let helperFound = false

/** Every option of a spec: any other field of one is refused. */
const KNOWN_KEYS = optionKeys<ChildSpec>({
  file: true, args: true, argv0: true, env: true, cwd: true, stdin: true, input: true, stdout: true, stderr: true, timeout: true,
  killSignal: true, forceKillAfterDelay: true, graceTimeout: true, waitDelay: true, setsid: true, rlimits: true, maxBuffer: true,
  launcher: true, killOnExit: true, signal: true, measure: true, uid: true, gid: true, groups: true, umask: true, processGroup: true,
  cpus: true, fds: true, terminal: true,
})

export interface NormalizedSpec {
  native: NativeSpec
  /** The caller's bytes as they are: the addon copies them before the call returns. */
  input: ArrayBufferView | null
  killOnExit: boolean
  signal: AbortSignal | null
  /** Kept for messages: what the caller named. */
  file: string
  cwd: string | null
  paths: [string | null, string | null, string | null]
  /** Kept for messages: the ids asked for (null: not given). */
  ids: ChildIds
  /** fds 0-2 are a new terminal: its master is read as stdout (and startChild's `terminal`). */
  terminal: boolean
}

/** The size `terminal: true` gives, a VT100's. */
export const DEFAULT_TERMINAL_SIZE = { columns: 80, rows: 24 } as const
/** The largest terminal side TIOCSWINSZ takes (its fields are unsigned shorts). */
export const MAX_TERMINAL_SIDE = 65535

/** A terminal's side (columns or rows), checked: an integer from 1 to 65535. */
export function terminalSide(field: string, value: unknown): number {
  if (typeof value !== 'number') throw invalidType(field, 'a number', value)
  if (!Number.isInteger(value) || value < 1 || value > MAX_TERMINAL_SIDE) throw outOfRange(field, `an integer from 1 to ${MAX_TERMINAL_SIDE}`, value)
  return value
}

/** `terminal` as [columns, rows], or null for none. */
function terminalSize(value: unknown): [number, number] | null {
  if (value === undefined || value === false) return null
  if (value === true) return [DEFAULT_TERMINAL_SIZE.columns, DEFAULT_TERMINAL_SIZE.rows]
  if (!isRecord(value) || types.isProxy(value)) {
    throw invalidType('terminal', 'true or { columns, rows }', value)
  }
  for (const key of Object.keys(value)) {
    if (key !== 'columns' && key !== 'rows') throw unknownOption(`terminal.${key}`, ['columns', 'rows'])
  }
  return [terminalSide('terminal.columns', own(value, 'columns')), terminalSide('terminal.rows', own(value, 'rows'))]
}

/**
 * What else a terminal decides, refused when asked for otherwise: fds 0-2 are the terminal (so no
 * stdin, stdout or stderr but their defaults), and the child leads a new session (its controlling
 * terminal needs one), so no `setsid: false` and no `processGroup`.
 */
function checkTerminal(spec: ChildSpec): void {
  const defaults = { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' } as const
  for (const field of ['stdin', 'stdout', 'stderr'] as const) {
    if (spec[field] !== undefined && spec[field] !== defaults[field]) {
      throw incompatible('terminal', field, `the terminal is the child's stdin, stdout and stderr (its output is result.stdout; input goes to the terminal)`)
    }
  }
  if (spec.setsid === false) throw incompatible('terminal', 'setsid: false', 'a controlling terminal needs a new session: the child leads one')
  if (spec.processGroup !== undefined && spec.processGroup !== false) {
    throw incompatible('terminal', 'processGroup', 'the child leads a new session, and with it a new process group that every kill reaches')
  }
}

/** VEOF, ^D on a new terminal: at the start of a line, end of file for the child's read. */
const TERMINAL_EOF = 0x04

/** input for a terminal: the bytes, then EOF as a terminal gives it (^D, twice after a partial line). */
function terminalInput(input: ArrayBufferView): Buffer {
  const bytes = Buffer.from(viewBytes(input) ?? new Uint8Array(0))
  const atLineStart = bytes.length === 0 || bytes[bytes.length - 1] === 0x0a
  return Buffer.concat([bytes, Buffer.from(atLineStart ? [TERMINAL_EOF] : [TERMINAL_EOF, TERMINAL_EOF])])
}

/** The child's credentials, umask, process group and CPUs as normalized; null or [] when not given. */
export interface ChildIds {
  uid: number | null
  gid: number | null
  groups: number[] | null
  umask: number | null
  /** 0: a new group the child leads; else the group it joins. */
  processGroup: number | null
  cpus: number[]
}

function cString(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidType(field, 'a string', value)
  if (value.includes('\0')) throw invalidValue(field, 'must not contain NUL bytes')
  return value
}

/** A path given as a string or a file: URL (as Node's own APIs take paths), as a C string. */
function pathString(field: string, value: unknown): string {
  return requireNoNul(field, requirePath(field, value))
}

/** The longest delay a timeout, forceKillAfterDelay or graceTimeout may ask for (../errors.ts). */
export { MAX_DELAY_MS }

function delayMs(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number') throw invalidType(field, 'a number', value)
  if (!Number.isFinite(value) || value < 0 || value > MAX_DELAY_MS) throw outOfRange(field, `a number of ms from 0 to ${MAX_DELAY_MS}`, value)
  return value
}

function fdNumber(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 0x7fffffff) {
    throw outOfRange(field, 'an integer fd from 0 to 2147483647', value)
  }
  try {
    fs.fstatSync(value)
  } catch {
    throw badFd(field, value)
  }
  return value
}

function pathTarget(field: string, value: Record<string, unknown>, output: boolean): NativeStdio {
  const path = cString(`${field}.path`, own(value, 'path'))
  if (path === '') throw invalidValue(`${field}.path`, 'must not be empty')
  const append = own(value, 'append')
  if (output && append !== undefined && typeof append !== 'boolean') {
    throw invalidType(`${field}.append`, 'a boolean', append)
  }
  for (const key of Object.keys(value)) {
    if (key !== 'path' && !(output && key === 'append')) throw unknownOption(`${field}.${key}`)
  }
  return { kind: StdioKind.path, path, append: append === true }
}

function stdinTarget(value: unknown): NativeStdio {
  switch (value) {
    case undefined:
    case 'ignore': return { kind: StdioKind.ignore }
    case 'closed': return { kind: StdioKind.closed }
    case 'inherit': return { kind: StdioKind.inherit }
    // startChild's `stdin` Writable; for the others, a pipe closed at once (the child reads EOF).
    case 'pipe': return { kind: StdioKind.pipe }
  }
  if (typeof value === 'number') return { kind: StdioKind.fd, fd: fdNumber('stdin', value) }
  if (isRecord(value)) {
    return pathTarget('stdin', value as Record<string, unknown>, false)
  }
  throw invalidValue('stdin', `must be 'ignore', 'closed', 'inherit', 'pipe', an fd or { path } (received ${describe(value)})`)
}

function outputTarget(field: 'stdout' | 'stderr', value: unknown): NativeStdio {
  switch (value) {
    case undefined:
    case 'pipe': return { kind: StdioKind.pipe }
    case 'ignore': return { kind: StdioKind.ignore }
    case 'inherit': return { kind: StdioKind.inherit }
    case 'closed': return { kind: StdioKind.closed }
  }
  if (field === 'stderr' && value === 'stdout') return { kind: StdioKind.mergeStdout }
  if (typeof value === 'number') return { kind: StdioKind.fd, fd: fdNumber(field, value) }
  if (isRecord(value)) {
    return pathTarget(field, value as Record<string, unknown>, true)
  }
  const choices = field === 'stderr' ? "'pipe', 'ignore', 'inherit', 'closed', 'stdout'" : "'pipe', 'ignore', 'inherit', 'closed'"
  throw invalidValue(field, `must be ${choices}, an fd or { path, append? } (received ${describe(value)})`)
}

/** The highest child fd `fds` may give: FD_SETSIZE - 1, below any RLIMIT_NOFILE a system starts with. */
export const MAX_EXTRA_FD = 1023

/**
 * `fds` ({ childFd: parentFd }) as [childFd, parentFd] pairs ascending by child fd. Each parent fd
 * is checked open here, as the stdio fds are (one closed after this and before the launch is the
 * child's start failing: stage dup2, EBADF).
 */
function extraFds(value: unknown): Array<[number, number]> {
  if (value === undefined) return []
  if (!isRecord(value) || types.isMap(value) || types.isSet(value) || types.isProxy(value)) {
    throw invalidType('fds', 'an object of child fd to open fd (not an array or Map)', value)
  }
  const out: Array<[number, number]> = []
  for (const [key, fd] of Object.entries(value as Record<string, unknown>)) {
    const field = `fds[${key}]`
    // Only canonical integers ('3', not '03' or '3.0'): a key is a child fd number.
    const target = Number(key)
    if (!/^(0|[1-9][0-9]*)$/.test(key)) throw invalidValue(field, `is not a child fd: keys are fd numbers from 3 to ${MAX_EXTRA_FD}`)
    if (target < 3 || target > MAX_EXTRA_FD) {
      throw outOfRange(field, `a child fd from 3 to ${MAX_EXTRA_FD} (0-2 are stdin, stdout and stderr)`, target)
    }
    if (fd === undefined) continue
    if (typeof fd !== 'number') throw invalidType(field, 'an open fd of this process (a number)', fd)
    out.push([target, fdNumber(field, fd)])
  }
  // Integer keys come out of Object.entries ascending already; sorted anyway, the launcher relies on it.
  return out.sort((a, b) => a[0] - b[0])
}

/** The child fd a measured child's helper reports on: 3, or the first number above 2 that `fds` does not give. */
function reportFdFor(fds: Array<[number, number]>): number {
  let n = 3
  for (const [target] of fds) if (target === n) n++
  return n
}

/**
 * Check a child environment as a spawn does (an object of strings, variable names without '='
 * or NUL, values without NUL), for a caller that takes one to spawn with later: the
 * Program handle checks its env at create.
 */
export function checkEnvironment(value: unknown): void {
  if (value !== undefined) environment(value)
}

function environment(value: unknown): string[] | null {
  if (value === undefined) {
    // The main thread's process.env is the C environment itself: the addon copies it under
    // Node's own lock (native/environ.h), as Node does before it spawns. A worker's process.env is
    // its own copy (or, with SHARE_ENV, changed under that same lock by every reader and writer),
    // so it is converted like a caller's object; so is the main thread's where the addon cannot
    // take the lock.
    return isMainThread && native.envLock ? null : environment({ ...process.env })
  }
  // A Map (or Set) has no own enumerable entries: taken as an object it would silently be an
  // empty environment.
  if (!isRecord(value) || types.isMap(value) || types.isSet(value)) {
    throw invalidType('env', 'an object of strings (not a Map)', value)
  }
  const out: string[] = []
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue
    if (key === '' || key.includes('=') || key.includes('\0')) {
      throw invalidValue(`env[${JSON.stringify(key)}]`, "is not a valid variable name (empty, or contains '=' or NUL)")
    }
    out.push(`${key}=${cString(`env.${key}`, v)}`)
  }
  return out
}

function limitNumber(field: string, value: unknown): number {
  if (value === 'unlimited') return -1
  if (typeof value !== 'number') throw invalidType(field, "a number or 'unlimited'", value)
  if (!Number.isSafeInteger(value) || value < 0) throw outOfRange(field, "an integer >= 0 or 'unlimited'", value)
  return value
}

function resourceLimits(value: unknown): Array<[number, number, number]> {
  if (value === undefined) return []
  // A Map (or Set) has no own enumerable entries: taken as an object it would silently be no limits.
  if (!isRecord(value) || types.isMap(value) || types.isSet(value)) {
    throw invalidType('rlimits', 'an object (not a Map)', value)
  }
  const out: Array<[number, number, number]> = []
  for (const [name, setting] of Object.entries(value as Record<string, RlimitValue | undefined>)) {
    const resource = native.rlimits[name]
    if (resource === undefined || !Object.hasOwn(native.rlimits, name)) {
      throw invalidValue(`rlimits.${name}`, `is not a resource limit (one of ${Object.keys(native.rlimits).join(', ')})`)
    }
    if (setting === undefined) continue
    let soft: number, hard: number
    if (isRecord(setting)) {
      for (const key of Object.keys(setting)) {
        if (key !== 'soft' && key !== 'hard') throw unknownOption(`rlimits.${name}.${key}`, ['soft', 'hard'])
      }
      soft = limitNumber(`rlimits.${name}.soft`, own(setting, 'soft'))
      hard = limitNumber(`rlimits.${name}.hard`, own(setting, 'hard'))
    } else {
      soft = hard = limitNumber(`rlimits.${name}`, setting)
    }
    if (hard !== -1 && (soft === -1 || soft > hard)) {
      throw outOfRange(`rlimits.${name}.soft`, `at most the hard limit ${hard}`, soft === -1 ? 'unlimited' : soft)
    }
    out.push([resource, soft, hard])
  }
  return out
}

/** The largest uid or gid: (uid_t)-1 means "unchanged" to the kernel, so it is not one. */
const MAX_ID = 0xfffffffe
/** NGROUPS_MAX on Linux. */
const MAX_GROUPS = 65536
/** gids per measuring-helper -G argument: 8,192 of at most 11 bytes each, under MAX_ARG_STRLEN. */
const GROUPS_PER_ARGUMENT = 8192

function idNumber(field: string, value: unknown, max = MAX_ID): number {
  if (typeof value !== 'number') throw invalidType(field, 'a number', value)
  if (!Number.isInteger(value) || value < 0 || value > max) throw outOfRange(field, `an integer from 0 to ${max}`, value)
  return value
}

function idList(field: string, value: unknown, max: number, most: number): number[] {
  if (!isArray(value)) throw invalidType(field, 'an array of numbers', value)
  if (value.length > most) throw outOfRange(`${field}.length`, `at most ${most}`, value.length)
  // Every index, a hole as undefined (map would skip it; Array.from would read Array.prototype's).
  const ids: number[] = []
  for (let i = 0; i < value.length; i++) ids.push(idNumber(`${field}[${i}]`, element(value, i), max))
  return ids
}

function childIds(spec: ChildSpec, setsid: boolean): ChildIds {
  const ids: ChildIds = { uid: null, gid: null, groups: null, umask: null, processGroup: null, cpus: [] }
  if (spec.uid !== undefined) ids.uid = idNumber('uid', spec.uid)
  if (spec.gid !== undefined) ids.gid = idNumber('gid', spec.gid)
  if (spec.groups !== undefined) ids.groups = idList('groups', spec.groups, MAX_ID, MAX_GROUPS)
  if (spec.umask !== undefined) ids.umask = idNumber('umask', spec.umask, 0o777)
  const group = spec.processGroup
  if (group !== undefined && group !== false) {
    if (typeof group !== 'boolean' && typeof group !== 'number') throw invalidType('processGroup', 'a boolean or a process group id', group)
    // true and 0 are setpgid's "a new group, led by the child"; a number is a group to join.
    ids.processGroup = group === true ? 0 : idNumber('processGroup', group, 2 ** 31 - 1)
    if (setsid) throw incompatible('processGroup', 'setsid', 'setsid already makes the child lead a new group, in a new session')
  }
  if (spec.cpus !== undefined) {
    ids.cpus = idList('cpus', spec.cpus, native.cpuSetSize - 1, native.cpuSetSize)
    if (ids.cpus.length === 0) throw outOfRange('cpus', 'a non-empty array of CPU numbers', spec.cpus)
  }
  return ids
}

/** What of ids posix_spawn cannot do, by field name (the process group it can). */
function forkOnly(ids: ChildIds): string[] {
  const out: string[] = []
  for (const key of ['uid', 'gid', 'groups', 'umask'] as const) if (ids[key] !== null) out.push(key)
  if (ids.cpus.length > 0) out.push('cpus')
  return out
}

// An AbortSignal, checked by its brand rather than its prototype chain (lib/abort.ts).
function abortSignal(value: unknown): AbortSignal {
  if (!isAbortSignal(value)) throw invalidType('signal', 'an AbortSignal', value)
  return value
}

// The measuring helper's options (native/exec-helper.c): -s, -P PGID, -r RES:SOFT:HARD, -c CPUS,
// -m UMASK, -G GIDS, -g GID, -u UID for the target (-t: its fd 0, a terminal, as its controlling one); -R FD, the report fd when fd 3 is one of
// the target's extra fds (`fds`, which the helper passes on); -p PID, killOnExit: the helper, when started
// by posix_spawn, which cannot give it a death signal, takes one itself, so a SIGKILLed harness
// takes the helper and its target with it.
function helperOptions(setsid: boolean, terminal: boolean, rlimits: Array<[number, number, number]>, ids: ChildIds, killOnExit: boolean, reportFd: number): string[] {
  const out = setsid ? ['-s'] : []
  if (terminal) out.push('-t')
  if (ids.processGroup !== null) out.push('-P', String(ids.processGroup))
  for (const [resource, soft, hard] of rlimits) out.push('-r', `${resource}:${soft}:${hard}`)
  if (ids.cpus.length > 0) out.push('-c', ids.cpus.join(','))
  if (ids.umask !== null) out.push('-m', ids.umask.toString(8))
  // In pieces the helper adds up: 65,536 gids as one string passed the kernel's limit on one
  // argument (128 KiB), and the helper's exec failed with E2BIG, said to be the program's.
  if (ids.groups !== null) {
    if (ids.groups.length === 0) out.push('-G', '')
    for (let i = 0; i < ids.groups.length; i += GROUPS_PER_ARGUMENT) out.push('-G', ids.groups.slice(i, i + GROUPS_PER_ARGUMENT).join(','))
  }
  if (ids.gid !== null) out.push('-g', String(ids.gid))
  if (ids.uid !== null) out.push('-u', String(ids.uid))
  if (killOnExit) out.push('-p', String(process.pid))
  if (reportFd !== 3) out.push('-R', String(reportFd))
  return out
}

/**
 * A signal given by name ('SIGTERM', 'TERM', 'SIGRTMIN+3', 'SIGRTMAX-1') or number, as its number.
 * A real-time offset past SIGRTMAX - SIGRTMIN is out of range; any other unknown name is no signal.
 */
export function normalizeSignal(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value === 'number') {
    if (!isKnownSignal(value)) throw outOfRange(field, 'a known signal number', value)
    return value
  }
  if (typeof value !== 'string') throw invalidType(field, 'a signal name or number', value)
  const num = signalNumber(value)
  if (num !== undefined) return num
  if (realTimeSignal(value) === null) throw outOfRange(field, `SIGRTMIN+n or SIGRTMAX-n with n from 0 to ${REAL_TIME_OFFSETS}`, value)
  throw invalidValue(field, `is not a known signal (received ${describe(value)})`)
}

export function normalizeSpec(given: ChildSpec, api: 'sync' | 'async' = 'sync'): NormalizedSpec {
  // Every field is read once, here, into a plain object that the checks below and the launch
  // both read: a getter or Proxy answering differently on each read cannot slip a value past its
  // check. Only the spec's own fields count, as the key check sees them: a field inherited from a
  // polluted Object.prototype is never an option.
  const fields = ownOptions('spec', given, KNOWN_KEYS) as unknown as Record<string, unknown>
  // null is "not given", as Node's options have it (file excepted: it has no default).
  for (const key of Object.keys(fields)) if (fields[key] === null && key !== 'file') delete fields[key]
  const spec = fields as unknown as ChildSpec
  const file = pathString('file', spec.file)
  if (file === '') throw invalidValue('file', 'must not be empty')

  const args = spec.args ?? []
  if (!isArray(args)) throw invalidType('args', 'an array of strings', args)
  const argv0 = spec.argv0 === undefined ? file : cString('argv0', spec.argv0)
  const argv = [argv0]
  for (let i = 0; i < args.length; i++) argv.push(cString(`args[${i}]`, element(args, i)))

  let cwd: string | null = null
  if (spec.cwd !== undefined) {
    cwd = pathString('cwd', spec.cwd)
    if (cwd === '') throw invalidValue('cwd', 'must not be empty')
  }

  let input: ArrayBufferView | null = null
  if (spec.input !== undefined) {
    if (typeof spec.input === 'string') input = Buffer.from(spec.input)
    else if (isView(spec.input)) {
      // Any view (a Buffer, a typed array, a DataView): its bytes, as they are in memory. A view
      // whose buffer was detached (transferred away) has none: as a detached Uint8Array reads, an
      // empty input.
      input = viewBytes(spec.input) ?? new Uint8Array(0)
    } else throw invalidType('input', 'a string, Buffer, TypedArray or DataView', spec.input)
    if (spec.stdin !== undefined) throw incompatible('input', 'stdin', 'input is fed to the child through a stdin pipe')
  }
  const terminal = terminalSize(spec.terminal)
  if (terminal) {
    checkTerminal(spec)
    if (input) input = terminalInput(input)
  }
  const onTerminal: NativeStdio = { kind: StdioKind.terminal }
  const stdin: NativeStdio = terminal ? onTerminal : input ? { kind: StdioKind.pipe } : stdinTarget(spec.stdin)
  const stdout = terminal ? onTerminal : outputTarget('stdout', spec.stdout)
  const stderr = terminal ? onTerminal : outputTarget('stderr', spec.stderr)
  const fds = extraFds(spec.fds)
  const reportFd = reportFdFor(fds)

  const timeout = delayMs('timeout', spec.timeout, 0)
  const killSignal = normalizeSignal('killSignal', spec.killSignal, SIGKILL)
  const forceKillAfterDelay = delayMs('forceKillAfterDelay', spec.forceKillAfterDelay, 0)
  const graceTimeout = delayMs('graceTimeout', spec.graceTimeout, DEFAULT_GRACE_TIMEOUT)
  const waitDelay = delayMs('waitDelay', spec.waitDelay, DEFAULT_WAIT_DELAY)

  if (spec.setsid !== undefined && typeof spec.setsid !== 'boolean') throw invalidType('setsid', 'a boolean', spec.setsid)
  // A terminal is the controlling terminal of a new session the child leads.
  const setsid = spec.setsid === true || terminal !== null
  const rlimits = resourceLimits(spec.rlimits)
  const ids = childIds(spec, setsid)
  const unspawnable = forkOnly(ids)

  let maxBuffer = DEFAULT_MAX_BUFFER
  if (spec.maxBuffer !== undefined) {
    if (typeof spec.maxBuffer !== 'number') throw invalidType('maxBuffer', 'a number', spec.maxBuffer)
    if (Number.isNaN(spec.maxBuffer) || spec.maxBuffer < 0 || (Number.isFinite(spec.maxBuffer) && !Number.isInteger(spec.maxBuffer))) {
      throw outOfRange('maxBuffer', 'an integer >= 0 or Infinity', spec.maxBuffer)
    }
    maxBuffer = spec.maxBuffer
  }
  // No Buffer can hold more than this: past it the output is read, dropped and flagged truncated.
  maxBuffer = Math.min(maxBuffer, bufferConstants.MAX_LENGTH)

  let launcher: number
  switch (spec.launcher) {
    case undefined: case 'auto': launcher = LauncherChoice.auto; break
    case 'posix_spawn': launcher = LauncherChoice.posix_spawn; break
    case 'fork': launcher = LauncherChoice.fork; break
    default: throw invalidValue('launcher', `must be 'auto', 'posix_spawn' or 'fork' (received ${describe(spec.launcher)})`)
  }
  if (launcher === LauncherChoice.posix_spawn && rlimits.length > 0) {
    throw incompatible("launcher 'posix_spawn'", 'rlimits', "posix_spawn cannot set resource limits in the child; use 'fork' or 'auto'")
  }
  if (launcher === LauncherChoice.posix_spawn && unspawnable.length > 0) {
    throw incompatible("launcher 'posix_spawn'", unspawnable[0]!, `posix_spawn cannot set ${unspawnable.join(', ')} in the child; use 'fork' or 'auto'`)
  }
  if (launcher === LauncherChoice.posix_spawn && terminal) {
    // native/launcher.cc, UsesForkPath, says why the fork path alone takes a controlling terminal.
    throw incompatible("launcher 'posix_spawn'", 'terminal', "posix_spawn cannot give the child a controlling terminal; use 'fork' or 'auto'")
  }

  if (spec.killOnExit !== undefined && typeof spec.killOnExit !== 'boolean') {
    throw invalidType('killOnExit', 'a boolean', spec.killOnExit)
  }
  const killOnExit = spec.killOnExit !== false
  let signal: AbortSignal | null = null
  if (spec.signal !== undefined) {
    if (api === 'sync') throw invalidValue('signal', 'is for spawnChild and startChild: spawnChildSync cannot be cancelled')
    signal = abortSignal(spec.signal)
  }

  if (spec.measure !== undefined && typeof spec.measure !== 'boolean') throw invalidType('measure', 'a boolean', spec.measure)
  const measure = spec.measure === true
  if (measure && !helperFound && !(helperFound = fs.existsSync(helperPath))) {
    throw Object.assign(new Error(`measure: the measuring helper is missing (${helperPath}); rebuild the addon`), { code: 'ERR_HELPER_MISSING' })
  }
  const environ = environment(spec.env)

  const path = (s: NativeStdio) => (s.kind === StdioKind.path ? s.path! : null)
  return {
    native: {
      // measure: the helper runs, and runs `file` (looked up on the child's PATH by the helper)
      // with the target's setsid, rlimits, ids and CPUs, which it applies in the target, not to itself.
      file: measure ? helperPath : file,
      argv: measure ? [helperPath, ...helperOptions(setsid, terminal !== null, rlimits, ids, killOnExit, reportFd), '--', file, ...argv] : argv,
      env: environ,
      cwd,
      stdio: [stdin, stdout, stderr],
      fds,
      reportFd,
      terminal,
      // Measured, the helper's target takes the terminal (-t), never the helper.
      controllingTerminal: terminal !== null && !measure,
      setsid: setsid && !measure,
      // Kills reach the group the child leads (a new session, or a new group); a group it joins
      // is someone else's.
      group: setsid || ids.processGroup === 0,
      deathSignal: killOnExit,
      rlimits: measure ? [] : rlimits,
      uid: measure || ids.uid === null ? -1 : ids.uid,
      gid: measure || ids.gid === null ? -1 : ids.gid,
      umask: measure || ids.umask === null ? -1 : ids.umask,
      groups: measure ? null : ids.groups,
      processGroup: measure || ids.processGroup === null ? -1 : ids.processGroup,
      cpus: measure ? [] : ids.cpus,
      // The path the unmeasured child would take, so that the measured one takes it too (the
      // helper, not the launch, now applies setsid, rlimits, ids and CPUs).
      launcher: measure && launcher === LauncherChoice.auto && (setsid || rlimits.length > 0 || unspawnable.length > 0) ? LauncherChoice.fork : launcher,
      timeout,
      killSignal,
      forceKillAfterDelay,
      graceTimeout,
      waitDelay,
      maxBuffer,
      measure,
    },
    input,
    killOnExit,
    signal,
    file,
    cwd,
    paths: [path(stdin), path(stdout), path(stderr)],
    ids,
    terminal: terminal !== null,
  }
}
