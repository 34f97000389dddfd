// The statistics behind `tileharness bench` and the suite: quantiles, summaries, Tukey outliers,
// paired ratios. Tables of inputs with hand-computed answers.
import t from 'tap'
import { mean, median, pairedRatio, quantile, summarize, summarizeAvailable } from '../../lib/bench/statistics.js'

t.test('quantile: linear interpolation between order statistics (type 7)', async t => {
  const rows: Array<[number[], number, number]> = [
    [[1, 2, 3, 4], 0.5, 2.5],
    [[1, 2, 3, 4], 0.25, 1.75],
    [[1, 2, 3, 4], 0.75, 3.25],
    [[4, 1, 3, 2], 0.25, 1.75],
    [[7], 0.9, 7],
    [[1, 2, 3, 4, 5], 0, 1],
    [[1, 2, 3, 4, 5], 1, 5],
    [[10, 20], 0.9, 19],
  ]
  for (const [values, q, want] of rows) t.equal(quantile(values, q), want, `${values} q=${q}`)
  t.ok(Number.isNaN(quantile([], 0.5)), 'no values: NaN')
  t.equal(median([3, 1, 2]), 2)
  t.equal(mean([1, 2, 3, 6]), 3)
})

t.test('summarize', async t => {
  const s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
  t.match(s, { count: 8, min: 2, max: 9, mean: 5, median: 4.5, q1: 4, q3: 5.5 })
  t.equal(s.stddev.toFixed(6), Math.sqrt(32 / 7).toFixed(6), 'sample standard deviation (n - 1)')
  t.same(summarize([3]), { count: 1, min: 3, q1: 3, median: 3, q3: 3, max: 3, mean: 3, stddev: 0, lowerFence: 3, upperFence: 3, outliers: [] })
  t.throws(() => summarize([]), RangeError)
  const some = summarizeAvailable([1, NaN, 2, 3, 100])
  t.same({ count: some.count, median: some.median, outliers: some.outliers }, { count: 4, median: 2.5, outliers: [4] }, 'NaN figures are left out; outlier indices still refer to the runs')
  t.ok(Number.isNaN(summarizeAvailable([NaN, NaN]).median) && summarizeAvailable([NaN]).count === 0, 'no figure at all: NaN, count 0')
})

t.test('outliers: beyond 1.5 IQR of the quartiles, reported by index', async t => {
  const rows: Array<[number[], number[]]> = [
    [[10, 11, 12, 13, 14], []],
    [[10, 11, 12, 13, 14, 40], [5]],
    [[1, 10, 11, 12, 13, 14], [0]],
    [[5, 5, 5, 5, 6], [4]], // IQR 0: anything off the quartiles is an outlier
    [[1, 1, 1, 1], []],
  ]
  for (const [values, want] of rows) t.same(summarize(values).outliers, want, JSON.stringify(values))
  const s = summarize([10, 11, 12, 13, 14, 40])
  t.equal(s.upperFence, s.q3 + 1.5 * (s.q3 - s.q1))
})

t.test('pairedRatio: the median of run-by-run ratios, so drift cancels', async t => {
  // Drift: both commands slow down over time; B is always twice A.
  const a = [1, 2, 4, 8, 16]
  const b = [2, 4, 8, 16, 32]
  t.match(pairedRatio(b, a), { median: 2, q1: 2, q3: 2, min: 2, max: 2, pairs: 5 })
  // A ratio of medians taken from unpaired halves would be wrong; pairing is not.
  t.equal(pairedRatio([3, 1, 2], [1, 1, 1])!.median, 2)
  t.equal(pairedRatio([1, 2], [0, 1])!.pairs, 1, 'a zero reference is skipped')
  t.equal(pairedRatio([1], [0]), null, 'nothing left: null')
  t.equal(pairedRatio([2, 4, 6], [1, 2])!.pairs, 2, 'unequal lengths: the common prefix')
})
