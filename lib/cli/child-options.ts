// The options `run` and `bench` share: how each child they start is run. One table and one
// reading of them, so the two commands take the same words the same way.
import type { ChildSpec } from '../spawn/index.js'
import { HELP_OPTION, LAUNCHERS, UsageError, oneOf, type OptionTable } from './options.js'
import { native } from '../spawn/native.js'
import { normalizeSpec } from '../spawn/normalize.js'
import { parseCpuList, parseDuration, parseRlimit } from './units.js'

export const CHILD_OPTIONS: OptionTable = {
  timeout: { kind: 'value' },
  rlimit: { kind: 'value' },
  launcher: { kind: 'value' },
  cpu: { kind: 'value' },
  'no-measure': { kind: 'flag' },
  help: HELP_OPTION,
}

/** What the shared options say; a command applies it to each child's spec (childSpecOf). */
export interface ChildOptions {
  /** 0: no deadline. */
  timeoutMs: number
  rlimits: Record<string, unknown>
  launcher: 'auto' | 'posix_spawn' | 'fork'
  measure: boolean
  /** --cpu: the CPUs each child is pinned to (sched_setaffinity in the child); null: not pinned. */
  cpus: number[] | null
}

/** Measured by default: users of /usr/bin/time -v want the child's own max RSS, not Node's. */
export function defaultChildOptions(): ChildOptions {
  return { timeoutMs: 0, rlimits: {}, launcher: 'auto', measure: true, cpus: null }
}

/** Reads one of CHILD_OPTIONS into `into`; false when `name` is not one of them. */
export function takeChildOption(into: ChildOptions, name: string, value: string | undefined, option: string): boolean {
  switch (name) {
    case 'timeout': into.timeoutMs = parseDuration(value!, option); return true
    case 'rlimit': { const [limit, v] = parseRlimit(value!); into.rlimits[limit] = v; return true }
    case 'launcher': into.launcher = oneOf(value!, LAUNCHERS, option); return true
    case 'no-measure': into.measure = false; return true
    case 'cpu': into.cpus = parseCpuList(value!, option, native.cpuSetSize); return true
    default: return false
  }
}

/** The spec fields the shared options set. */
export function childSpecOf(o: ChildOptions): Pick<ChildSpec, 'timeout' | 'rlimits' | 'launcher' | 'measure' | 'cpus'> {
  return {
    ...(o.timeoutMs > 0 ? { timeout: o.timeoutMs } : {}),
    ...(Object.keys(o.rlimits).length ? { rlimits: o.rlimits as ChildSpec['rlimits'] } : {}),
    ...(o.cpus ? { cpus: o.cpus } : {}),
    launcher: o.launcher,
    measure: o.measure,
  }
}

/** The spec fields the command line sets, by the option that sets them. */
const OPTION_OF_FIELD: Record<string, string> = {
  file: 'CMD', cwd: '--cwd', rlimits: '--rlimit', cpus: '--cpu', launcher: '--launcher', timeout: '--timeout',
  killSignal: '--signal', forceKillAfterDelay: '--kill-after', env: '--env', setsid: '--setsid', measure: '--no-measure',
}

/**
 * `spec` checked as the launch will check it, before anything runs: a spec the command line made
 * that the harness refuses (`--cwd ''`, `--launcher posix_spawn --rlimit as=2G`) is a bad command
 * line, with the Try line and the usage status, said in the options' names, not the API's.
 */
export function checkChildSpec(spec: ChildSpec): void {
  try {
    normalizeSpec(spec, 'async')
  } catch (error) {
    const field = (error as { field?: unknown }).field
    if (typeof field !== 'string' || !(error instanceof Error)) throw error
    // The fields a message names: the one it is about, first, and the other of an incompatible pair.
    const option = (name: string, key: string | undefined) =>
      name === 'rlimits' && key !== undefined ? `--rlimit ${key}` : name === 'env' && key !== undefined ? `--env ${key}` : OPTION_OF_FIELD[name] ?? name
    throw new UsageError(error.message
      .replace(/^(\w+)(?:\.(\w+))?/, (_, name: string, key?: string) => option(name, key))
      .replace(/(cannot be combined with )(\w+)/, (_, before: string, name: string) => before + option(name, undefined)))
  }
}
