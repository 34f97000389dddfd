// The Program handle (docs/toolchain-contract.md, "The Program handle"): create / compile /
// getOutput / release over one PTX translation unit.
//
//   create    checks the configuration in tileiras's order (config.ts) and keeps the PTX text;
//             nothing is started.
//   compile   the pipeline (pipeline.ts): PTX -> ptxas -> optional SASS dump -> host ELF object.
//             Any failure is status 5 and leaves no output; the output replaces the previous one
//             only when the whole pipeline succeeded. Async and cancellable.
//   getOutput the output of the last successful compile, else status 4.
//   release   drops the output and kills a compile still running; the handle is "null" afterwards.
//
// A Program is a facade over its ProgramState, which holds what a compile changes (the output,
// the queue of compiles, the running children). compileMany (compile-many.ts) schedules many
// programs' compiles through the same state and steps, found with programState().

import { performance } from 'node:perf_hooks'
import { isAborted, whenAborted } from '../../abort.js'
import { optionKeys, ownOptions, requireAbortSignal } from '../../errors.js'
import { resolveConfig, type ProgramConfig, type ResolvedConfig } from './config.js'
import { ProgramError } from './errors.js'
import type { Semaphore } from './semaphore.js'
import { assembleProgram, deliverDiagnostics, packageOutput, type Assembled, type ProgramOutput } from './pipeline.js'
import type { ToolFinder } from '../toolkit.js'

export interface CompileOptions {
  /** Aborting kills the running child; the compile then fails with status 5. */
  signal?: AbortSignal
}

const COMPILE_OPTION_KEYS = optionKeys<CompileOptions>({ signal: true })

/** One program's compile state and the two steps of a compile over it. */
export class ProgramState {
  readonly config: ResolvedConfig
  readonly ptx: string
  released = false
  output: ProgramOutput | null = null
  /** Compiles of one program run one at a time, in call order. */
  #tail: Promise<unknown> = Promise.resolve()
  /** One controller per running compile; release() aborts them. */
  readonly #running = new Set<AbortController>()

  constructor(config: ResolvedConfig, ptx: string) {
    this.config = config
    this.ptx = ptx
  }

  /** Run `step` after every compile queued before it, whatever their outcome. */
  enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(step, step)
    this.#tail = run.catch(() => undefined)
    return run
  }

  /** The parallel step: the children, killed by `callerSignal` or release(). Never rejects. */
  async assemble(callerSignal: AbortSignal | undefined, find?: ToolFinder, slots?: Semaphore): Promise<Assembled> {
    if (this.released) return { ok: false, diagnostics: [], error: new ProgramError('PROGRAM_NULL') }
    this.output = null // a compile is a mutating call: the old output is gone, whatever happens
    const controller = new AbortController()
    // One listener on the caller's signal for all the compiles it cancels (lib/abort.ts). An
    // aborted one is not listened to: runTools sees it and starts nothing.
    const stopWatching = callerSignal !== undefined && !isAborted(callerSignal) ? whenAborted(callerSignal, () => controller.abort()) : null
    this.#running.add(controller)
    try {
      return await assembleProgram(this.config, this.ptx, controller.signal, callerSignal, find, slots)
    } finally {
      this.#running.delete(controller)
      stopWatching?.()
    }
  }

  /**
   * The sequential step: diagnostics to the callback in the order the tools ran, then the host
   * object. The output is installed only here, and only when everything succeeded.
   */
  finalize(assembled: Assembled): ProgramOutput {
    const started = performance.now()
    deliverDiagnostics(this.config, assembled)
    if (this.released) {
      throw new ProgramError('PROGRAM_NULL', { reason: 'the program was released while it was compiling' })
    }
    this.output = packageOutput(this.config, assembled, started)
    return this.output
  }

  release(): void {
    this.released = true
    this.output = null
    for (const controller of this.#running) controller.abort()
  }
}

const states = new WeakMap<Program, ProgramState>()

/** The state behind a Program, for compileMany. */
export function programState(program: Program): ProgramState {
  return states.get(program) as ProgramState
}

