// The SASS dump adapter and tileiras's own nvdisasm argv (docs/toolchain-contract.md, "The SASS
// dump (nvdisasm)").
//
// dumpSass splits its command string into argv words (the first one resolves through PATH),
// writes the cubin to a private temp file, appends that file's path as the last argv element,
// runs the command, captures stdout, and removes the temp file on every path. A cubin path given
// by the caller is used as is and stays the caller's. A failing dump command is a compile
// failure: its stderr is surfaced verbatim.

import { spawnChild, spawnChildSync } from '../spawn/index.js'
import type { ChildResult, ChildSpec } from '../spawn/types.js'
import { argumentError, invalidType, invalidValue, isBytes, optionKeys, ownOptions, requireAbortSignal, requireNoNul, requireObject, requireString, requireTimeout } from '../errors.js'
import { splitCommand } from '../split-command.js'
import { checkBaseName, withPrivateTempFile, type PrivateTempFile, type TempFileRequest } from './temp-file.js'
import { decodeToolResult, type ToolStatus } from './tool-status.js'

/** tileiras's documented default dumpSassCommand. */
export const DEFAULT_DUMP_SASS_COMMAND = 'nvdisasm -c'

/** tileiras's error for a command that splits into nothing, verbatim. */
export const EMPTY_DUMP_SASS_COMMAND = 'Please provide a valid dumpSassCommand. For example, `nvdisasm -c`.'

/** tileiras's flag block: five bytes, four flags, one argv element. */
export const NVDISASM_FLAG_BLOCK = '-uumn'

/**
 * The sanitize=memcheck tail, one argv element, leading space included: 40 characters (41 bytes
 * with the NUL that ends it in tileiras's binary).
 */
export const NVDISASM_SANITIZE_TAIL = ' -sanitize=memcheck -g-tmem-access-check'

/** A dump that runs longer than this is stuck, not busy. */
export const DEFAULT_DUMP_SASS_TIMEOUT_MS = 5 * 60 * 1000

export interface NvdisasmArgvOptions {
  /** 'memcheck' (tileiras's sanitize == 1, its only mode) adds the sanitize tail. */
  sanitize?: 'memcheck' | 'none'
}

const NVDISASM_ARGV_KEYS = optionKeys<NvdisasmArgvOptions>({ sanitize: true })

/** tileiras's nvdisasm argv: ['nvdisasm', '-c', '-uumn'] plus the sanitize tail for memcheck. */
export function buildNvdisasmArgv(options: NvdisasmArgvOptions = {}): string[] {
  const { sanitize = 'none' } = ownOptions('options', options, NVDISASM_ARGV_KEYS)
  if (sanitize !== 'memcheck' && sanitize !== 'none') throw invalidValue('sanitize', "must be 'memcheck' or 'none'", sanitize)
  const argv = ['nvdisasm', '-c', NVDISASM_FLAG_BLOCK]
  if (sanitize === 'memcheck') argv.push(NVDISASM_SANITIZE_TAIL)
  return argv
}

export interface DumpSassOptions {
  /** The dumpSassCommand, split with splitCommand; default 'nvdisasm -c'. */
  command?: string
  /** The temp cubin is named <inputBaseName>.cubin; default 'module'. */
  inputBaseName?: string
  /** An existing cubin to dump instead of writing one; never removed. */
  cubinPath?: string
  /** The child's environment; default: inherited unchanged. */
  env?: Record<string, string | undefined>
  /** Milliseconds, 0 = none; default DEFAULT_DUMP_SASS_TIMEOUT_MS. */
  timeout?: number
  /** Directory that holds the private temp directory; default os.tmpdir(). */
  tempRoot?: string
  maxBuffer?: number
  /** dumpSassAsync only: aborting kills the command; the result's status is then 'aborted'. */
  signal?: AbortSignal
}

const DUMP_SASS_KEYS = optionKeys<DumpSassOptions>({
  command: true, inputBaseName: true, cubinPath: true, env: true, timeout: true, tempRoot: true, maxBuffer: true, signal: true,
})

export interface SassDump {
  status: ToolStatus
  ok: boolean
  /** The command's stdout, as UTF-8 text; '' unless ok. */
  sass: string
  /** The command's stderr, verbatim, as UTF-8 text. */
  diagnostics: string
  diagnosticBytes: Buffer
  /** The harness's or our one-line verdict; '' on success. */
  message: string
  exitCode: number | null
  /** The argv that ran, the cubin path last. */
  argv: string[]
  result: ChildResult
}

/** Dump a cubin's SASS. Throws for bad input (TypeError/RangeError) and a TempFileError when the cubin's temp file cannot be made. */
export function dumpSass(cubin: Uint8Array | null | undefined, given: DumpSassOptions = {}): SassDump {
  const options = dumpOptions(given)
  const plan = planDump(commandWords(options), cubin, options, 'sync')
  return withPrivateTempFile(cubinFile(plan), temp => {
    const argv = dumpArgv(plan, temp)
    return interpretDumpResult(spawnChildSync(dumpChildSpec(argv, plan)), argv, plan.env)
  })
}

/** dumpSass on the event loop; the temp cubin outlives the child and no longer. */
export async function dumpSassAsync(cubin: Uint8Array | null | undefined, given: DumpSassOptions = {}): Promise<SassDump> {
  const options = dumpOptions(given)
  return dumpWordsAsync(commandWords(options), cubin, options)
}

/**
 * dumpSassAsync for a caller that holds the command as words already, from dumpCommandWords
 * (the Program's pipeline, which may have put a toolkit's nvdisasm in the first word).
 */
