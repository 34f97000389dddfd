// The Program handle (seed 004, "Driver Program Handle"): create / compile / getOutput / release
// over one PTX translation unit, with the seed's public error codes and verbatim messages.
//
//   create    validates the configuration in the seed's fixed order (tileirasProgramCreate
//             Validation Order) and keeps the PTX text; nothing is started.
//   compile   PTX -> ptxas (runPtxasAsync) -> optional SASS dump (dumpSassAsync) -> host ELF object
//             (packageHostObject). Any failure is status 5 with the tool's stderr verbatim and no
//             output; the output replaces the previous one only when the whole pipeline succeeded.
//   getOutput the output of the last successful compile, else status 4.
//   release   drops the output and kills a compile still running; the handle is "null" afterwards.
//
// What is ours rather than the seed's: the input is PTX (the seed's is Tile IR bytecode), so the
// status-3 probe asks "is this PTX text?"; compile() is async and cancellable (seed 003, Phase 2);
// and compileMany runs the tools in parallel and then finalizes in input order (seed 003, Phase 23b
// and QUIRK 3), so callbacks and results never depend on which child finished first.
//
// Status 1 ("failed to allocate memory for program") is in the table for completeness; in
// JavaScript a failed allocation throws before any code of ours could report it.

import { availableParallelism } from 'node:os'
import { performance } from 'node:perf_hooks'
import { readCubin, type CubinKernel } from '../elf/cubin.js'
import { packageHostObject } from '../elf/package.js'
import { printModule } from '../ptx/print.js'
import type { PtxModule } from '../ptx/types.js'
import type { ChildRusage } from '../spawn/types.js'
import { invalidType, invalidValue, outOfRange, requireAbortSignal, requireNoNul, requireObject, requireString, requireTimeout } from '../errors.js'
import { dumpCommandWords, dumpWordsAsync } from './nvdisasm.js'
import { DEFAULT_OPT_LEVEL } from './ptxas-argv.js'
import { runPtxasAsync, type InputRoute, type PtxasStatus } from './ptxas.js'
import { checkBaseName } from './temp-file.js'
import { CUDA_ROOT_VARIABLES, findTool, type CudaTool, type Env } from './toolkit.js'

// ---------------------------------------------------------------------------------------------
// The seed's error table: one row per message, verbatim.

export type ProgramStatus = 0 | 1 | 2 | 3 | 4 | 5
export type ProgramErrorStatus = Exclude<ProgramStatus, 0>

export const PROGRAM_ERRORS = Object.freeze({
  ALLOCATION_FAILED: { status: 1, message: 'failed to allocate memory for program' },
  CONFIGURATION_NULL: { status: 2, message: 'configuration is null' },
  INPUT_BUFFER_NULL: { status: 2, message: 'input buffer is null' },
  NOT_PTX: { status: 3, message: 'input does not correspond to PTX text' },
  UNSUPPORTED_GPU_TARGET: { status: 2, message: 'unsupported GPU target' },
  INVALID_OPT_LEVEL: { status: 2, message: 'invalid optimization level' },
  OPTIMIZED_DEBUGGING: {
    status: 2,
    message: 'optimized debugging is not supported, change optimization level to 0 or disable full debug info',
  },
  UNSUPPORTED_HOST_ARCH: { status: 2, message: 'unsupported host architecture' },
  UNSUPPORTED_HOST_OS: { status: 2, message: 'unsupported host operating system' },
  PROGRAM_NULL: { status: 4, message: 'program is null' },
  OUTPUT_POINTER_NULL: { status: 4, message: 'output pointer is null' },
  NOT_COMPILED: { status: 4, message: 'program has not been compiled' },
  COMPILE_FAILED: { status: 5, message: 'failed to compile Tile IR program' },
} as const satisfies Record<string, { status: ProgramErrorStatus; message: string }>)

export type ProgramErrorCode = keyof typeof PROGRAM_ERRORS

