// The Program's configuration: the options create takes, checked in tileiras's fixed order
// (docs/toolchain-contract.md, "The Program handle": each check an early return, so a caller can
// rely on which one it hears about), then the options that order has no check for.

import { invalidType, invalidValue, requireNoNul, requireObject, requireString, requireTimeout } from '../../errors.js'
import type { PtxModule } from '../../ptx/types.js'
import { DEFAULT_OPT_LEVEL } from '../ptxas-argv.js'
import { PTXAS_ARGV_INPUT } from '../ptxas-input-name.js'
import { checkBaseName } from '../temp-file.js'
import { ProgramError, type ProgramTool } from './errors.js'
import { probePtxText } from './input-probe.js'

/** tileiras's GPU targets: {100, 103, 110, 120, 121}. */
export const SUPPORTED_GPU_TARGETS = Object.freeze(['sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121'] as const)
/** tileiras's host architectures 0, 1, 2. */
export const HOST_ARCHS = Object.freeze(['x86_64', 'aarch64', 'arm64ec'] as const)
/** tileiras's host operating systems 0, 1. */
export const HOST_OSES = Object.freeze(['linux', 'windows'] as const)
export const MAX_OPT_LEVEL = 3

export type ProgramHostArch = (typeof HOST_ARCHS)[number]
export type ProgramHostOs = (typeof HOST_OSES)[number]
export type ProgramSanitize = 'none' | 'memcheck'

/** Any real target name ptxas could know, for allowAnyTarget (the ptxas adapter's own rule). */
const ANY_GPU_NAME = /^sm_[1-9][0-9]*[af]?$/

export interface ProgramConfig {
  /** PTX text (a string, or UTF-8 bytes), or a PTX module object (printed with printModule). */
  input: string | Uint8Array | PtxModule | null | undefined
  /** ptxas -arch: one of SUPPORTED_GPU_TARGETS, or with allowAnyTarget any sm_<N>[a|f]. */
  gpuName: string
  /** ptxas --opt-level, 0-3; default 3. */
  optLevel?: number
  /** ptxas --device-debug; needs optLevel 0. */
  deviceDebug?: boolean
  /** ptxas --generate-line-info. */
  lineinfo?: boolean
  /** The host object's machine; default this machine's ('x86_64' or 'aarch64'). */
  hostArch?: ProgramHostArch
  /** Default 'linux' (an ELF object); 'windows' gets a COFF object. */
  hostOs?: ProgramHostOs
  /** 'memcheck': ptxas --sanitize memcheck. Default 'none'. */
  sanitize?: ProgramSanitize
  /** A SASS dump command ('nvdisasm -c'); its stdout goes into the object's .nvdisasm section. Default: no dump. */
  dumpSassCommand?: string | null
  /** Milliseconds for the whole compile (every child shares it); 0 = none; default: the tools' own limits. */
  timeout?: number
  /** Accept targets outside SUPPORTED_GPU_TARGETS, such as sm_90. */
  allowAnyTarget?: boolean
  /** Symbol prefix in the host object (<name>_cubin, ...): a C identifier; default 'program'. */
  name?: string
  /** Gets each tool's stderr verbatim, when it printed any: warnings on success, errors on failure. */
  onDiagnostic?: (text: string, tool: ProgramTool) => void
  /** The tools' environment, and where PATH and CUDA_ROOT/CUDA_HOME/CUDA_PATH are read; default process.env. */
  env?: Record<string, string | undefined>
  /** The ptxas to run; default the one on PATH, else <CUDA_ROOT>/bin/ptxas. */
  ptxas?: string
  /** Where private temp files go (a PTX too big for argv, the cubin for the dump); default os.tmpdir(). */
  tempRoot?: string
  /**
   * What ptxas's messages call the input: the user's file name, as they would see it. Default
   * `application ptx input`, ptxas's own name for PTX given as text, on every route the PTX takes
   * (lib/cuda/ptxas-input-name.ts).
   */
  inputName?: string
}

/** The configuration once checked, with its defaults filled in: what the pipeline runs on. */
export interface ResolvedConfig {
  gpuName: string
  optLevel: number
  deviceDebug: boolean
  lineinfo: boolean
  hostArch: ProgramHostArch
  hostOs: ProgramHostOs
  sanitize: ProgramSanitize
  dumpSassCommand: string | null
  timeout: number | undefined
  name: string
  onDiagnostic: ((text: string, tool: ProgramTool) => void) | undefined
  env: Record<string, string | undefined> | undefined
  ptxas: string | undefined
  tempRoot: string | undefined
  inputName: string
}

/** The host arch of this machine, as tileiras names it. */
export function defaultHostArch(): string {
  return process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch
}