export async function dumpWordsAsync(
  words: readonly string[],
  cubin: Uint8Array | null | undefined,
  options: Omit<DumpSassOptions, 'command'>,
): Promise<SassDump> {
  const plan = planDump(words, cubin, options, 'async')
  return withPrivateTempFile(cubinFile(plan), async temp => {
    const argv = dumpArgv(plan, temp)
    return interpretDumpResult(await spawnChild(dumpChildSpec(argv, plan)), argv, plan.env)
  })
}

/**
 * A dump command's argv words: split like sh would (splitCommand). A command that gives no words
 * at all fails with tileiras's own message, verbatim (it names the option itself).
 */
export function dumpCommandWords(command: string, field: string): string[] {
  const words = splitCommand(command, field)
  if (words.length === 0) throw argumentError(TypeError, 'ERR_INVALID_ARG_VALUE', field, EMPTY_DUMP_SASS_COMMAND)
  if (words[0] === '') throw invalidValue(field, 'must not start with an empty word')
  return words
}

/**
 * The caller's options by their own fields, each read once: a command, env or cubinPath inherited
 * from a polluted Object.prototype is as if absent, not what every dump runs or reads; a field
 * that is no option (a misspelt `timout`) is refused.
 */
function dumpOptions<T extends Omit<DumpSassOptions, 'command'>>(options: T): T {
  return ownOptions('options', options, DUMP_SASS_KEYS)
}

function commandWords(options: DumpSassOptions): string[] {
  return dumpCommandWords(requireString('command', options.command ?? DEFAULT_DUMP_SASS_COMMAND), 'command')
}

interface DumpPlan {
  words: readonly string[]
  cubin: Uint8Array | null
  cubinPath: string | undefined
  inputBaseName: string
  tempRoot: string | undefined
  timeout: number
  env: Record<string, string | undefined> | undefined
  maxBuffer: number | undefined
  signal: AbortSignal | undefined
}

/** All option checking but the command's, in one place, before anything is created or started. */
function planDump(
  words: readonly string[],
  cubin: Uint8Array | null | undefined,
  given: Omit<DumpSassOptions, 'command'>,
  api: 'sync' | 'async',
): DumpPlan {
  const options = dumpOptions(given)
  const timeout = requireTimeout(options.timeout ?? DEFAULT_DUMP_SASS_TIMEOUT_MS)
  const inputBaseName = checkBaseName('inputBaseName', options.inputBaseName ?? 'module')
  if (options.tempRoot !== undefined) requireString('tempRoot', options.tempRoot)
  if (options.env !== undefined) requireObject('env', options.env)
  if (options.signal !== undefined) {
    if (api === 'sync') throw invalidValue('signal', 'is for dumpSassAsync: dumpSass cannot be cancelled')
    requireAbortSignal('signal', options.signal)
  }
  const cubinPath = options.cubinPath
  if (cubinPath !== undefined) {
    if (requireNoNul('cubinPath', requireString('cubinPath', cubinPath)) === '') throw invalidValue('cubinPath', 'must not be empty')
  } else if (!isBytes(cubin)) {
    throw invalidType('cubin', 'a Buffer or Uint8Array (or give cubinPath)', cubin)
  }
  return {
    words,
    cubin: cubinPath === undefined ? (cubin as Uint8Array) : null,
    cubinPath,
    inputBaseName,
    tempRoot: options.tempRoot,
    timeout,
    env: options.env,
    maxBuffer: options.maxBuffer,
    signal: options.signal,
  }
}

/** The temp cubin, unless the caller gave a path (which stays the caller's). */
function cubinFile(plan: DumpPlan): TempFileRequest | null {
  return plan.cubin === null ? null : { name: `${plan.inputBaseName}.cubin`, data: plan.cubin, tempRoot: plan.tempRoot }
}

/** The command's words with the cubin path as the final argv element. */
function dumpArgv(plan: DumpPlan, temp: PrivateTempFile | null): string[] {
  return [...plan.words, temp === null ? (plan.cubinPath as string) : temp.path]
}

function dumpChildSpec(argv: string[], plan: DumpPlan): ChildSpec {
  const spec: ChildSpec = {
    file: argv[0],
    args: argv.slice(1),
    stdin: 'closed',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: plan.timeout,
    launcher: 'posix_spawn',
    // Through the measuring helper, which takes PR_SET_PDEATHSIG (posix_spawn cannot give the
    // command one): a driver killed by SIGKILL takes its dump command with it, as it does ptxas.
    measure: true,
  }
  if (plan.env !== undefined) spec.env = plan.env
  if (plan.maxBuffer !== undefined) spec.maxBuffer = plan.maxBuffer
  if (plan.signal !== undefined) spec.signal = plan.signal
  return spec
}

/** Read a finished dump command; a truncated stdout is a failure, never a partial dump. */
export function interpretDumpResult(result: ChildResult, argv: string[], env?: NodeJS.ProcessEnv): SassDump {
  requireObject('result', result)
  if (!Array.isArray(argv)) throw invalidType('argv', 'an array of strings', argv)
  const tool = argv[0]
  let { status, message } = decodeToolResult(tool, result, { file: tool, env })
  if (status === 'ok' && result.stdoutTruncated) {
    status = 'failed'
    message = `${tool} output was larger than maxBuffer`
  }
  const ok = status === 'ok'
  return {
    status,
    ok,
    sass: ok ? result.stdout.toString('utf8') : '',
    diagnostics: result.stderr.toString('utf8'),
    diagnosticBytes: result.stderr,
    message,
    exitCode: result.exitCode,
    argv,
    result,
  }
}