/** The status-3 hints, appended to the NOT_PTX message when the input's magic says what it is. */
export const LOOKS_LIKE_TILE_IR = ' (it looks like Tile IR bytecode instead)'
export const LOOKS_LIKE_MLIR = ' (it looks like MLIR bytecode instead)'
/** "\x7fTileIR\0" (seed 002, "File formats at each handoff"). */
export const TILE_IR_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x7f, 0x54, 0x69, 0x6c, 0x65, 0x49, 0x52, 0x00)
/** "ML\xefR", upstream MLIR bytecode. */
export const MLIR_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x4d, 0x4c, 0xef, 0x52)

/** Which step failed: ptxas, or the SASS dump command. */
export type ProgramTool = 'ptxas' | 'dump-sass'

export interface ProgramErrorDetails {
  /** One line saying why, beyond the seed's message ('' when the message says it all). */
  reason?: string
  /** Status 3 only: the bytecode the input looks like. */
  looksLike?: 'tile-ir' | 'mlir' | null
  diagnostics?: string
  tool?: ProgramTool | null
  toolStatus?: PtxasStatus | null
  cause?: unknown
}

/**
 * Every failure of the Program API: `status` 1-5 and, in `message`, the seed's diagnostic
 * verbatim (with the status-3 suffix when there is one). Whatever else is known is in `reason`;
 * a tool's stderr is in `diagnostics`, byte for byte as the tool wrote it.
 */
export class ProgramError extends Error {
  readonly status: ProgramErrorStatus
  readonly code: ProgramErrorCode
  readonly reason: string
  readonly looksLike: 'tile-ir' | 'mlir' | null
  /** The failing tool's stderr, verbatim; '' when no tool ran or it printed nothing. */
  readonly diagnostics: string
  readonly tool: ProgramTool | null
  readonly toolStatus: PtxasStatus | null

  constructor(code: ProgramErrorCode, details: ProgramErrorDetails = {}) {
    const row = PROGRAM_ERRORS[code]
    if (row === undefined) throw invalidValue('code', `must be one of ${Object.keys(PROGRAM_ERRORS).join(', ')}`, code)
    const looksLike = details.looksLike ?? null
    const suffix = looksLike === 'tile-ir' ? LOOKS_LIKE_TILE_IR : looksLike === 'mlir' ? LOOKS_LIKE_MLIR : ''
    super(row.message + suffix, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'ProgramError'
    this.status = row.status
    this.code = code
    this.reason = details.reason ?? ''
    this.looksLike = looksLike
    this.diagnostics = details.diagnostics ?? ''
    this.tool = details.tool ?? null
    this.toolStatus = details.toolStatus ?? null
  }
}

// ---------------------------------------------------------------------------------------------
// Configuration.

/** The seed's GPU whitelist {100, 103, 110, 120, 121}. */
export const SUPPORTED_GPU_TARGETS = Object.freeze(['sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121'] as const)
/** The seed's host_arch 0, 1, 2. */
export const HOST_ARCHS = Object.freeze(['x86_64', 'aarch64', 'arm64ec'] as const)
/** The seed's host_os 0, 1. */
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
  /** Default 'linux'. 'windows' (a COFF object) is accepted here and fails at compile. */
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
}

interface ResolvedConfig {
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
}

/** The host arch of this machine, as the seed names it. */
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
 * The status-3 probe: PTX text is UTF-8 text without NUL bytes whose first statement (after
 * blanks and comments) is a `.version` directive, as the PTX ISA requires of every module.
 */