/** The GPU check of create, for callers that must know before they have an input (the CLI). */
export function checkGpuTarget(gpuName: unknown, allowAnyTarget = false): string {
  if (typeof gpuName !== 'string') {
    throw new ProgramError('UNSUPPORTED_GPU_TARGET', { reason: 'gpuName is required, e.g. "sm_100"' })
  }
  if ((SUPPORTED_GPU_TARGETS as readonly string[]).includes(gpuName)) return gpuName
  if (allowAnyTarget && ANY_GPU_NAME.test(gpuName)) return gpuName
  throw new ProgramError('UNSUPPORTED_GPU_TARGET', {
    reason: allowAnyTarget
      ? `${JSON.stringify(gpuName)} is not a GPU name (sm_<N>, sm_<N>a or sm_<N>f)`
      : `${JSON.stringify(gpuName)} is not one of ${SUPPORTED_GPU_TARGETS.join(', ')}; allowAnyTarget (--allow-any-target) accepts others, such as sm_90`,
  })
}

/**
 * tileirasProgramCreate's checks, in its order; then the fields it has no check for, whose
 * errors are argument errors (TypeError/RangeError with a `code` and `field`, ../../errors.ts).
 */
export function resolveConfig(config: ProgramConfig | null | undefined): { resolved: ResolvedConfig; ptx: string } {
  if (config === null || config === undefined) throw new ProgramError('CONFIGURATION_NULL')
  requireObject('config', config)
  if (config.input === null || config.input === undefined) throw new ProgramError('INPUT_BUFFER_NULL')
  const ptx = probePtxText(config.input)
  const gpuName = checkGpuTarget(config.gpuName, config.allowAnyTarget === true)
  const optLevel = config.optLevel ?? DEFAULT_OPT_LEVEL
  if (typeof optLevel !== 'number' || !Number.isInteger(optLevel) || optLevel < 0 || optLevel > MAX_OPT_LEVEL) {
    throw new ProgramError('INVALID_OPT_LEVEL', { reason: `optLevel must be an integer from 0 to ${MAX_OPT_LEVEL} (got ${String(optLevel)})` })
  }
  if (optLevel !== 0 && config.deviceDebug === true) {
    throw new ProgramError('OPTIMIZED_DEBUGGING', { reason: `deviceDebug with optLevel ${optLevel}` })
  }
  const hostArch = config.hostArch ?? defaultHostArch()
  if (!(HOST_ARCHS as readonly unknown[]).includes(hostArch)) {
    throw new ProgramError('UNSUPPORTED_HOST_ARCH', { reason: `${JSON.stringify(hostArch)} is not one of ${HOST_ARCHS.join(', ')}` })
  }
  const hostOs = config.hostOs ?? 'linux'
  if (!(HOST_OSES as readonly unknown[]).includes(hostOs)) {
    throw new ProgramError('UNSUPPORTED_HOST_OS', { reason: `${JSON.stringify(hostOs)} is not one of ${HOST_OSES.join(', ')}` })
  }

  for (const field of ['deviceDebug', 'lineinfo', 'allowAnyTarget'] as const) {
    if (config[field] !== undefined && typeof config[field] !== 'boolean') throw invalidType(field, 'a boolean', config[field])
  }
  const sanitize = config.sanitize ?? 'none'
  if (sanitize !== 'none' && sanitize !== 'memcheck') throw invalidValue('sanitize', "must be 'memcheck' or 'none'", sanitize)
  const dumpSassCommand = config.dumpSassCommand ?? null
  if (dumpSassCommand !== null) requireString('dumpSassCommand', dumpSassCommand)
  const timeout = config.timeout === undefined ? undefined : requireTimeout(config.timeout)
  const name = config.name ?? 'program'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(requireString('name', name))) {
    throw invalidValue('name', 'must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)', name)
  }
  checkBaseName('name', name)
  if (config.onDiagnostic !== undefined && typeof config.onDiagnostic !== 'function') {
    throw invalidType('onDiagnostic', 'a function', config.onDiagnostic)
  }
  if (config.env !== undefined) requireObject('env', config.env)
  if (config.ptxas !== undefined && requireNoNul('ptxas', requireString('ptxas', config.ptxas)) === '') {
    throw invalidValue('ptxas', 'must not be empty')
  }
  if (config.tempRoot !== undefined) requireString('tempRoot', config.tempRoot)
  const inputName = requireNoNul('inputName', requireString('inputName', config.inputName ?? PTXAS_ARGV_INPUT))
  return {
    ptx,
    resolved: {
      gpuName,
      optLevel,
      deviceDebug: config.deviceDebug === true,
      lineinfo: config.lineinfo === true,
      hostArch: hostArch as ProgramHostArch,
      hostOs: hostOs as ProgramHostOs,
      sanitize,
      dumpSassCommand,
      timeout,
      name,
      onDiagnostic: config.onDiagnostic,
      env: config.env,
      ptxas: config.ptxas,
      tempRoot: config.tempRoot,
      inputName,
    },
  }
}