/**
 * Whether `value` is a Program that create made: one with a state. `instanceof` only looks at the
 * prototype chain, which Object.create(Program.prototype) forges, and a forged one then failed
 * inside, with no code, or threw where a promise was due.
 */
export function isProgram(value: unknown): value is Program {
  return typeof value === 'object' && value !== null && states.has(value as Program)
}

const CREATE = Symbol('Program.create')

export class Program {
  readonly #state: ProgramState

  /** Use Program.create. */
  private constructor(token: symbol, state: ProgramState) {
    if (token !== CREATE) throw new TypeError('use Program.create(config)')
    this.#state = state
    states.set(this, state)
  }

  /** tileirasProgramCreate: checks `config` in tileiras's order; throws ProgramError (status 2 or 3). */
  static create(config: ProgramConfig): Program {
    const { resolved, ptx } = resolveConfig(config)
    return new Program(CREATE, new ProgramState(resolved, ptx))
  }

  // tileiras's C entry points, for code written against them: a null program is status 4, and
  // getOutput fills the caller's `out` object (its "output pointer").

  static compile(program: Program | null | undefined, options?: CompileOptions): Promise<ProgramOutput> {
    if (!isProgram(program)) return Promise.reject(new ProgramError('PROGRAM_NULL'))
    return program.compile(options)
  }

  static getOutput(program: Program | null | undefined, out: { output?: ProgramOutput } | null | undefined): void {
    if (!isProgram(program)) throw new ProgramError('PROGRAM_NULL')
    if (out === null || typeof out !== 'object') throw new ProgramError('OUTPUT_POINTER_NULL')
    out.output = program.getOutput()
  }

  static release(program: Program | null | undefined): void {
    if (!isProgram(program)) throw new ProgramError('PROGRAM_NULL')
    program.release()
  }

  /** True once release() has been called: every method then throws "program is null". */
  get released(): boolean {
    return this.#state.released
  }

  /** True when getOutput() has an output to return. */
  get compiled(): boolean {
    return !this.#state.released && this.#state.output !== null
  }

  /** The PTX text this program compiles (a module object's, printed). */
  get ptx(): string {
    this.#requireLive()
    return this.#state.ptx
  }

  /**
   * tileirasProgramCompile. Resolves with the output (also kept for getOutput); rejects with a
   * ProgramError: status 4 on a released program, 5 for any compile failure, after which there
   * is no output. A compile called while another of the same program runs waits for it.
   */
  compile(options: CompileOptions = {}): Promise<ProgramOutput> {
    if (!isProgram(this)) return Promise.reject(new ProgramError('PROGRAM_NULL'))  // a forged one
    const state = this.#state
    if (state.released) return Promise.reject(new ProgramError('PROGRAM_NULL'))
    let signal: AbortSignal | undefined
    try {
      // The options' own signal, read once: one inherited from a polluted Object.prototype would
      // cancel (or, aborted, fail) every compile. A misspelt one (`sigal`) is refused, not a
      // compile that cannot be cancelled.
      signal = requireAbortSignal('signal', ownOptions('options', options, COMPILE_OPTION_KEYS).signal)
    } catch (error) {
      return Promise.reject(error)
    }
    return state.enqueue(async () => state.finalize(await state.assemble(signal)))
  }

  /** tileirasProgramGetOutput: the last successful compile's output; status 4 before one. */
  getOutput(): ProgramOutput {
    if (!isProgram(this)) throw new ProgramError('PROGRAM_NULL')  // a forged one: no #requireLive to call
    this.#requireLive()
    if (this.#state.output === null) throw new ProgramError('NOT_COMPILED')
    return this.#state.output
  }

  /** tileirasProgramRelease: drops the output, kills a running compile; status 4 when already released. */
  release(): void {
    if (!isProgram(this)) throw new ProgramError('PROGRAM_NULL')
    this.#requireLive()
    this.#state.release()
  }

  #requireLive(): void {
    if (this.#state.released) throw new ProgramError('PROGRAM_NULL')
  }
}
