// Loads the addon: a prebuild from prebuilds/ when one matches, else the build/Release output of
// node-gyp or cmake-js (node-gyp-build decides). TILEHARNESS_ADDON names an addon file to load
// instead (scripts/check-asan.sh points it at the sanitized build in build-asan/), and the
// measuring helper is then taken from that file's directory.
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

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

export interface NativeChildHandle {
  kill(signal: number): boolean
}

/** A run's captured output: [stdout, stderr], or null when nothing was captured. */
export type NativeBuffers = [Buffer, Buffer] | null

export type SpawnAsyncOutcome =
  | { numbers: Float64Array; buffers: NativeBuffers }
  | { handle: NativeChildHandle; pid: number }

export interface NativeAddon {
  /** Runs to completion; writes the run's numbers into `numbers` (slots: RAW; decoded by result.ts). */
  spawnSync(spec: NativeSpec, input: Buffer | null, numbers: Float64Array): NativeBuffers
  spawnAsync(
    spec: NativeSpec, input: Buffer | null, onDone: (numbers: Float64Array, buffers: NativeBuffers) => void,
    onData: ((stream: 1 | 2, chunk: Buffer) => void) | null,
  ): SpawnAsyncOutcome
  /** Stage names by number (native/launcher.h's Stage). */
  stages: string[]
  /** Slots in a run's numbers (native/addon.h's RawSlot). */
  rawLength: number
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

/** The slots of a run's numbers, as native/addon.h's RawSlot numbers them. */
export const RAW = {
  pid: 0, fork: 1, status: 2, timedOut: 3, wouldntDie: 4, stage: 5, errno: 6, detail: 7,
  stdoutTruncated: 8, stderrTruncated: 9, durationMs: 10, rusage: 11,
} as const

/** A typed array to receive one run's numbers. */
export function rawNumbers(): Float64Array {
  return new Float64Array(native.rawLength)
}

/** The measuring helper executable (native/exec-helper.c), built and shipped beside the addon. */
export const helperPath = path.join(path.dirname(addonPath), 'tileharness-exec')
