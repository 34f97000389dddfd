// The ptxas adapter (docs/toolchain-contract.md, "The ptxas child"): the PTX goes out on the
// command line, the cubin comes back through the child's stdout pipe, and ptxas's stderr is kept
// verbatim.
//
// The child is started the way tileiras starts it: the posix_spawn fast path (no setsid, no
// rlimits), stdin closed, the environment inherited unchanged unless the caller passes one, and a
// timeout. Two measured facts about ptxas 13.0 ("Measured: ptxas 13.0") shape the rest:
//   - it writes its cubin to elf.o unless given -o, so we append `-o /dev/stdout`, which works
//     because the harness gives the child a real pipe (pipe2), not a socket;
//   - one argv string is capped at MAX_ARG_STRLEN, so PTX too big for --input-as-string goes
//     into an anonymous file (a memfd) that ptxas inherits as its stdin and reads as the
//     positional input file /dev/fd/0, instead of failing with E2BIG: nothing is on disk, so
//     nothing is left there even when this process is SIGKILLed. Where memfd_create is not
//     available, a private temp file is the fallback. `inputRoute` in the result says which way
//     it went.
// ptxas names its input in its messages by where it read it, which on none of these routes is the
// user's file; with `inputName` the messages name that instead (ptxas-input-name.ts).

import { spawnChild, spawnChildSync } from '../spawn/index.js'
import type { ChildResult, ChildSpec } from '../spawn/types.js'
import { invalidType, invalidValue, optionKeys, ownOptions, requireAbortSignal, requireNoNul, requireObject, requireString, requireTimeout } from '../errors.js'
import { validateKnobFile } from './knobs.js'
import { splitMergedOutput, cubinExtent } from './merged-output.js'
import { knobsFileFromEnv, ptxasArgv, ptxasTokens, ptxFitsInArgv, type PtxasArgvOptions, type PtxasTokens } from './ptxas-argv.js'
import { PTXAS_ARGV_INPUT, renamePtxasInput } from './ptxas-input-name.js'
import { checkBaseName, withAnonymousFile, withPrivateTempFile } from './temp-file.js'
import type { SpawnedEnv } from '../spawn-failure.js'
import { decodeToolResult, type ToolStatus } from './tool-status.js'

/** Where ptxas is told to write its cubin: our end of the stdout pipe. */
export const PTXAS_OUTPUT = '/dev/stdout'

/** A wedged ptxas must not hang a build forever; big kernels can legitimately take minutes. */
export const DEFAULT_PTXAS_TIMEOUT_MS = 10 * 60 * 1000

export type InputRoute = 'argv' | 'memfd' | 'file'

/** The path ptxas reads the PTX from on the memfd route: the memfd is its stdin. */
export const PTXAS_MEMFD_INPUT = '/dev/fd/0'

export interface RunPtxasOptions extends Omit<PtxasArgvOptions, 'ptx' | 'inputFile' | 'outputFile'> {
  /** The program to start; default 'ptxas', found by the harness on the child's PATH. */
  ptxas?: string
  /** The child's environment (and the one the knob gate reads); default: inherited unchanged. */
  env?: Record<string, string | undefined>
  /** Milliseconds, 0 = none; default DEFAULT_PTXAS_TIMEOUT_MS. */
  timeout?: number
  /** tileiras's shape: stderr merged into stdout with dup2, one buffer to split. Default false. */
  mergeStderr?: boolean
  /**
   * 'auto' (default): argv when the PTX fits in one argv string, else 'memfd'. 'memfd' falls back
   * to 'file' (a private temp file) when memfd_create fails; the result says which was taken.
   */
  inputRoute?: 'auto' | InputRoute
  /** Name of the PTX file (plus '.ptx') on the file route, and the memfd's label; default 'module'. */
  inputBaseName?: string
  /**
   * What ptxas's messages call the input (the user's file name, `<stdin>`): the location in each
   * `ptxas <location>, line N;` prefix becomes this, whatever the route. Default: ptxas's own
   * words (`application ptx input`, `/dev/fd/0`, the temp file's path).
   */
  inputName?: string
  /** Directory that holds the private temp directory; default os.tmpdir(). */
  tempRoot?: string
  /** Parse the knobs file (when the MLIR_ENABLE_EVO/PTX_KNOBS_PATH gate forwards one) before spawning. */
  validateKnobs?: boolean
  /** Bytes of output kept (passed to the harness). */
  maxBuffer?: number
  /** runPtxasAsync only: aborting kills ptxas; the result's status is then 'aborted'. */
  signal?: AbortSignal
}

