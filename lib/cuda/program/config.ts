// The Program's configuration: the options create takes, checked in tileiras's fixed order
// (docs/toolchain-contract.md, "The Program handle": each check an early return, so a caller can
// rely on which one it hears about), then the options that order has no check for.

import path from 'node:path'
import { element, incompatible, invalidType, invalidValue, optionKeys, ownOptions, requireNoNul, requireString, requireTimeout } from '../../errors.js'
import { gpuNames } from '../../ptx/targets.js'
import type { PtxModule } from '../../ptx/types.js'
import { probePtxas, PtxasProbeError, type PtxasProbe } from '../probe.js'
import { checkPtxasOptions, ptxasOptionTokens } from '../ptxas-options.js'
import type { Env } from '../toolkit.js'
import { DEFAULT_OPT_LEVEL } from '../ptxas-argv.js'
import { PTXAS_ARGV_INPUT } from '../ptxas-input-name.js'
import { checkEnvironment } from '../../spawn/normalize.js'
import { ProgramError, type ProgramTool } from './errors.js'
import { probePtxText } from './input-probe.js'
import { checkSymbolPrefix, DEFAULT_PROGRAM_NAME } from './symbols.js'

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
/** An architecture-specific (sm_100a) or family (sm_100f) target. */
const VARIANT_GPU_NAME = /^sm_[1-9][0-9]*[af]$/