export function probePtxText(input: unknown): string {
  let text: string
  if (typeof input === 'string') {
    if (startsWith(input, TILE_IR_MAGIC)) throw notPtx('it starts with the Tile IR bytecode magic', 'tile-ir')
    if (startsWith(input, MLIR_MAGIC)) throw notPtx('it starts with the MLIR bytecode magic', 'mlir')
    text = input
  } else if (input instanceof Uint8Array) {
    const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    if (startsWith(bytes, TILE_IR_MAGIC)) throw notPtx('it starts with the Tile IR bytecode magic', 'tile-ir')
    if (startsWith(bytes, MLIR_MAGIC)) throw notPtx('it starts with the MLIR bytecode magic', 'mlir')
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    } catch {
      throw notPtx('it is not UTF-8 text')
    }
  } else if (typeof input === 'object' && input !== null) {
    try {
      text = printModule(input as PtxModule)
    } catch (error) {
      throw notPtx(`the PTX module object cannot be printed: ${(error as Error).message}`, null, error)
    }
  } else {
    throw notPtx(`input must be PTX text, bytes or a PTX module object (got ${typeof input})`)
  }
  if (text.length === 0) throw notPtx('it is empty')
  const nul = text.indexOf('\0')
  if (nul !== -1) throw notPtx(`it contains a NUL byte at offset ${nul}`)
  if (!/^\.version[ \t]+\d+\.\d+(?![\w.])/.test(skipBlanksAndComments(text))) {
    throw notPtx('it does not begin with a .version directive')
  }
  return text
}

function notPtx(reason: string, looksLike: 'tile-ir' | 'mlir' | null = null, cause?: unknown): ProgramError {
  return new ProgramError('NOT_PTX', { reason, looksLike, cause })
}

function startsWith(value: string | Buffer, magic: Readonly<Uint8Array>): boolean {
  if (value.length < magic.length) return false
  for (let i = 0; i < magic.length; i++) {
    const unit = typeof value === 'string' ? value.charCodeAt(i) : value[i]
    if (unit !== magic[i]) return false
  }
  return true
}

