// The ptxas argv, token for token and in its order (docs/toolchain-contract.md, "The ptxas argv"),
// every token of it built here and only here:
//
//   ptxas
//   [ <module-attribute "ptxas-options" tokens> ]
//   [ --compile-only ] [ --device-debug | --generate-line-info ] [ --sanitize memcheck ]
//                                                ours, the Program's options
//   -arch sm_<NN>
//   --opt-level <N>
//   --input-as-string <PTX text>                 or, ours: a PTX file's path
//   [ ...basePTXOptions tokens... ]
//      = " --knobs-file=<PTX_KNOBS_PATH>"          only when MLIR_ENABLE_EVO and PTX_KNOBS_PATH
//      = " --nv-host=\"<host-code-temp-path>\""    only with a host-code path
//      = " <basePTXOptions string-attr value>"
//   [ -o <file> ]                                  ours: ptxas 13.0 writes elf.o unless told
//
// The base options are one string, split into tokens with the same splitCommand as nvdisasm
// commands. The additions marked "ours" are off unless asked for. `inputFile` is for PTX that
// does not fit one argv string: ptxas 13.0 takes its input file as a positional argument.
//
// Everything but the input is checked and built once (ptxasTokens), before a temp file for the
// input may exist; the input goes in last (ptxasArgv).

import { invalidType, invalidValue, optionKeys, outOfRange, own, ownFields, ownOptions, requireNoNul, requireObject, requireString } from '../errors.js'
import { quoteForSplit, splitCommand } from '../split-command.js'
import { ptxasOptionTokens } from './ptxas-options.js'
import type { Env } from './toolkit.js'

/** Linux's cap on one argv or envp string, its NUL included (MAX_ARG_STRLEN = 32 pages). */
export const MAX_ARG_STRLEN = 131072

/** The ptxas optimisation level when none is given. */
export const DEFAULT_OPT_LEVEL = 3

/** Real GPU targets only: `-arch sm_<NN>`, with the a/f variants ptxas 13.0 knows. */
const GPU_NAME = /^sm_[1-9][0-9]*[af]?$/

export interface PtxasArgvOptions {
  /** -arch value, e.g. 'sm_100'. */
  gpuName: string
  /** --opt-level value; default 3. */
  optLevel?: number
  /** The PTX text, passed as one argv token after --input-as-string. */
  ptx?: string
  /** Instead of `ptx`: a PTX file path, passed as a positional argument. */
  inputFile?: string
  /** The module's "ptxas-options" attribute: tokens, or one string split with splitCommand. */
  ptxasOptions?: readonly string[] | string
  /** --compile-only (ours): a relocatable cubin, for nvlink, that keeps device functions and extern calls. */
  relocatable?: boolean
  /** --device-debug: full debug info, which carries line info, so `lineinfo` is then left out. */
  deviceDebug?: boolean
  /** --generate-line-info. */
  lineinfo?: boolean
  /** 'memcheck': --sanitize memcheck. Default 'none'. */
  sanitize?: 'memcheck' | 'none'
  /** Host-code path for --nv-host; the option is left out when absent. */
  hostCodePath?: string
  /** The basePTXOptions string attribute, appended after a space and split. */
  basePtxOptions?: string
  /** Consulted for MLIR_ENABLE_EVO and PTX_KNOBS_PATH only; default process.env. */
  env?: Env
  /** Appends `-o <outputFile>` (ours). */
  outputFile?: string
}

const PTXAS_ARGV_KEYS = optionKeys<PtxasArgvOptions>({
  gpuName: true, optLevel: true, ptx: true, inputFile: true, ptxasOptions: true, relocatable: true, deviceDebug: true, lineinfo: true,
  sanitize: true, hostCodePath: true, basePtxOptions: true, env: true, outputFile: true,
})
const BASE_PTX_OPTION_KEYS = optionKeys<Pick<PtxasArgvOptions, 'hostCodePath' | 'basePtxOptions' | 'env'>>({ hostCodePath: true, basePtxOptions: true, env: true })

/**
 * The knobs file ptxas is to get, or null. The gate is an AND: both variables must be set (to
 * anything, the empty string included, as getenv sees it); either one alone does nothing. Set
 * means the environment's own variable: a child gets no inherited one (the harness reads an env
 * by its own keys), so a PTX_KNOBS_PATH from a polluted Object.prototype is not one ptxas sees.
 */
export function knobsFileFromEnv(env: Env = process.env): string | null {
  requireObject('env', env)
  const evo = own(env, 'MLIR_ENABLE_EVO')
  const path = own(env, 'PTX_KNOBS_PATH') as string | undefined
  return evo !== undefined && path !== undefined ? path : null
}

/**
 * The base-options string: ` --knobs-file=<path>` (gated), ` --nv-host="<path>"`, then
 * ` <basePtxOptions>`.
 */
export function buildBasePtxOptions(given: Pick<PtxasArgvOptions, 'hostCodePath' | 'basePtxOptions' | 'env'> = {}): string {
  // The options' own fields only (ownFields), as every argv builder here reads them: an
  // inherited basePtxOptions or hostCodePath would be in every ptxas argv. And only these three.
  return basePtxOptions(ownOptions('options', given, BASE_PTX_OPTION_KEYS))
}