const RUN_PTXAS_KEYS = optionKeys<RunPtxasOptions>({
  gpuName: true, optLevel: true, ptxasOptions: true, relocatable: true, deviceDebug: true, lineinfo: true, sanitize: true,
  hostCodePath: true, basePtxOptions: true, env: true, ptxas: true, timeout: true, mergeStderr: true, inputRoute: true,
  inputBaseName: true, inputName: true, tempRoot: true, validateKnobs: true, maxBuffer: true, signal: true,
})

export type PtxasStatus = ToolStatus | 'no-cubin'

export interface PtxasRun {
  status: PtxasStatus
  ok: boolean
  /** The cubin, only when ptxas exited 0 and wrote a whole one; never partial. */
  cubin: Buffer | null
  /**
   * ptxas's stderr (in merged mode: the text around the cubin), verbatim, as UTF-8 text, except
   * that with `inputName` its messages' location prefix names the input by that name.
   */
  diagnostics: string
  /** ptxas's stderr as it wrote it, undecoded (the location prefix not renamed). */
  diagnosticBytes: Buffer
  /** The harness's or our one-line verdict; '' on success. */
  message: string
  exitCode: number | null
  inputRoute: InputRoute
  /** The argv ptxas got (argv[0] = 'ptxas'). */
  argv: string[]
  result: ChildResult
}

/**
 * Compile PTX text with ptxas. Throws for bad input (TypeError/RangeError, KnobFileError), and a
 * TempFileError when the PTX needs a temp file (the file route) and it cannot be made.
 */
export function runPtxas(ptx: string, options: RunPtxasOptions): PtxasRun {
  const plan = planPtxas(ptx, options, 'sync')
  return withPtxInput(plan, ptx, launch => interpretPtxasResult(spawnChildSync(launch.spawned), launch))
}

/** runPtxas on the event loop; the PTX's file, if any, outlives the child and no longer. */
export async function runPtxasAsync(ptx: string, options: RunPtxasOptions): Promise<PtxasRun> {
  const plan = planPtxas(ptx, options, 'async')
  return withPtxInput(plan, ptx, async launch => interpretPtxasResult(await spawnChild(launch.spawned), launch))
}

/**
 * Runs `use` with the launch of the plan's route, the PTX's memfd or temp file existing for as
 * long as `use` runs (or its promise is pending) and no longer.
 */
function withPtxInput<T>(plan: PtxasPlan, ptx: string, use: (launch: PtxasLaunch) => T): T {
  if (plan.inputRoute === 'argv') return use(ptxasLaunch(plan, 'argv', { ptx }, PTXAS_ARGV_INPUT))
  const viaFile = () => withPrivateTempFile({ name: `${plan.inputBaseName}.ptx`, data: ptx, tempRoot: plan.tempRoot },
    temp => use(ptxasLaunch(plan, 'file', { inputFile: temp!.path }, temp!.path)))
  if (plan.inputRoute === 'file') return viaFile()
  return withAnonymousFile(`${plan.inputBaseName}.ptx`, ptx, fd => fd === null
    ? viaFile()
    : use(ptxasLaunch(plan, 'memfd', { inputFile: PTXAS_MEMFD_INPUT }, PTXAS_MEMFD_INPUT, fd)))
}

interface PtxasLaunch {
  argv: string[]
  inputRoute: InputRoute
  mergeStderr: boolean
  spawned: ChildSpec
  inputName?: { location: string; name: string }
}

/**
 * The argv and child spec of one ptxas run, and what interpreting its result needs; `location` is
 * what ptxas's messages will call the input on this route.
 */
function ptxasLaunch(plan: PtxasPlan, inputRoute: InputRoute, input: { ptx: string } | { inputFile: string }, location: string, stdin?: number): PtxasLaunch {
  const argv = ptxasArgv(plan.tokens, input)
  const { program, env, timeout, mergeStderr, maxBuffer, signal } = plan
  const launch: PtxasLaunch = { argv, inputRoute, mergeStderr, spawned: ptxasChildSpec(argv, { program, env, timeout, mergeStderr, maxBuffer, signal, stdin }) }
  if (plan.inputName !== undefined) launch.inputName = { location, name: plan.inputName }
  return launch
}

