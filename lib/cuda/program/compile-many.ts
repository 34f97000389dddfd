// compileMany: many programs' compiles, the children in parallel and the rest in input order
// (docs/toolchain-contract.md, "Cancellation and parallel compiles"). Each program's compile is
// the handle's own two steps (ProgramState.assemble, then .finalize), queued behind the program's
// other compiles; compileMany only decides when each step runs: every child of the batch when one
// of `concurrency` slots is free, finalize when every child has ended and the programs before it
// are finalized. Programs whose
// objects would define the same symbols (the same name) are refused before anything runs.

import { availableParallelism } from 'node:os'
import { abortReason, isAborted, whenAborted } from '../../abort.js'
import { invalidType, invalidValue, isArray, optionKeys, outOfRange, ownElements, ownOptions, requireAbortSignal } from '../../errors.js'
import { compileFailed, ProgramError, type ProgramErrorStatus } from './errors.js'
import { Program, isProgram, programState } from './handle.js'
import type { Assembled, ProgramOutput } from './pipeline.js'
import { memoizedFindTool } from '../toolkit.js'
import { Semaphore } from './semaphore.js'
import { symbolClashes } from './symbols.js'

export interface CompileManyOptions {
  /** Children at once (every target's ptxas, SASS dump and fatbinary of the batch); default os.availableParallelism(). */
  concurrency?: number
  /** Aborting kills every running child; programs not yet compiled fail with status 5. */
  signal?: AbortSignal
}

const COMPILE_MANY_OPTION_KEYS = optionKeys<CompileManyOptions>({ concurrency: true, signal: true })

export type CompileResult =
  | { status: 0; output: ProgramOutput; error: null }
  | { status: ProgramErrorStatus; output: null; error: ProgramError }

/**
 * Compile `programs` in parallel through the harness, `concurrency` children at a time, then
 * finalize them one by one in input order: results, outputs and onDiagnostic calls come in input
 * order whatever order the children finished in. One result per program, never a rejection for
 * a program's failure; a null entry is "program is null".
 */
export async function compileMany(given: readonly (Program | null | undefined)[], givenOptions: CompileManyOptions = {}): Promise<CompileResult[]> {
  if (!isArray(given)) throw invalidType('programs', 'an array of Program', given)
  // Each entry read once, before anything is queued: a hole is undefined (never an element
  // inherited from a polluted prototype), and an array whose getter throws (or changes its
  // answer) fails here, with no program's compile waiting for a turn.
  const programs = ownElements(given, 'programs')
  // Its own fields only: an inherited concurrency or signal is not this batch's. A misspelt one
  // (`concurency`) is refused, not a batch run with the default.
  const options = ownOptions('options', givenOptions, COMPILE_MANY_OPTION_KEYS)
  const concurrency = options.concurrency ?? availableParallelism()
  if (typeof concurrency !== 'number' || Number.isNaN(concurrency)) throw invalidType('concurrency', 'a number', concurrency)
  if (concurrency < 1 || (!Number.isInteger(concurrency) && concurrency !== Infinity)) {
    throw outOfRange('concurrency', 'an integer >= 1 (or Infinity)', concurrency)
  }
  const callerSignal = options.signal
  requireAbortSignal('signal', callerSignal)
  const seen = new Map<Program, number>()
  programs.forEach((program, i) => {
    if (program === null || program === undefined) return
    if (!isProgram(program)) throw invalidType(`programs[${i}]`, 'a Program, null or undefined', program)
    const first = seen.get(program)
    if (first !== undefined) throw invalidValue(`programs[${i}]`, `is the same Program as programs[${first}]`)
    seen.set(program, i)
  })

  // Two objects defining one symbol cannot be linked together: the later program fails, unstarted.
  const clashes = symbolClashes(programs.map((program) => {
    const state = isProgram(program) ? programState(program) : null
    return state === null || state.released ? null : state.config
  }))

  // Every child of the batch (each target's ptxas, the SASS dump, fatbinary) holds one of these
  // while it runs, and only then: a program's own JavaScript between and after its children runs
  // beside the next program's children.
  const children = new Semaphore(concurrency)
  // The caller's signal, for the batch: each program's compile listens to the batch's (one
  // listener for all of them, lib/abort.ts).
  const batch = new AbortController()
  const forward = (): void => batch.abort(callerSignal === undefined ? undefined : abortReason(callerSignal))
  let stopWatching: (() => void) | null = null
  if (callerSignal !== undefined) {
    if (isAborted(callerSignal)) forward()
    else stopWatching = whenAborted(callerSignal, forward)
  }
  const signal = callerSignal === undefined ? undefined : batch.signal
  const find = memoizedFindTool() // PATH searched once per tool for the batch, not per program
  const assembled = programs.map(() => deferred<void>())
  const turns = programs.map(() => deferred<void>())
  const finished: Array<Promise<ProgramOutput> | ProgramError> = programs.map((program, i) => {
    const state = isProgram(program) ? programState(program) : null
    if (state === null || state.released) {
      assembled[i].resolve()
      return new ProgramError('PROGRAM_NULL')
    }
    const clash = clashes.get(i)
    if (clash !== undefined) {
      assembled[i].resolve()
      return compileFailed(clash)
    }
    return state.enqueue(async () => {
      let result: Assembled
      try {
        result = await state.assemble(signal, find, children)
      } finally {
        assembled[i].resolve()
      }
      await turns[i].promise
      return state.finalize(result)
    })
  })

  // The barrier: every child has ended. Then the sequential finalize, in input order.
  await Promise.all(assembled.map((d) => d.promise))
  stopWatching?.()
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
        results.push({ status: 5, output: null, error: compileFailed(String(error), { cause: error }) })
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
