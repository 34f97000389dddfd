// Loads the addon: a prebuild from prebuilds/ when one matches, else the build/Release output of
// node-gyp or cmake-js (node-gyp-build decides). TILEHARNESS_ADDON names an addon file to load
// instead (scripts/check-asan.sh points it at the sanitized build in build-asan/), and the
// measuring helper is then taken from that file's directory.
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildResult } from './types.js'

/** The stdio kinds, numbered as native/launcher.h's StdioKind. */
export const StdioKind = { Inherit: 0, Ignore: 1, Closed: 2, Fd: 3, Path: 4, Pipe: 5, MergeStdout: 6 } as const
export type StdioKindValue = (typeof StdioKind)[keyof typeof StdioKind]

export interface NativeStdio { kind: StdioKindValue; fd?: number; path?: string; append?: boolean }

/** The spec as native/addon.cc reads it. */
export interface NativeSpec {
  file: string
  argv: string[]
  env: string[] | null
  cwd: string | null
  stdio: [NativeStdio, NativeStdio, NativeStdio]
  setsid: boolean
  deathSignal: boolean
  rlimits: Array<[number, number, number]>
  launcher: 0 | 1 | 2
  timeout: number
  killSignal: number
  forceKillAfterDelay: number
  graceTimeout: number
  maxBuffer: number
  /** measure: the path of the measuring helper, which runs `file`. */
  helper: string | null
}

/** What one run reports, before decoding (lib/spawn/result.ts): the raw wait status and the
 * failing stage instead of the fields derived from them. */
export type RawResult = Pick<ChildResult,
  'pid' | 'launcher' | 'timedOut' | 'stdout' | 'stderr' | 'stdoutTruncated' | 'stderrTruncated' | 'rusage' | 'durationMs'> & {
  status: number | null
  wouldntDie: boolean
  stage: string | null
  errno?: number
  detail?: number
}

export interface NativeChildHandle {
  kill(signal: number): boolean
}

export type SpawnAsyncOutcome = { raw: RawResult } | { handle: NativeChildHandle; pid: number }

export interface NativeAddon {
  spawnSync(spec: NativeSpec, input: Buffer | null): RawResult
  spawnAsync(
    spec: NativeSpec, input: Buffer | null, onDone: (raw: RawResult) => void,
    onData: ((stream: 1 | 2, chunk: Buffer) => void) | null,
  ): SpawnAsyncOutcome
  errnoInfo(errno: number): [string, string]
  signals: Array<[number, string, string]>
  rlimits: Record<string, number>
}

const require = createRequire(import.meta.url)
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const load = require('node-gyp-build') as ((dir: string) => NativeAddon) & { resolve(dir: string): string }

const override = process.env.TILEHARNESS_ADDON
const addonPath = override ? path.resolve(override) : load.resolve(packageRoot)

export const native: NativeAddon = override ? (require(addonPath) as NativeAddon) : load(packageRoot)

/** The measuring helper executable (native/exec-helper.c), built and shipped beside the addon. */
export const helperPath = path.join(path.dirname(addonPath), 'tileharness-exec')