/** buildBasePtxOptions of options already read by their own fields (ptxasTokens', which have more). */
function basePtxOptions(options: Pick<PtxasArgvOptions, 'hostCodePath' | 'basePtxOptions' | 'env'>): string {
  const env = options.env ?? process.env
  requireObject('env', env)
  let base = ''
  const knobs = knobsFileFromEnv(env)
  if (knobs !== null) {
    requireNoNul('env.PTX_KNOBS_PATH', requireString('env.PTX_KNOBS_PATH', knobs))
    // tileiras writes this path unquoted. That is the same string for any ordinary path; a path
    // with blanks, quotes or backslashes is quoted, or it would reach ptxas split into pieces.
    base += ` --knobs-file=${/[\s'"\\]/.test(knobs) ? quoteForSplit(knobs) : knobs}`
  }
  if (options.hostCodePath !== undefined) {
    base += ` --nv-host=${quoteForSplit(requireNoNul('hostCodePath', requireString('hostCodePath', options.hostCodePath)))}`
  }
  base += ` ${options.basePtxOptions === undefined ? '' : requireString('basePtxOptions', options.basePtxOptions)}`
  return base
}

/** Every ptxas token but the input: what goes before it and what goes after it. */
export interface PtxasTokens {
  readonly before: readonly string[]
  readonly after: readonly string[]
}

/** The input: the PTX text itself (one token after --input-as-string) or a PTX file's path. */
export type PtxasInput = { ptx: string } | { inputFile: string }

/** Check every option but the input and build their tokens, once. */
export function ptxasTokens(given: Omit<PtxasArgvOptions, 'ptx' | 'inputFile'>): PtxasTokens {
  requireObject('options', given)
  const options = ownFields(given)
  const gpuName = requireString('gpuName', options.gpuName)
  if (!GPU_NAME.test(gpuName)) throw invalidValue('gpuName', 'must look like sm_100', gpuName)
  const optLevel = options.optLevel ?? DEFAULT_OPT_LEVEL
  if (typeof optLevel !== 'number' || !Number.isInteger(optLevel)) throw invalidType('optLevel', 'an integer', optLevel)
  if (optLevel < 0 || optLevel > 0x7fffffff) throw outOfRange('optLevel', 'an integer from 0 to 2147483647', optLevel)
  const before = ['ptxas', ...(options.ptxasOptions === undefined ? [] : ptxasOptionTokens('ptxasOptions', options.ptxasOptions)), ...modeTokens(options), '-arch', gpuName, '--opt-level', String(optLevel)]
  const after = splitCommand(basePtxOptions(options), 'basePtxOptions')
  if (options.outputFile !== undefined) {
    after.push('-o', requireNoNul('outputFile', requireString('outputFile', options.outputFile)))
  }
  return { before, after }
}

/** The argv for one input, from tokens already checked: nothing is checked again. */
export function ptxasArgv(tokens: PtxasTokens, input: PtxasInput): string[] {
  // Which input by its own field: `'ptx' in` found a ptx on a polluted Object.prototype, and a
  // PTX file's run compiled that text instead.
  const ptx = own(input, 'ptx') as string | undefined
  const inputTokens = ptx !== undefined ? ['--input-as-string', ptx] : [own(input, 'inputFile') as string]
  return [...tokens.before, ...inputTokens, ...tokens.after]
}

/** The full ptxas argv, argv[0] = 'ptxas' included. */
export function buildPtxasArgv(given: PtxasArgvOptions): string[] {
  const options = ownOptions('options', given, PTXAS_ARGV_KEYS)
  const tokens = ptxasTokens(options)
  if (options.ptx !== undefined && options.inputFile !== undefined) {
    throw invalidType('ptx', 'undefined when inputFile is given', options.ptx)
  }
  if (options.ptx !== undefined) return ptxasArgv(tokens, { ptx: requireNoNul('ptx', requireString('ptx', options.ptx)) })
  if (options.inputFile !== undefined) {
    return ptxasArgv(tokens, { inputFile: requireNoNul('inputFile', requireString('inputFile', options.inputFile)) })
  }
  throw invalidType('ptx', 'a string (or give inputFile)', options.ptx)
}

/** Whether a PTX text fits in one argv string (MAX_ARG_STRLEN counts the terminating NUL). */
export function ptxFitsInArgv(ptx: string): boolean {
  requireString('ptx', ptx)
  return Buffer.byteLength(ptx, 'utf8') + 1 <= MAX_ARG_STRLEN
}

function modeTokens(options: Pick<PtxasArgvOptions, 'relocatable' | 'deviceDebug' | 'lineinfo' | 'sanitize'>): string[] {
  for (const field of ['relocatable', 'deviceDebug', 'lineinfo'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'boolean') throw invalidType(field, 'a boolean', options[field])
  }
  const sanitize = options.sanitize ?? 'none'
  if (sanitize !== 'none' && sanitize !== 'memcheck') throw invalidValue('sanitize', "must be 'memcheck' or 'none'", sanitize)
  const tokens: string[] = []
  if (options.relocatable === true) tokens.push('--compile-only')
  // Full debug info carries line info; ptxas warns about the pair and drops -lineinfo itself.
  if (options.deviceDebug === true) tokens.push('--device-debug')
  else if (options.lineinfo === true) tokens.push('--generate-line-info')
  if (sanitize === 'memcheck') tokens.push('--sanitize', 'memcheck')
  return tokens
}
