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

/** A run's captured output: [stdout, stderr], or null when nothing was captured. */
export type NativeBuffers = [Buffer, Buffer] | null

export type SpawnAsyncOutcome =
  | { numbers: Float64Array; buffers: NativeBuffers }
  | { handle: NativeChildHandle; pid: number }

export interface NativeAddon {
  /** Runs to completion; writes the run's numbers into `numbers` (see rawResult). */
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

// The slots of a run's numbers, as native/addon.h's RawSlot numbers them.
const RAW_PID = 0, RAW_FORK = 1, RAW_STATUS = 2, RAW_TIMED_OUT = 3, RAW_WOULDNT_DIE = 4, RAW_STAGE = 5
const RAW_ERRNO = 6, RAW_DETAIL = 7, RAW_STDOUT_TRUNCATED = 8, RAW_STDERR_TRUNCATED = 9, RAW_DURATION_MS = 10
const RAW_RUSAGE = 11

/** A typed array to receive one run's numbers. */
export function rawNumbers(): Float64Array {
  return new Float64Array(native.rawLength)
}

/** The RawResult of a run from the numbers and buffers the addon reported. */
export function rawResult(n: Float64Array, buffers: NativeBuffers): RawResult {
  const stage = n[RAW_STAGE]
  return {
    pid: n[RAW_PID],
    launcher: n[RAW_FORK] ? 'fork' : 'posix_spawn',
    status: Number.isNaN(n[RAW_STATUS]) ? null : n[RAW_STATUS],
    timedOut: n[RAW_TIMED_OUT] === 1,
    wouldntDie: n[RAW_WOULDNT_DIE] === 1,
    stage: stage === 0 ? null : native.stages[stage],
    errno: n[RAW_ERRNO],
    detail: n[RAW_DETAIL],
    stdout: buffers ? buffers[0] : Buffer.alloc(0),
    stderr: buffers ? buffers[1] : Buffer.alloc(0),
    stdoutTruncated: n[RAW_STDOUT_TRUNCATED] === 1,
    stderrTruncated: n[RAW_STDERR_TRUNCATED] === 1,
    rusage: {
      userCPUTime: n[RAW_RUSAGE], systemCPUTime: n[RAW_RUSAGE + 1], maxRSS: n[RAW_RUSAGE + 2],
      sharedMemorySize: n[RAW_RUSAGE + 3], unsharedDataSize: n[RAW_RUSAGE + 4], unsharedStackSize: n[RAW_RUSAGE + 5],
      minorPageFault: n[RAW_RUSAGE + 6], majorPageFault: n[RAW_RUSAGE + 7], swappedOut: n[RAW_RUSAGE + 8],
      fsRead: n[RAW_RUSAGE + 9], fsWrite: n[RAW_RUSAGE + 10], ipcSent: n[RAW_RUSAGE + 11], ipcReceived: n[RAW_RUSAGE + 12],
      signalsCount: n[RAW_RUSAGE + 13], voluntaryContextSwitches: n[RAW_RUSAGE + 14], involuntaryContextSwitches: n[RAW_RUSAGE + 15],
    },
    durationMs: n[RAW_DURATION_MS],
  }
}

/** The measuring helper executable (native/exec-helper.c), built and shipped beside the addon. */
export const helperPath = path.join(path.dirname(addonPath), 'tileharness-exec')
