// Loads the addon: a prebuild from prebuilds/ when one matches, else the build/Release output of
// node-gyp or cmake-js (node-gyp-build decides).
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildRusage } from './types.js'

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

/** What one run reports, before decoding (lib/spawn/result.ts). */
export interface RawResult {
  pid: number
  launcher: 'posix_spawn' | 'fork'
  status: number | null
  timedOut: boolean
  wouldntDie: boolean
  stage: string | null
  errno?: number
  detail?: number
  stdout: Buffer
  stderr: Buffer
  stdoutTruncated: boolean
  stderrTruncated: boolean
  rusage: ChildRusage
  durationMs: number
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

export const native: NativeAddon = load(packageRoot)

/** The measuring helper executable (native/exec-helper.c), built and shipped beside the addon. */
export const helperPath = path.join(path.dirname(load.resolve(packageRoot)), 'tileharness-exec')