export interface ProgramConfig {
  /**
   * PTX text: a string, or its UTF-8 bytes in any ArrayBufferView (a Buffer, a typed array, a
   * DataView); or a PTX module object (printed with printModule).
   */
  input: string | ArrayBufferView | PtxModule | null | undefined
  /**
   * ptxas -arch: one of SUPPORTED_GPU_TARGETS; an architecture-specific or family target
   * (sm_90a, sm_100a, sm_100f, ...) the ptxas to be run lists in its --help; with allowAnyTarget,
   * any sm_<N>[a|f]. Several (an array): one cubin per target, run in parallel, wrapped by
   * fatbinary into a fat binary (<name>_fatbin); PTX for a.../f... targets compiles only to its own.
   */
  gpuName: string | readonly string[]
  /** Put the PTX in the fat binary too, for the driver to JIT-compile on GPUs newer than the targets. */
  embedPtx?: boolean
  /** ptxas --opt-level, 0-3; default 3. */
  optLevel?: number
  /** ptxas --device-debug; needs optLevel 0. */
  deviceDebug?: boolean
  /** ptxas --generate-line-info. */
  lineinfo?: boolean
  /**
   * ptxas --compile-only: a relocatable cubin (ET_REL) that keeps device functions and calls to
   * extern ones, for nvlink. Without it ptxas compiles the whole program: a module with no
   * .entry then leaves nothing, and compile fails saying so.
   */
  relocatable?: boolean
  /**
   * More ptxas options, passed through first in its argv ("--maxrregcount 32 --warn-on-spills", or
   * tokens): each must be one the ptxas to be run lists in its --help, and none one the Program
   * sets itself (-arch, -O, -o, -c, -g, ...; ptxas-options.ts lists them).
   */
  ptxasOptions?: readonly string[] | string
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
  /**
   * Symbol prefix in the host object (<name>_cubin, ...): a C identifier; default 'program'.
   * Programs compiled together (compileMany) need different names.
   */
  name?: string
  /** Gets each tool's stderr verbatim, when it printed any: warnings on success, errors on failure. */
  onDiagnostic?: (text: string, tool: ProgramTool) => void
  /** The tools' environment, and where PATH and CUDA_ROOT/CUDA_HOME/CUDA_PATH are read; default process.env. */
  env?: Record<string, string | undefined>
  /** The ptxas to run; default the one on PATH, else <CUDA_ROOT>/bin/ptxas. */
  ptxas?: string
  /** Where private temp files go (a PTX too big for argv, the cubin for the dump); default
   * os.tmpdir(). A relative one is made absolute against the working directory at create. */
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
  /** The first target. */
  gpuName: string
  /** Every target, in the caller's order. */
  gpuNames: readonly string[]
  embedPtx: boolean
  /** Several targets or embedPtx: the output is a fat binary, made by fatbinary. */
  fatbin: boolean
  optLevel: number
  deviceDebug: boolean
  lineinfo: boolean
  relocatable: boolean
  ptxasOptions: readonly string[]
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

/** checkGpuTarget for each of several targets (or one); none twice. */
export function checkGpuTargets(gpuName: unknown, allowAnyTarget = false, givenWhere: PtxasLocation = {}): readonly string[] {
  const where = ptxasLocation(givenWhere)
  if (!Array.isArray(gpuName)) return [checkGpuTarget(gpuName, allowAnyTarget, where)]
  if (gpuName.length === 0) throw new ProgramError('UNSUPPORTED_GPU_TARGET', { reason: 'gpuName is an empty list; give at least one target, e.g. "sm_100"' })
  // Every index, a hole as undefined, to refuse: map skipped it, and Array.from would read
  // Array.prototype's element there.
  const names: string[] = []
  for (let i = 0; i < gpuName.length; i++) names.push(checkGpuTarget(element(gpuName, i), allowAnyTarget, where))
  const twice = names.find((name, i) => names.indexOf(name) !== i)
  if (twice !== undefined) throw new ProgramError('UNSUPPORTED_GPU_TARGET', { reason: `${twice} is given twice` })
  return Object.freeze(names)
}

/** Where the ptxas that will run is found: what variantTargets asks. */
export interface PtxasLocation {
  ptxas?: string | undefined
  env?: Env | undefined
  /** The most its probe may take, ms (the compile's own timeout): default, and at most, 60 s. */
  timeout?: number | undefined
}

const LOCATION_KEYS = optionKeys<PtxasLocation>({ ptxas: true, env: true, timeout: true })

/**
 * A caller's PtxasLocation by its own fields: a ptxas inherited from a polluted Object.prototype
 * is not one to run, and a field that is none of the three is refused.
 */
function ptxasLocation(where: PtxasLocation): PtxasLocation {
  return ownOptions('where', where, LOCATION_KEYS)
}

/**
 * The GPU check of create, for callers that must know before they have an input (the CLI).
 * Architecture-specific and family targets are taken when the ptxas at `where` accepts them
 * (variantTargets): real kernels (CUTLASS's) need them, and ptxas, not a list of ours, knows them.
 */
export function checkGpuTarget(gpuName: unknown, allowAnyTarget = false, givenWhere: PtxasLocation = {}): string {
  const where = ptxasLocation(givenWhere)
  if (typeof gpuName !== 'string') {
    throw new ProgramError('UNSUPPORTED_GPU_TARGET', { reason: 'gpuName is required, e.g. "sm_100"' })
  }
  if ((SUPPORTED_GPU_TARGETS as readonly string[]).includes(gpuName)) return gpuName
  if (allowAnyTarget && ANY_GPU_NAME.test(gpuName)) return gpuName
  if (VARIANT_GPU_NAME.test(gpuName) && variantTargets(where).includes(gpuName)) return gpuName
  throw new ProgramError('UNSUPPORTED_GPU_TARGET', {
    reason: allowAnyTarget
      ? `${JSON.stringify(gpuName)} is not a GPU name (sm_<N>, sm_<N>a or sm_<N>f)`
      : `${JSON.stringify(gpuName)} is not one of ${SUPPORTED_GPU_TARGETS.join(', ')} or an a/f target ptxas accepts; ` +
        'allowAnyTarget (--allow-any-target) accepts others, such as sm_90',
  })
}

/**
 * The architecture-specific and family targets (sm_90a, sm_100f, ...) the ptxas at `where`
 * lists for --gpu-name (probe.ts, cached per binary). Without a ptxas that answers, ptxas 13.0's
 * (the emitter's table, PTX_ISA_BY_TARGET): the compile will then say what is wrong with ptxas.
 */
export function variantTargets(where: PtxasLocation = {}): readonly string[] {
  const listed = answeringPtxas(ptxasLocation(where))?.gpuNames ?? []
  return (listed.length > 0 ? listed : gpuNames()).filter((name) => VARIANT_GPU_NAME.test(name))
}

/** The default time a ptxas probe may take; a compile's timeout, when shorter, bounds it. */
const PROBE_TIMEOUT_MS = 60_000

/**
 * The probe's budget from a compile's timeout as given: a valid shorter one bounds it; anything
 * else leaves the default (create's own check reports a bad timeout, in its order).
 */
function probeTimeout(timeout: unknown): number {
  return typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0 && timeout < PROBE_TIMEOUT_MS ? timeout : PROBE_TIMEOUT_MS
}

/** The probe of the ptxas at `where` (cached per binary), or null when there is none that answers. */
function answeringPtxas(where: PtxasLocation): PtxasProbe | null {
  try {
    return probePtxas({
      ...(where.ptxas === undefined ? {} : { ptxas: where.ptxas }),
      ...(where.env === undefined ? {} : { env: where.env }),
      timeout: probeTimeout(where.timeout),
    })
  } catch (error) {
    // A ptxas that does not answer, or a bad ptxas/env, which create's own checks report.
    if (error instanceof PtxasProbeError || String((error as { code?: unknown }).code).startsWith('ERR_INVALID_ARG')) return null
    throw error
  }
}

/** Every field of a ProgramConfig: any other field of a config is refused. */
const CONFIG_KEYS = optionKeys<ProgramConfig>({
  input: true, gpuName: true, embedPtx: true, optLevel: true, deviceDebug: true, lineinfo: true, relocatable: true, ptxasOptions: true,
  hostArch: true, hostOs: true, sanitize: true, dumpSassCommand: true, timeout: true, allowAnyTarget: true, name: true,
  onDiagnostic: true, env: true, ptxas: true, tempRoot: true, inputName: true,
})

/**
 * tileirasProgramCreate's checks, in its order; then the fields it has no check for, whose
 * errors are argument errors (TypeError/RangeError with a `code` and `field`, ../../errors.ts).
 */
export function resolveConfig(given: ProgramConfig | null | undefined): { resolved: ResolvedConfig; ptx: string } {
  if (given === null || given === undefined) throw new ProgramError('CONFIGURATION_NULL')
  // Each field read once: a getter that answered the checks one way and the stored value another
  // had a bad ptxas, env, tempRoot or onDiagnostic pass create and fail the compile with no code.
  // And only the config's own: a dumpSassCommand or ptxas inherited from a polluted
  // Object.prototype had been run by every compile. A field that is no option (`optlevel`,
  // `devicedebug`) is refused: it had been ignored, and the compile run with the defaults.
  const config = ownOptions('config', given, CONFIG_KEYS)
  if (config.input === null || config.input === undefined) throw new ProgramError('INPUT_BUFFER_NULL')
  const ptx = probePtxText(config.input)
  const gpuNames = checkGpuTargets(config.gpuName, config.allowAnyTarget === true, { ptxas: config.ptxas, env: config.env, timeout: config.timeout })
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

  for (const field of ['deviceDebug', 'lineinfo', 'relocatable', 'embedPtx', 'allowAnyTarget'] as const) {
    if (config[field] !== undefined && typeof config[field] !== 'boolean') throw invalidType(field, 'a boolean', config[field])
  }
  const sanitize = config.sanitize ?? 'none'
  if (sanitize !== 'none' && sanitize !== 'memcheck') throw invalidValue('sanitize', "must be 'memcheck' or 'none'", sanitize)
  const dumpSassCommand = config.dumpSassCommand ?? null
  if (dumpSassCommand !== null) requireString('dumpSassCommand', dumpSassCommand)
  const fatbin = gpuNames.length > 1 || config.embedPtx === true
  if (dumpSassCommand !== null && fatbin) {
    throw incompatible('dumpSassCommand', gpuNames.length > 1 ? 'several targets' : 'embedPtx', 'the SASS dump is of one cubin, and a fat binary holds several images')
  }
  const timeout = config.timeout === undefined ? undefined : requireTimeout(config.timeout)
  const name = checkSymbolPrefix('name', config.name ?? DEFAULT_PROGRAM_NAME)
  if (config.onDiagnostic !== undefined && typeof config.onDiagnostic !== 'function') {
    throw invalidType('onDiagnostic', 'a function', config.onDiagnostic)
  }
  // The children's environment, checked as a spawn checks it, but at create; kept as a copy,
  // checked as copied, so that the caller's object changed later changes nothing.
  checkEnvironment(config.env)
  const env = config.env === undefined ? undefined : Object.freeze({ ...config.env })
  checkEnvironment(env)
  if (config.ptxas !== undefined && requireNoNul('ptxas', requireString('ptxas', config.ptxas)) === '') {
    throw invalidValue('ptxas', 'must not be empty')
  }
  // Made absolute against the working directory of the moment: a relative one moved with later
  // chdir()s, and one like '-A' made every temp path the tools are given begin with '-' (an option).
  if (config.tempRoot === '') throw invalidValue('tempRoot', 'must not be empty')
  const tempRoot = config.tempRoot === undefined ? undefined : path.resolve(requireNoNul('tempRoot', requireString('tempRoot', config.tempRoot)))
  const inputName = requireNoNul('inputName', requireString('inputName', config.inputName ?? PTXAS_ARGV_INPUT))
  const ptxasOptions = config.ptxasOptions === undefined ? [] : ptxasOptionTokens('ptxasOptions', config.ptxasOptions)
  if (ptxasOptions.length > 0) checkPtxasOptions('ptxasOptions', ptxasOptions, answeringPtxas({ ptxas: config.ptxas, env: config.env, timeout }))
  return {
    ptx,
    resolved: {
      gpuName: gpuNames[0],
      gpuNames,
      embedPtx: config.embedPtx === true,
      fatbin,
      optLevel,
      deviceDebug: config.deviceDebug === true,
      lineinfo: config.lineinfo === true,
      relocatable: config.relocatable === true,
      ptxasOptions,
      hostArch: hostArch as ProgramHostArch,
      hostOs: hostOs as ProgramHostOs,
      sanitize,
      dumpSassCommand,
      timeout,
      name,
      onDiagnostic: config.onDiagnostic,
      env,
      ptxas: config.ptxas,
      tempRoot,
      inputName,
    },
  }
}