interface PtxasPlan {
  /** Every token but the input's, built once. */
  tokens: PtxasTokens
  inputRoute: InputRoute
  inputBaseName: string
  inputName: string | undefined
  tempRoot: string | undefined
  program: string
  env: Record<string, string | undefined> | undefined
  timeout: number
  mergeStderr: boolean
  maxBuffer: number | undefined
  signal: AbortSignal | undefined
}

/** All option checking, in one place, before anything is created or started. */
function planPtxas(ptx: string, given: RunPtxasOptions, api: 'sync' | 'async'): PtxasPlan {
  requireNoNul('ptx', requireString('ptx', ptx))
  // The caller's own fields, each read once: a ptxas, env, timeout or inputRoute inherited from a
  // polluted Object.prototype is as if absent, not the program every compile starts. A field
  // that is no option (a misspelt `optlevel`) is refused, not a run with the default.
  const options = ownOptions('options', given, RUN_PTXAS_KEYS)
  const route = options.inputRoute ?? 'auto'
  if (route !== 'auto' && route !== 'argv' && route !== 'memfd' && route !== 'file') {
    throw invalidValue('inputRoute', "must be 'auto', 'argv', 'memfd' or 'file'", route)
  }
  const inputRoute: InputRoute = route === 'auto' ? (ptxFitsInArgv(ptx) ? 'argv' : 'memfd') : route
  const program = options.ptxas ?? 'ptxas'
  if (requireNoNul('ptxas', requireString('ptxas', program)) === '') throw invalidValue('ptxas', 'must not be empty')
  const timeout = requireTimeout(options.timeout ?? DEFAULT_PTXAS_TIMEOUT_MS)
  if (options.tempRoot !== undefined) requireString('tempRoot', options.tempRoot)
  if (options.env !== undefined) requireObject('env', options.env)
  if (options.signal !== undefined) {
    if (api === 'sync') throw invalidValue('signal', 'is for runPtxasAsync: runPtxas cannot be cancelled')
    requireAbortSignal('signal', options.signal)
  }
  // Every argv error is thrown here, before a file for the input exists.
  const tokens = ptxasTokens({
    gpuName: options.gpuName,
    optLevel: options.optLevel,
    ptxasOptions: options.ptxasOptions,
    relocatable: options.relocatable,
    deviceDebug: options.deviceDebug,
    lineinfo: options.lineinfo,
    sanitize: options.sanitize,
    hostCodePath: options.hostCodePath,
    basePtxOptions: options.basePtxOptions,
    env: options.env,
    outputFile: PTXAS_OUTPUT,
  })

  const inputBaseName = checkBaseName('inputBaseName', options.inputBaseName ?? 'module')
  const inputName = options.inputName === undefined ? undefined : requireNoNul('inputName', requireString('inputName', options.inputName))

  if (options.validateKnobs === true) {
    const knobs = knobsFileFromEnv(options.env ?? process.env)
    if (knobs !== null) validateKnobFile(knobs)
  }
  return {
    tokens,
    inputRoute,
    inputBaseName,
    inputName,
    tempRoot: options.tempRoot,
    program,
    env: options.env,
    timeout,
    mergeStderr: options.mergeStderr === true,
    maxBuffer: options.maxBuffer,
    signal: options.signal,
  }
}

/** How ptxasChildSpec starts ptxas. */
export interface PtxasChildOptions {
  measure?: boolean | undefined
  program?: string | undefined
  env?: Record<string, string | undefined> | undefined
  timeout?: number | undefined
  mergeStderr?: boolean | undefined
  maxBuffer?: number | undefined
  signal?: AbortSignal | undefined
  /** An fd the child gets as its stdin: the PTX's memfd. */
  stdin?: number | undefined
}

const PTXAS_CHILD_KEYS = optionKeys<PtxasChildOptions>({
  measure: true, program: true, env: true, timeout: true, mergeStderr: true, maxBuffer: true, signal: true, stdin: true,
})

/** What interpretPtxasResult is told of the run. */
export interface PtxasRunContext {
  argv: string[]
  inputRoute: InputRoute
  mergeStderr: boolean
  spawned?: { file: string | URL; env?: SpawnedEnv }
  /** Rename the input in ptxas's messages: `location` (as ptxas calls it) becomes `name`. */
  inputName?: { location: string; name: string }
}

