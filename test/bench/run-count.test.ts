// hyperfine's automatic run count, decided from the first round: a table of first-round wall times.
import t from 'tap'
import { MIN_BENCHMARK_MS, roundsFor } from '../../lib/bench/run-count.js'

t.test('roundsFor: enough for the slowest command to run the minimum time, within the bounds', async t => {
  const rule = { minRuns: 10, maxRuns: null, minTimeMs: MIN_BENCHMARK_MS }
  const rows: Array<[string, number[], Partial<typeof rule>, number]> = [
    ['a 1 ms command: 3000 runs of it', [1], {}, 3000],
    ['not a whole number of runs: rounded up', [7], {}, 429],
    ['a slow command: --min-runs still', [1000], {}, 10],
    ['slower than the minimum time: --min-runs', [5000], {}, 10],
    ['two commands: the slowest decides, the fast one runs as often', [1, 100], {}, 30],
    ['--max-runs caps it', [1], { maxRuns: 50 }, 50],
    ['--max-runs equal to --min-runs: exactly that', [0.5, 2000], { minRuns: 4, maxRuns: 4 }, 4],
    ['--min-runs raises it', [100], { minRuns: 40 }, 40],
    ['a wall time of 0 gives a count, not Infinity', [0], { maxRuns: null }, 3000000],
  ]
  for (const [what, walls, bounds, rounds] of rows) t.equal(roundsFor(walls, { ...rule, ...bounds }), rounds, what)
})