function skipBlanksAndComments(text: string): string {
  let rest = text
  for (;;) {
    const next = rest.replace(/^\s+/, '').replace(/^\/\/[^\n]*/, '').replace(/^\/\*[\s\S]*?\*\//, '')
    if (next === rest) return rest
    rest = next
  }
}

/**
 * tileirasProgramCreate's checks, in its order; then the fields the seed has no check for, which
 * are programming errors (TypeError/RangeError with a `code` and `field`, as elsewhere in lib/cuda).
 */
function resolveConfig(config: ProgramConfig | null | undefined): { resolved: ResolvedConfig; ptx: string } {
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
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Output.

/** One child of the compile: what it was asked and what it cost (from wait4's rusage). */
export interface ToolRunSummary {
  argv: string[]
  /** The child's wall time, ms. */
  durationMs: number
  rusage: ChildRusage
  /** Its stderr, verbatim. */
  diagnostics: string
}

export interface ProgramOutput {
  /** The host ELF relocatable: <name>_cubin, <name>_cubin_size[, <name>_sass, <name>_sass_size]. */
  object: Buffer
  cubin: Buffer
  /** The dump command's stdout; null without a dumpSassCommand. */
  sass: string | null
  name: string
  gpuName: string
  /** The SM the cubin is for, read back from it (100 for sm_100). */
  sm: number
  /** The cubin's kernels: name, registers per thread, launch attributes. */
  kernels: CubinKernel[]
  /** This program's own compile time, ms (in compileMany: without the wait for the others). */
  wallMs: number
  ptxas: ToolRunSummary & { path: string; inputRoute: InputRoute }
  dumpSass: ToolRunSummary | null
}

export interface CompileOptions {
  /** Aborting kills the running child; the compile then fails with status 5. */
  signal?: AbortSignal
}

/** What the parallel half of a compile hands to the sequential half. */
type Assembled =
  | {
      ok: true
      diagnostics: Array<[string, ProgramTool]>
      cubin: Buffer
      sm: number
      kernels: CubinKernel[]
      sass: string | null
      ptxas: ProgramOutput['ptxas']
      dumpSass: ToolRunSummary | null
      ms: number
    }
  | { ok: false; diagnostics: Array<[string, ProgramTool]>; error: unknown }

/** compileMany's access to a Program's private steps; set by Program's static block. */
let internals: {
  enqueue<T>(program: Program, step: () => Promise<T>): Promise<T>
  assemble(program: Program, signal: AbortSignal | undefined): Promise<Assembled>
  finalize(program: Program, assembled: Assembled): ProgramOutput
  released(program: Program): boolean
}

const CREATE = Symbol('Program.create')

// ---------------------------------------------------------------------------------------------
// The handle.

export class Program {
  #config: ResolvedConfig
  #ptx: string
  #released = false
  #output: ProgramOutput | null = null
  /** Compiles of one program run one at a time, in call order. */
  #tail: Promise<unknown> = Promise.resolve()
  /** One controller per running compile; release() aborts them. */
  readonly #running = new Set<AbortController>()

  /** Use Program.create. */
  private constructor(token: symbol, config: ResolvedConfig, ptx: string) {
    if (token !== CREATE) throw new TypeError('use Program.create(config)')
    this.#config = config
    this.#ptx = ptx
  }

  /** tileirasProgramCreate: validates `config` in the seed's order; throws ProgramError (status 2 or 3). */
  static create(config: ProgramConfig): Program {
    const { resolved, ptx } = resolveConfig(config)
    return new Program(CREATE, resolved, ptx)
  }

  // The seed's C entry points, for code written against them: a null program is status 4, and
  // getOutput fills the caller's `out` object (its "output pointer").

  static compile(program: Program | null | undefined, options?: CompileOptions): Promise<ProgramOutput> {
    if (!(program instanceof Program)) return Promise.reject(new ProgramError('PROGRAM_NULL'))
    return program.compile(options)
  }

  static getOutput(program: Program | null | undefined, out: { output?: ProgramOutput } | null | undefined): void {
    if (!(program instanceof Program)) throw new ProgramError('PROGRAM_NULL')
    if (out === null || typeof out !== 'object') throw new ProgramError('OUTPUT_POINTER_NULL')
    out.output = program.getOutput()
  }

  static release(program: Program | null | undefined): void {
    if (!(program instanceof Program)) throw new ProgramError('PROGRAM_NULL')
    program.release()
  }

  /** True once release() has been called: every method then throws "program is null". */
  get released(): boolean {
    return this.#released
  }

  /** True when getOutput() has an output to return. */
  get compiled(): boolean {
    return !this.#released && this.#output !== null
  }

  /** The PTX text this program compiles (a module object's, printed). */
  get ptx(): string {
    this.#requireLive()
    return this.#ptx
  }

  /**
   * tileirasProgramCompile. Resolves with the output (also kept for getOutput); rejects with a
   * ProgramError: status 4 on a released program, 5 for any compile failure, after which there
   * is no output. A compile called while another of the same program runs waits for it.
   */
  compile(options: CompileOptions = {}): Promise<ProgramOutput> {
    if (this.#released) return Promise.reject(new ProgramError('PROGRAM_NULL'))
    try {
      requireObject('options', options)
      requireAbortSignal('signal', options.signal)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#enqueue(async () => this.#finalize(await this.#assemble(options.signal)))
  }

  /** tileirasProgramGetOutput: the last successful compile's output; status 4 before one. */
  getOutput(): ProgramOutput {
    this.#requireLive()
    if (this.#output === null) throw new ProgramError('NOT_COMPILED')
    return this.#output
  }

  /** tileirasProgramRelease: drops the output, kills a running compile; status 4 when already released. */
  release(): void {
    this.#requireLive()
    this.#released = true
    this.#output = null
    for (const controller of this.#running) controller.abort()
  }

  #requireLive(): void {
    if (this.#released) throw new ProgramError('PROGRAM_NULL')
  }

  #enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(step, step)
    this.#tail = run.catch(() => undefined)
    return run
  }

  /**
   * The parallel half: the children. Never rejects; a failure comes back as `{ ok: false }` with
   * the diagnostics gathered so far, so the sequential half can deliver them in order.
   */
  async #assemble(signal: AbortSignal | undefined): Promise<Assembled> {
    const started = performance.now()
    const diagnostics: Array<[string, ProgramTool]> = []
    const controller = new AbortController()
    const forward = (): void => controller.abort()
    signal?.addEventListener('abort', forward, { once: true })
    this.#running.add(controller)
    try {
      return await this.#runTools(controller.signal, signal, started, diagnostics)
    } catch (error) {
      return { ok: false, diagnostics, error }
    } finally {
      this.#running.delete(controller)
      signal?.removeEventListener('abort', forward)
    }
  }

  async #runTools(
    signal: AbortSignal,
    callerSignal: AbortSignal | undefined,
    started: number,
    diagnostics: Array<[string, ProgramTool]>,
  ): Promise<Assembled> {
    const config = this.#config
    if (this.#released) throw new ProgramError('PROGRAM_NULL')
    this.#output = null // a compile is a mutating call: the old output is gone, whatever happens
    if (config.hostOs === 'windows') {
      throw compileFailed('host operating system windows needs a COFF object, and tileharness can only package ELF so far')
    }
    if (config.hostArch === 'arm64ec') {
      throw compileFailed('host architecture arm64ec is a Windows (COFF) target, and tileharness can only package ELF so far')
    }
    // Seed 003, Phase 2: a cancelled compile touches nothing.
    if (callerSignal?.aborted) throw compileFailed('the compile was aborted before ptxas started', { toolStatus: 'aborted' })

    const deadline = config.timeout === undefined || config.timeout === 0 ? null : started + config.timeout
    const timeoutLeft = (): number | undefined => (deadline === null ? config.timeout : Math.max(1, Math.ceil(deadline - performance.now())))
    const env: Env = config.env ?? process.env

    // ptxas: the one on PATH, else <CUDA_ROOT>/bin/ptxas; if neither, the harness reports ENOENT.
    const ptxasPath = config.ptxas ?? findTool('ptxas', env)?.path ?? 'ptxas'
    // What both tool runs share: the caller's environment and temp root, the name for temp files.
    const common = {
      signal,
      inputBaseName: config.name,
      ...(config.env === undefined ? {} : { env: config.env }),
      ...(config.tempRoot === undefined ? {} : { tempRoot: config.tempRoot }),
    }
    const run = await runPtxasAsync(this.#ptx, {
      gpuName: config.gpuName,
      optLevel: config.optLevel,
      deviceDebug: config.deviceDebug,
      lineinfo: config.lineinfo,
      sanitize: config.sanitize,
      ptxas: ptxasPath,
      timeout: timeoutLeft(),
      ...common,
    })
    if (run.diagnostics !== '') diagnostics.push([run.diagnostics, 'ptxas'])
    if (!run.ok || run.cubin === null) {
      const reason = run.status === 'not-found' && config.ptxas === undefined ? toolNotFoundHint('ptxas', env, run.message) : run.message
      throw compileFailed(reason, { diagnostics: run.diagnostics, tool: 'ptxas', toolStatus: run.status })
    }
    const cubin = run.cubin
    let summary
    try {
      summary = readCubin(cubin)
    } catch (error) {
      throw compileFailed(`ptxas wrote a cubin that cannot be read: ${(error as Error).message}`, { tool: 'ptxas', cause: error })
    }
    const ptxas = {
      argv: run.argv,
      path: ptxasPath,
      inputRoute: run.inputRoute,
      durationMs: run.result.durationMs,
      rusage: run.result.rusage,
      diagnostics: run.diagnostics,
    }

    let sass: string | null = null
    let dumpSass: ToolRunSummary | null = null
    if (config.dumpSassCommand !== null) {
      if (callerSignal?.aborted) throw compileFailed('the compile was aborted before the SASS dump started', { toolStatus: 'aborted' })
      let words: string[]
      try {
        words = dumpCommandWords(config.dumpSassCommand, 'dumpSassCommand')
      } catch (error) {
        throw compileFailed((error as Error).message, { tool: 'dump-sass', cause: error })
      }
      const dump = await dumpWordsAsync(withToolkitNvdisasm(words, env), cubin, { timeout: timeoutLeft(), ...common })
      if (dump.diagnostics !== '') diagnostics.push([dump.diagnostics, 'dump-sass'])
      if (!dump.ok) {
        const reason = dump.status === 'not-found' && words[0] === 'nvdisasm' ? toolNotFoundHint('nvdisasm', env, dump.message) : dump.message
        throw compileFailed(reason, { diagnostics: dump.diagnostics, tool: 'dump-sass', toolStatus: dump.status })
      }
      sass = dump.sass
      dumpSass = { argv: dump.argv, durationMs: dump.result.durationMs, rusage: dump.result.rusage, diagnostics: dump.diagnostics }
    }
    return { ok: true, diagnostics, cubin, sm: summary.sm, kernels: summary.kernels, sass, ptxas, dumpSass, ms: performance.now() - started }
  }

  /**
   * The sequential half: diagnostics to the callback in the order the tools ran, then the host
   * object. The output is installed only here, and only when everything succeeded.
   */
  #finalize(assembled: Assembled): ProgramOutput {
    const started = performance.now()
    const config = this.#config
    if (config.onDiagnostic !== undefined) {
      for (const [text, tool] of assembled.diagnostics) config.onDiagnostic(text, tool)
    }
    if (this.#released) {
      throw new ProgramError('PROGRAM_NULL', { reason: 'the program was released while it was compiling' })
    }
    if (!assembled.ok) throw assembled.error
    let object: Buffer
    try {
      object = packageHostObject({
        cubin: assembled.cubin,
        name: config.name,
        hostArch: config.hostArch as 'x86_64' | 'aarch64',
        ...(assembled.sass === null ? {} : { sass: assembled.sass }),
      })
    } catch (error) {
      throw compileFailed(`the host object cannot be written: ${(error as Error).message}`, { cause: error })
    }
    const output: ProgramOutput = {
      object,
      cubin: assembled.cubin,
      sass: assembled.sass,
      name: config.name,
      gpuName: config.gpuName,
      sm: assembled.sm,
      kernels: assembled.kernels,
      wallMs: assembled.ms + (performance.now() - started),
      ptxas: assembled.ptxas,
      dumpSass: assembled.dumpSass,
    }
    this.#output = output
    return output
  }

  static {
    internals = {
      enqueue: (program, step) => program.#enqueue(step),
      assemble: (program, signal) => program.#assemble(signal),
      finalize: (program, assembled) => program.#finalize(assembled),
      released: (program) => program.#released,
    }
  }
}

function compileFailed(reason: string, details: Omit<ProgramErrorDetails, 'reason'> = {}): ProgramError {
  return new ProgramError('COMPILE_FAILED', { ...details, reason })
}

/**
 * The dump command's words, except that a bare `nvdisasm` missing from PATH runs
 * <CUDA_ROOT>/bin/nvdisasm: tileiras keeps the toolkit root in the handle for exactly this.
 */
function withToolkitNvdisasm(words: string[], env: Env): string[] {
  if (words[0] !== 'nvdisasm') return words
  const location = findTool('nvdisasm', env)
  return location === null || location.source === 'PATH' ? words : [location.path, ...words.slice(1)]
}

/** How to make `tool` findable: the fix, not just the symptom (`diagnostic`, the harness's words). */
export function toolNotFoundHint(tool: CudaTool, env: Env = process.env, diagnostic = 'No such file or directory'): string {
  const root = CUDA_ROOT_VARIABLES.find((v) => env[v] !== undefined && env[v] !== '')
  const looked = root === undefined ? 'on PATH' : `on PATH or in $${root}/bin (${root}=${env[root]})`
  return `${tool} was not found ${looked} (${diagnostic}); put a CUDA toolkit's bin directory on PATH ` +
    '(export PATH=/usr/local/cuda/bin:$PATH) or point CUDA_ROOT at the toolkit (export CUDA_ROOT=/usr/local/cuda)'
}

// ---------------------------------------------------------------------------------------------
// compileMany.

export interface CompileManyOptions {
  /** Children at once; default os.availableParallelism(). */
  concurrency?: number
  /** Aborting kills every running child; programs not yet compiled fail with status 5. */
  signal?: AbortSignal
}

export type CompileResult =
  | { status: 0; output: ProgramOutput; error: null }
  | { status: ProgramErrorStatus; output: null; error: ProgramError }

/**
 * Compile `programs` in parallel through the harness, `concurrency` children at a time, then
 * finalize them one by one in input order (seed 003, Phase 23b): results, outputs and
 * onDiagnostic calls come in input order whatever order the children finished in. One result per
 * program, never a rejection for a program's failure; a null entry is "program is null".
 */
export async function compileMany(programs: readonly (Program | null | undefined)[], options: CompileManyOptions = {}): Promise<CompileResult[]> {
  if (!Array.isArray(programs)) throw invalidType('programs', 'an array of Program', programs)
  requireObject('options', options)
  const concurrency = options.concurrency ?? availableParallelism()
  if (typeof concurrency !== 'number' || Number.isNaN(concurrency)) throw invalidType('concurrency', 'a number', concurrency)
  if (concurrency < 1 || (!Number.isInteger(concurrency) && concurrency !== Infinity)) {
    throw outOfRange('concurrency', 'an integer >= 1 (or Infinity)', concurrency)
  }
  const signal = options.signal
  requireAbortSignal('signal', signal)
  const seen = new Map<Program, number>()
  programs.forEach((program, i) => {
    if (program === null || program === undefined) return
    if (!(program instanceof Program)) throw invalidType(`programs[${i}]`, 'a Program, null or undefined', program)
    const first = seen.get(program)
    if (first !== undefined) throw invalidValue(`programs[${i}]`, `is the same Program as programs[${first}]`)
    seen.set(program, i)
  })

  const slots = new Semaphore(concurrency)
  const assembled = programs.map(() => deferred<void>())
  const turns = programs.map(() => deferred<void>())
  const finished: Array<Promise<ProgramOutput> | ProgramError> = programs.map((program, i) => {
    if (!(program instanceof Program) || internals.released(program)) {
      assembled[i].resolve()
      return new ProgramError('PROGRAM_NULL')
    }
    return internals.enqueue(program, async () => {
      let result: Assembled
      try {
        await slots.acquire()
        try {
          result = await internals.assemble(program, signal)
        } finally {
          slots.release()
        }
      } finally {
        assembled[i].resolve()
      }
      await turns[i].promise
      return internals.finalize(program, result)
    })
  })

  // The barrier: every child has ended. Then the sequential finalize, in input order.
  await Promise.all(assembled.map((d) => d.promise))
  const results: CompileResult[] = []
  let unexpected: { error: unknown } | null = null
  for (const [i, outcome] of finished.entries()) {
    turns[i].resolve()
    if (outcome instanceof ProgramError) {
      results.push({ status: outcome.status, output: null, error: outcome })
      continue
    }
    try {
      results.push({ status: 0, output: await outcome, error: null })
    } catch (error) {
      if (error instanceof ProgramError) {
        results.push({ status: error.status, output: null, error })
      } else {
        // Not a compile failure (a throwing onDiagnostic, a bad env): finish every program's turn first.
        unexpected ??= { error }
        results.push({ status: 5, output: null, error: new ProgramError('COMPILE_FAILED', { reason: String(error), cause: error }) })
      }
    }
  }
  if (unexpected !== null) throw unexpected.error
  return results
}

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => { resolve = r })
  return { promise, resolve }
}

/** At most `limit` holders at once; waiters are served first come, first served. */
class Semaphore {
  #free: number
  readonly #waiting: Array<() => void> = []
  constructor(limit: number) {
    this.#free = limit
  }
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }
  release(): void {
    const next = this.#waiting.shift()
    if (next !== undefined) next()
    else this.#free++
  }
}