const CONTEXT_KEYS = optionKeys<PtxasRunContext>({ argv: true, inputRoute: true, mergeStderr: true, spawned: true, inputName: true })
const INPUT_NAME_KEYS = optionKeys<NonNullable<PtxasRunContext['inputName']>>({ location: true, name: true })

/**
 * tileiras's ptxas child: posix_spawn, stdin closed (on the memfd route: the memfd), cubin on a
 * stdout pipe, stderr piped or merged. Measured (unless `measure: false`), so the rusage reported
 * for ptxas is ptxas's own and not inflated to this process's RSS.
 */
export function ptxasChildSpec(argv: readonly string[], given: PtxasChildOptions): ChildSpec {
  if (!Array.isArray(argv)) throw invalidType('argv', 'an array of strings', argv)
  // Its own fields only: an inherited program or measure: false is not how ptxas is started.
  const options = ownOptions('options', given, PTXAS_CHILD_KEYS)
  const spec: ChildSpec = {
    file: options.program ?? 'ptxas',
    argv0: argv[0],
    args: argv.slice(1),
    stdin: options.stdin ?? 'closed',
    stdout: 'pipe',
    stderr: options.mergeStderr === true ? 'stdout' : 'pipe',
    timeout: options.timeout ?? DEFAULT_PTXAS_TIMEOUT_MS,
    launcher: 'posix_spawn',
    measure: options.measure !== false,
  }
  if (options.env !== undefined) spec.env = options.env
  if (options.maxBuffer !== undefined) spec.maxBuffer = options.maxBuffer
  if (options.signal !== undefined) spec.signal = options.signal
  return spec
}

/**
 * Read a finished ptxas child: the exit-status table (tool-status.ts), then the cubin. On exit 0 the cubin
 * must be whole (a valid ELF that ends where stdout ends, or in merged mode the first valid ELF
 * in the buffer); anything else is 'no-cubin'. On any failure there is no cubin.
 */
export function interpretPtxasResult(result: ChildResult, given: PtxasRunContext): PtxasRun {
  requireObject('result', result)
  // Its own fields only: a run without inputName has none, and one inherited from a polluted
  // Object.prototype would rename every message.
  const context = ownOptions('context', given, CONTEXT_KEYS)
  // The rename's two names by their own fields too, each a string: checked before anything is read.
  let inputName: { location: string; name: string } | undefined
  if (context.inputName !== undefined) {
    const names = ownOptions('context.inputName', context.inputName, INPUT_NAME_KEYS)
    inputName = { location: requireString('context.inputName.location', names.location), name: requireString('context.inputName.name', names.name) }
  }
  const verdict = decodeToolResult('ptxas', result, context.spawned)
  let status: PtxasStatus = verdict.status
  let message = verdict.message
  let cubin: Buffer | null = null
  // In merged mode there is no separate stderr: the whole buffer is the diagnostic unless a cubin is cut out of it.
  let diagnosticBytes = context.mergeStderr ? result.stdout : result.stderr

  if (status === 'ok') {
    if (result.stdoutTruncated) {
      status = 'no-cubin'
      message = 'ptxas output was larger than maxBuffer; the cubin was cut short'
    } else if (context.mergeStderr) {
      const split = splitMergedOutput(result.stdout)
      cubin = split.cubin
      diagnosticBytes = split.diagnostics
    } else if (cubinExtent(result.stdout) === result.stdout.length) {
      cubin = result.stdout
    }
    if (status === 'ok' && cubin === null) {
      status = 'no-cubin'
      message = 'ptxas exited with status 0 but wrote no cubin to stdout'
    }
  }
  // A failure whose messages went past maxBuffer: said, for its last words (often the error) are
  // among those dropped.
  if (status !== 'ok' && !context.mergeStderr && result.stderrTruncated) {
    message = `${message}; its messages were cut at maxBuffer (${diagnosticBytes.length} bytes kept)`
  }
  return {
    status,
    ok: status === 'ok',
    cubin,
    diagnostics: inputName === undefined
      ? diagnosticBytes.toString('utf8')
      : renamePtxasInput(diagnosticBytes.toString('utf8'), inputName.location, inputName.name),
    diagnosticBytes,
    message,
    exitCode: result.exitCode,
    inputRoute: context.inputRoute,
    argv: context.argv,
    result,
  }
}
