// What a given ptxas binary is and accepts, asked of the binary itself (--version, --help,
// --list-version) and cached per binary, so a caller can tell before compiling that, say,
// `--knobs-file` (which tileiras's argv uses) is an unknown option to ptxas 13.0
// (docs/toolchain-contract.md, "Measured: ptxas 13.0").

import { realpathSync, statSync } from 'node:fs'
import { spawnChild, spawnChildSync } from '../spawn/index.js'
import type { ChildResult, ChildSpec } from '../spawn/types.js'
import { invalidValue, optionKeys, ownOptions, requireNoNul, requireObject, requireString, requireTimeout } from '../errors.js'
import { findTool, searchPath, type Env } from './toolkit.js'

export interface PtxasOption {
  /** e.g. '--opt-level'. */
  long: string
  /** e.g. '-O'. */
  short: string
  /** The argument placeholder as --help shows it (e.g. '<N>'), or null for a switch. */
  argument: string | null
}

export interface PtxasProbe {
  /** The binary that was asked (absolute; symlinks and wrapper scripts are not followed). */
  path: string
  /** e.g. '13.0.88' (from "V13.0.88"), or null if --version said no such thing. */
  version: string | null
  /** e.g. '13.0' (from "release 13.0"), or null. */
  release: string | null
  versionText: string
  /** The options --help lists, in its order. */
  options: readonly PtxasOption[]
  /** The PTX ISA versions --list-version prints, e.g. ['1.0', ..., '9.0']. */
  ptxIsaVersions: readonly string[]
  /** The real targets --help allows for --gpu-name, e.g. ['sm_100', 'sm_100a', 'sm_100f', ...]. */
  gpuNames: readonly string[]
  /**
   * Whether this ptxas knows an option: '--name' is looked up among long names and '-x' among
   * short ones, as ptxas parses them; a bare 'name' matches either; '=value' is ignored, and so
   * is a value glued to the one-letter options ptxas takes so ('-O3', '-m64': GLUED_SHORTS).
   */
  accepts(option: string): boolean
}

export interface ProbePtxasOptions {
  /** The ptxas to ask: a path, or a name searched on PATH then <root>/bin; default 'ptxas'. */
  ptxas?: string
  /** Environment for the PATH search and the children; default process.env. */
  env?: Env
  /** For the whole probe (its three questions), ms; default 60000. */
  timeout?: number
}

const PROBE_KEYS = optionKeys<ProbePtxasOptions>({ ptxas: true, env: true, timeout: true })

/** Raised when the binary exists but does not answer --version / --help usefully. */
export class PtxasProbeError extends Error {
  readonly path: string
  readonly result: ChildResult
  constructor(path: string, args: string, result: ChildResult) {
    const why = result.diagnostic || `exit status ${result.exitCode}`
    super(`${path} ${args} failed: ${why}`)
    this.name = 'PtxasProbeError'
    this.path = path
    this.result = result
  }
}

/**
 * One entry per binary, keyed by its real path: the probe, or for a binary that did not answer
 * the error and the budget it had (asked again only with a longer budget than one it ran out of;
 * a failure that was not a timeout stands). `stamp` is the file's identity when it was asked: a
 * binary replaced in place is asked again, and its entry replaced rather than added to.
 */
const cache = new Map<string, { stamp: string } & ({ probe: PtxasProbe } | { error: PtxasProbeError; timeout: number })>()

/**
 * Probe a ptxas; returns null when there is none to probe. The answer is cached per binary
 * (real path, inode, size and mtime), so a ptxas replaced in place is asked again. So is a
 * failure (PtxasProbeError): a binary that did not answer is not asked again, unless it ran out
 * of time and this probe has a longer budget (a hung ptxas costs one timeout, not one per check).
 * It waits for the three children on the calling thread: probePtxasAsync asks the same binary
 * the same questions without holding the event loop, into the same cache.
 */
export function probePtxas(options: ProbePtxasOptions = {}): PtxasProbe | null {
  const asking = startProbe(options)
  if (!('ask' in asking)) return asking.answer
  const answers = PROBE_FLAGS.map((flag) => asking.took(flag, spawnChildSync(asking.ask(flag))))
  return asking.done(answers)
}

