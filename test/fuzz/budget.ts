// How long each fuzz property runs.
//
//   short (npm test, npm run fuzz): a fixed number of runs per property, a fresh seed each time
//   long  (npm run fuzz:long, TILEHARNESS_FUZZ=long): each property runs until its share of the
//         time budget is spent: TILEHARNESS_FUZZ_SECONDS (default 30) per property
//
// TILEHARNESS_FUZZ_SEED=<n> replays a run; a failure prints its seed and counterexample path.
// A run whose promise has not settled after RUN_LIMIT_MS fails as a counterexample, printed like
// any other, rather than holding the file until tap's own limit kills it with nothing to show.
// Shrinking such a failure tries more runs that may hang as long: a short property stops after
// SHORT_LIMIT_MS, and reports what it has (a counterexample, or the runs made so far).
import fc from 'fast-check'

export const LONG = process.env.TILEHARNESS_FUZZ === 'long'
const SECONDS = Number(process.env.TILEHARNESS_FUZZ_SECONDS ?? 30)
const RUN_LIMIT_MS = 30_000
const SHORT_LIMIT_MS = 100_000
const SEED = process.env.TILEHARNESS_FUZZ_SEED === undefined ? undefined : Number(process.env.TILEHARNESS_FUZZ_SEED)

export function budget(shortRuns: number): fc.Parameters<unknown> {
  const base: fc.Parameters<unknown> = { timeout: RUN_LIMIT_MS, ...(SEED === undefined ? {} : { seed: SEED }) }
  if (!LONG) return { ...base, numRuns: shortRuns, interruptAfterTimeLimit: SHORT_LIMIT_MS }
  return { ...base, numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: SECONDS * 1000, markInterruptAsFailure: false }
}

interface Reporter {
  pass(message: string): void
  fail(message: string): void
}

/** Runs one property under the budget and reports it as one assertion: runs and seed, or the
 * counterexample. */
export async function fuzz<Ts>(t: Reporter, name: string, property: fc.IRawProperty<Ts>, shortRuns: number): Promise<void> {
  const details = await fc.check(property, budget(shortRuns) as fc.Parameters<Ts>)
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    const report = fc.defaultReportMessage(details as fc.RunDetails<Ts>) ?? ''
    t.fail(`${name}: ${error}\n${report.length > 4000 ? report.slice(0, 4000) + '...' : report}`)
  }
  else t.pass(`${name}: ${details.numRuns} runs${details.interrupted && !LONG ? ', stopped at the time limit' : ''} (seed ${details.seed})`)
}
