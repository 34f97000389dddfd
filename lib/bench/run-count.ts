// How many rounds `tileharness bench` measures when -n is not given: hyperfine's rule (at least
// --min-runs, and runs enough for a minimum benchmarking time, at most --max-runs), decided from
// the first measured round so that every command gets the same number of rounds (A B A B).

/** hyperfine's minimum benchmarking time, of the commands' own wall time. */
export const MIN_BENCHMARK_MS = 3000
/** hyperfine's default --min-runs. */
export const DEFAULT_MIN_RUNS = 10

export interface AutomaticRuns {
  minRuns: number
  /** null: no cap. */
  maxRuns: number | null
  minTimeMs: number
}

/**
 * The number of rounds, from the wall times (ms) of each command's first measured run: enough for
 * the slowest command to run `minTimeMs`, as hyperfine runs each command, the faster ones as many
 * times. (Enough for the fastest instead would run the slowest for its count: 3000 rounds of a
 * 1 s command beside a 1 ms one.) So the whole takes about `minTimeMs` per command, as hyperfine's.
 */
export function roundsFor(firstRoundWallMs: readonly number[], rule: AutomaticRuns): number {
  // A clock that read 0 (it cannot, but a division by it must not give Infinity) counts as 1 µs.
  const slowest = Math.max(0.001, ...firstRoundWallMs)
  const wanted = Math.max(rule.minRuns, Math.ceil(rule.minTimeMs / slowest))
  return rule.maxRuns === null ? wanted : Math.min(wanted, rule.maxRuns)
}