/**
 * probePtxas on the event loop: the three questions are asked with spawnChild, and the answer goes
 * into the same cache. Program.create asks ptxas (probePtxas, synchronously) the first time it
 * meets an a/f target or ptxasOptions for a binary: a process whose event loop must not wait on a
 * child (a daemon) awaits this first, and create then finds the answer cached.
 */
export async function probePtxasAsync(options: ProbePtxasOptions = {}): Promise<PtxasProbe | null> {
  const asking = startProbe(options)
  if (!('ask' in asking)) return asking.answer
  const answers: string[] = []
  for (const flag of PROBE_FLAGS) answers.push(asking.took(flag, await spawnChild(asking.ask(flag))))
  return asking.done(answers)
}

const PROBE_FLAGS = ['--version', '--help', '--list-version'] as const

type Asking =
  | { answer: PtxasProbe | null }
  | {
      /** The spec of the child that asks `flag`, within the probe's one budget. */
      ask(flag: string): ChildSpec
      /** Its answer (stdout), or the PtxasProbeError thrown (and cached) for a child that failed. */
      took(flag: string, result: ChildResult): string
      /** The probe made from the three answers, cached. */
      done(answers: string[]): PtxasProbe
    }

/** A probe's checks, lookup and cache; the questions it still has to ask, if any. */
function startProbe(given: ProbePtxasOptions): Asking {
  // Its own fields only: a ptxas or env inherited from a polluted Object.prototype is not the
  // binary asked, nor where it is searched for.
  const options = ownOptions('options', given, PROBE_KEYS)
  const env = options.env ?? process.env
  requireObject('env', env)
  const name = requireNoNul('ptxas', requireString('ptxas', options.ptxas ?? 'ptxas'))
  if (name === '') throw invalidValue('ptxas', 'must not be empty')
  const timeout = requireTimeout(options.timeout ?? 60_000)

  // A path is used as is; the name 'ptxas' is searched on PATH and then in <root>/bin.
  const path = name === 'ptxas' ? (findTool('ptxas', env)?.path ?? null) : searchPath(name, env)
  if (path === null) return { answer: null }
  const identity = binaryIdentity(path)
  if (identity === null) return { answer: null }
  const { real, stamp } = identity
  const cached = cache.get(real)
  if (cached !== undefined && cached.stamp === stamp) {
    if ('probe' in cached) return { answer: cached.probe }
    if (!cached.error.result.timedOut || (timeout > 0 && timeout <= cached.timeout)) throw cached.error
  }

  // One budget for the three questions. Each runs on the default launch, whose death signal
  // takes the child with this process if it is killed meanwhile (a ^C during a probe).
  const deadline = timeout > 0 ? performance.now() + timeout : 0
  // Probes of one binary may overlap (probePtxasAsync in flight, a create meanwhile): a failure
  // that ends last does not replace an answer another got, and a probe begun before the cache
  // was cleared does not put its answer back.
  const began = generation
  const remember = (entry: { probe: PtxasProbe } | { error: PtxasProbeError; timeout: number }): void => {
    if (began !== generation) return
    const now = cache.get(real)
    if ('error' in entry && now !== undefined && now.stamp === stamp && 'probe' in now) return
    cache.set(real, { stamp, ...entry })
  }
  return {
    ask: (flag) => ({
      file: path,
      argv0: 'ptxas',
      args: [flag],
      env: env as Record<string, string | undefined>,
      stdin: 'closed',
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: deadline > 0 ? Math.max(1, Math.ceil(deadline - performance.now())) : 0,
    }),
    took: (flag, result) => {
      if (result.exitCode !== 0) {
        const error = new PtxasProbeError(path, flag, result)
        remember({ error, timeout })
        throw error
      }
      return result.stdout.toString('utf8')
    },
    done: ([versionText, help, versions]) => {
      const probe = makeProbe({
        path, ...parsePtxasVersion(versionText!), versionText: versionText!, options: parsePtxasHelp(help!),
        ptxIsaVersions: parsePtxasVersionList(versions!), gpuNames: parsePtxasGpuNames(help!),
      })
      remember({ probe })
      return probe
    },
  }
}

/** Bumped by every clear: a probe begun before it does not fill the cache after it. */
let generation = 0

/** Forget every cached probe (for tests, or after installing a new toolkit). */
export function clearPtxasProbeCache(): void {
  cache.clear()
  generation++
}

/** How many binaries the cache holds an entry for (for tests). */
export function ptxasProbeCacheSize(): number {
  return cache.size
}

/** "Cuda compilation tools, release 13.0, V13.0.88" → release '13.0', version '13.0.88'. */
export function parsePtxasVersion(text: string): { version: string | null; release: string | null } {
  return {
    version: /\bV(\d+(?:\.\d+)+)\b/.exec(text)?.[1] ?? null,
    release: /\brelease (\d+\.\d+)\b/.exec(text)?.[1] ?? null,
  }
}

/**
 * The option table of `ptxas --help`: lines of the form
 *   --opt-level <N>                                     (-O)
 *   --input-as-string <ptx string>,...                  (-ias)
 *   --compile-only                                      (-c)
 */
export function parsePtxasHelp(text: string): PtxasOption[] {
  const options: PtxasOption[] = []
  const line = /^(--[A-Za-z0-9][A-Za-z0-9_-]*)((?:\s+<[^>\n]*>)?(?:,\.\.\.)?)\s+\((-[A-Za-z0-9][A-Za-z0-9_-]*)\)\s*$/gm
  for (let m = line.exec(text); m !== null; m = line.exec(text)) {
    const argument = m[2].trim()
    options.push({ long: m[1], short: m[3], argument: argument === '' ? null : argument })
  }
  return options
}

/**
 * The real targets (sm_*) among --gpu-name's "Allowed values for this option: 'compute_100',
 * ...,'sm_90a'." in `ptxas --help`; the virtual (compute_*) and LTO (lto_*) ones are left out.
 */
export function parsePtxasGpuNames(text: string): string[] {
  const block = /^--gpu-name\b[\s\S]*?Allowed values for this option:([^.]*)\./m.exec(text)?.[1] ?? ''
  return [...block.matchAll(/'(sm_[0-9]+[a-z]?)'/g)].map((m) => m[1])
}

/** `ptxas --list-version`: one "major.minor" per line. */
export function parsePtxasVersionList(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => /^\d+\.\d+$/.test(l))
}

/**
 * The one-letter options ptxas takes with their value glued on: -O3 and -m64 parse, while -evadd
 * and -ox.cubin are "Unknown option" (ptxas 13.0, measured); -entry=vadd and -opt-level=1 are
 * unknown too, never -e or -o with a value.
 */
const GLUED_SHORTS: ReadonlySet<string> = new Set(['-O', '-m'])

export function makeProbe(fields: Omit<PtxasProbe, 'accepts' | 'gpuNames'> & { gpuNames?: readonly string[] }): PtxasProbe {
  const longs = new Set(fields.options.map((o) => o.long.slice(2)))
  const shorts = new Set(fields.options.map((o) => o.short.slice(1)))
  const gluable = new Set(fields.options.filter((o) => o.argument !== null && GLUED_SHORTS.has(o.short)).map((o) => o.short[1]))
  return Object.freeze({
    ...fields,
    options: Object.freeze(fields.options.map((o) => Object.freeze({ ...o }))),
    ptxIsaVersions: Object.freeze([...fields.ptxIsaVersions]),
    gpuNames: Object.freeze([...(fields.gpuNames ?? [])]),
    accepts(option: string): boolean {
      requireString('option', option)
      const name = option.split('=', 1)[0]
      if (name.startsWith('--')) return longs.has(name.slice(2))
      if (name.startsWith('-')) return shorts.has(name.slice(1)) || (name.length > 2 && gluable.has(name[1]))
      return longs.has(name) || shorts.has(name)
    },
  })
}

function binaryIdentity(path: string): { real: string; stamp: string } | null {
  try {
    const real = realpathSync(path)
    const st = statSync(real)
    return { real, stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}` }
  } catch {
    return null
  }
}
