// The statistics behind `tileharness bench` and the suite: quantiles, summaries, Tukey outliers,
// paired ratios, the bootstrap interval, the signed-rank and Mann-Whitney tests. Tables of inputs
// with hand-computed answers (or SciPy 1.17's, where it says so), and properties checked by
// fast-check against brute force.
import fc from 'fast-check'
import t, { type Test } from 'tap'
import {
  bootstrapRatioInterval, mannWhitneyTest, mean, median, midranks, mulberry32, pairedRatio, quantile, signedRankTest,
  summarize, summarizeAvailable,
} from '../../lib/bench/statistics.js'

/** A fast-check property as one assertion (fast-check's report, with its seed, when it fails). */
function property<Ts>(t: Test, name: string, prop: fc.IProperty<Ts>): void {
  fc.assert(prop)
  t.pass(name)
}

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
  t.same(summarize([4]), { count: 1, min: 4, q1: 4, median: 4, q3: 4, max: 4, mean: 4, stddev: 0, lowerFence: 3.7, upperFence: 4.3, outliers: [] }, 'fences 1.5 x 5% of the median out')
  t.throws(() => summarize([]), RangeError)
  const some = summarizeAvailable([1, NaN, 2, 3, 100])
  t.same({ count: some.count, median: some.median, outliers: some.outliers }, { count: 4, median: 2.5, outliers: [4] }, 'NaN figures are left out; outlier indices still refer to the runs')
  t.ok(Number.isNaN(summarizeAvailable([NaN, NaN]).median) && summarizeAvailable([NaN]).count === 0, 'no figure at all: NaN, count 0')
})

t.test('outliers: beyond 1.5 IQR of the quartiles, the IQR floored, reported by index', async t => {
  const page = 4 // KiB, max RSS's quantum
  const rss = [2048, 2048, 2052, 2048, 2056, 2048, 2048, 2052, 2048, 2048, 2048, 2060]
  const rows: Array<[number[], number, number[]]> = [
    [[10, 11, 12, 13, 14], 0, []],
    [[10, 11, 12, 13, 14, 40], 0, [5]],
    [[1, 10, 11, 12, 13, 14], 0, [0]],
    [[5, 5, 5, 5, 6], 0, [4]], // IQR 0, but 6 is 20% off: beyond the 5% floor
    [[1, 1, 1, 1], 0, []],
    // Max RSS quantised to pages, IQR 0 (plain Tukey flagged 4 of these 12 runs): none.
    [rss, page, []],
    [rss, 0, []], // the 5% floor alone covers it at this size
    // A measured `sleep 0.005`'s max RSS, 40 runs as they came (two clusters 7% apart): none.
    [[1632, 1664, 1644, 1664, 1636, 1776, 1552, 1776, 1656, 1636, 1656, 1640, 1656, 1632, 1624, 1560, 1672, 1664, 1680, 1680,
      1680, 1656, 1692, 1652, 1644, 1680, 1688, 1676, 1564, 1644, 1652, 1656, 1564, 1680, 1564, 1644, 1648, 1656, 1564, 1656], page, []],
    [[...rss, 20480], page, [12]], // a real 10x spike still is one
    [[...rss.slice(0, 5), 204, ...rss.slice(5)], page, [5]], // and a 10x dip
    // A small figure near its quantum: 4 quanta of slack (a page or two off is not an outlier).
    [[100, 100, 104, 100, 108, 100, 100], page, []],
    [[100, 100, 104, 100, 108, 100, 140], page, [6]],
    // Counts (quantum 1): one stray context switch is not an outlier, 20 are.
    [[0, 0, 0, 1, 0, 0, 2, 0], 1, []],
    [[0, 0, 0, 1, 0, 0, 20, 0], 1, [6]],
  ]
  for (const [values, quantum, want] of rows) t.same(summarize(values, quantum).outliers, want, `${JSON.stringify(values)} quantum ${quantum}`)
  const s = summarize([10, 11, 12, 13, 14, 40])
  t.equal(s.upperFence, s.q3 + 1.5 * (s.q3 - s.q1), 'a real IQR above the floor: plain Tukey')
  t.same(summarizeAvailable([NaN, ...rss], page).outliers, [], 'summarizeAvailable passes the quantum on')

  // Any figure that moves by at most two quanta around a level has no outlier; a run 10x the
  // level always is one.
  property(t, 'quantised figures: no outliers; a 10x spike: one', fc.property(
    fc.integer({ min: 1, max: 1 << 20 }), fc.constantFrom(0.001, 1, 4),
    fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 4, maxLength: 60 }), fc.nat(),
    (level, quantum, steps, at) => {
      const values = steps.map(k => level * quantum + k * quantum)
      if (summarize(values, quantum).outliers.length !== 0) return false
      const spiked = [...values]
      spiked.splice(at % (values.length + 1), 0, 10 * level * quantum + 10 * quantum)
      return summarize(spiked, quantum).outliers.includes(at % (values.length + 1))
    },
  ))
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

t.test('bootstrapRatioInterval: a seeded percentile interval of the median pairwise ratio', async t => {
  // Every pair 2x: every resample's median is 2.
  t.same(bootstrapRatioInterval([2, 4, 8, 16], [1, 2, 4, 8]), { level: 0.95, low: 2, high: 2 })
  t.equal(bootstrapRatioInterval([1], [0]), null, 'no usable pair: null')
  // A single pair: nothing to resample but itself.
  t.same(bootstrapRatioInterval([3], [1], { level: 0.9 }), { level: 0.9, low: 3, high: 3 })
  // Ratios 1..9: the median's interval straddles 5, and is the same every time with one seed.
  const values = [1, 2, 3, 4, 5, 6, 7, 8, 9], ones = values.map(() => 1)
  const a = bootstrapRatioInterval(values, ones, { seed: 7 })!
  t.same(bootstrapRatioInterval(values, ones, { seed: 7 }), a, 'one seed, one interval')
  t.ok(a.low >= 2 && a.low < 5 && a.high > 5 && a.high <= 8, `[${a.low}, ${a.high}] straddles 5 inside the range`)
  const wide = bootstrapRatioInterval(values, ones, { seed: 7, level: 0.99 })!
  t.ok(wide.low <= a.low && wide.high >= a.high, 'a higher level, a wider interval')
  t.equal(mulberry32(1)(), mulberry32(1)(), 'the PRNG is a function of its seed')
  t.not(mulberry32(1)(), mulberry32(2)())

  property(t, 'the interval lies within the ratios, and is a function of the seed', fc.property(
    fc.array(fc.tuple(fc.double({ min: 0.001, max: 1000, noNaN: true }), fc.double({ min: 0.001, max: 1000, noNaN: true })), { minLength: 1, maxLength: 40 }),
    fc.integer(), fc.double({ min: 0.5, max: 0.999, noNaN: true }),
    (pairs, seed, level) => {
      const v = pairs.map(p => p[0]), r = pairs.map(p => p[1])
      const ratios = v.map((x, i) => x / r[i])
      const ci = bootstrapRatioInterval(v, r, { seed, level, resamples: 200 })!
      // Inside the range of the ratios, low <= high, and the same again from the same seed.
      return Math.min(...ratios) <= ci.low && ci.low <= ci.high && ci.high <= Math.max(...ratios) &&
        JSON.stringify(bootstrapRatioInterval(v, r, { seed, level, resamples: 200 })) === JSON.stringify(ci)
    },
  ))
})

t.test('midranks: ties share the mean of their ranks', async t => {
  t.same(midranks([10, 30, 20]), [1, 3, 2])
  t.same(midranks([5, 1, 5, 5, 0]), [4, 2, 4, 4, 1])
  t.same(midranks([]), [])
})

t.test('signedRankTest: known answers (SciPy 1.17 wilcoxon on the log ratios)', async t => {
  const ones = (n: number) => new Array<number>(n).fill(1)
  // Exact, no ties: W- = 7 (0.8 and 0.95 are ranks 5 and 2), W+ = 36 - 7.
  t.match(signedRankTest([1.1, 0.8, 1.3, 1.05, 1.4, 0.95, 1.2, 1.27], ones(8)), { statistic: 29, n: 8, exact: true, significant: false })
  t.equal(signedRankTest([1.1, 0.8, 1.3, 1.05, 1.4, 0.95, 1.2, 1.27], ones(8)).pValue, 0.1484375)
  const ten = signedRankTest([11, 12, 9, 14, 15, 10.5, 13, 16, 17, 12.5], new Array<number>(10).fill(10))
  t.match(ten, { statistic: 52, n: 10, exact: true, significant: true })
  t.equal(ten.pValue, 0.009765625)
  // 60 pairs, 6 without a difference, ties among the rest: normal approximation, tie and
  // continuity corrected.
  const ref = Array.from({ length: 60 }, (_, i) => 10 + (i % 7))
  const val = ref.map((r, i) => r * (1 + (((i * 37) % 11) - 4) / 100))
  const big = signedRankTest(val, ref)
  t.match(big, { statistic: 919, n: 54, exact: false, significant: false })
  t.ok(Math.abs(big.pValue - 0.12932490655615905) < 1e-6, `p ${big.pValue}`)
  // Every pair the same: nothing to test.
  t.match(signedRankTest([2048, 2048], [2048, 2048]), { pValue: 1, n: 0, significant: false })
  // Always 2x, 10 pairs: as significant as 10 pairs can be, 2 / 2^10.
  const twice = signedRankTest([2, 4, 6, 8, 10, 12, 14, 16, 18, 20], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  t.match(twice, { statistic: 55, pValue: 2 / 1024, exact: true, significant: true }, 'all ten log ratios tie (midrank 5.5 each), all positive')
  // Three pairs can never be significant at 0.05: the smallest two-sided p is 2/8; five neither
  // (2/32); six can (2/64).
  t.equal(signedRankTest([2, 2, 2], [1, 1, 1]).pValue, 0.25)
  t.match(signedRankTest([2, 2, 2, 2, 2], [1, 1, 1, 1, 1]), { pValue: 2 / 32, significant: false })
  t.match(signedRankTest([2, 2, 2, 2, 2, 2], [1, 1, 1, 1, 1, 1]), { pValue: 2 / 64, significant: true })
})

t.test('mannWhitneyTest: known answers (SciPy 1.17 mannwhitneyu)', async t => {
  t.match(mannWhitneyTest([1.1, 2.3, 0.7, 3.5, 2.9], [4.2, 5.1, 3.8, 6.0, 4.9, 3.1]), { statistic: 1, n: 11, exact: true, significant: true })
  t.equal(mannWhitneyTest([1.1, 2.3, 0.7, 3.5, 2.9], [4.2, 5.1, 3.8, 6.0, 4.9, 3.1]).pValue, 0.008658008658008658)
  t.ok(Math.abs(mannWhitneyTest([12, 15, 11, 19, 14, 13, 17], [16, 21, 18, 22, 20, 23]).pValue - 0.008158508158508158) < 1e-15)
  // 70 values with ties: the normal approximation.
  const a = Array.from({ length: 30 }, (_, i) => (i * 13) % 17)
  const b = Array.from({ length: 40 }, (_, i) => ((i * 7) % 19) + 2)
  const big = mannWhitneyTest(a, b)
  t.match(big, { statistic: 420, n: 70, exact: false, significant: true })
  t.ok(Math.abs(big.pValue - 0.032915588811610226) < 1e-6, `p ${big.pValue}`)
  t.match(mannWhitneyTest([4, 5, 6], [1, 2, 3]), { statistic: 9, pValue: 0.1, significant: false }, 'three runs each, apart: 2/20, never significant')
  t.match(mannWhitneyTest([5, 6, 7, 8], [1, 2, 3, 4]), { statistic: 16, pValue: 2 / 70, significant: true }, 'four each can be')
  t.match(mannWhitneyTest([1, 2], []), { pValue: 1, significant: false }, 'an empty sample: nothing to test')
  t.match(mannWhitneyTest([5, 5, 5], [5, 5, 5]), { pValue: 1, significant: false }, 'all tied')
  t.equal(mannWhitneyTest([1, NaN, 2], [3, 4]).n, 4, 'NaN figures are left out')
})

/** Two-sided p of `observed` among equally likely outcomes, as the exact tests define it. */
function bruteP(outcomes: number[], observed: number): number {
  const below = outcomes.filter(s => s <= observed + 1e-9).length, above = outcomes.filter(s => s >= observed - 1e-9).length
  return Math.min(1, 2 * Math.min(below, above) / outcomes.length)
}

t.test('the exact tests agree with brute-force enumeration, ties and all', async t => {
  // Small integer figures, so that ties (and, for the signed-rank test, zero differences) are common.
  const figure = fc.integer({ min: 1, max: 6 })
  property(t, 'signed-rank: the exact p is the enumeration\'s', fc.property(fc.array(fc.tuple(figure, figure), { minLength: 1, maxLength: 12 }), pairs => {
    const v = pairs.map(p => p[0]), r = pairs.map(p => p[1])
    const d = v.map((x, i) => Math.log(x / r[i])).filter(x => x !== 0)
    const got = signedRankTest(v, r)
    if (d.length === 0) return got.pValue === 1
    const ranks = midranks(d.map(Math.abs))
    const sums: number[] = []
    for (let signs = 0; signs < 1 << d.length; signs++) sums.push(ranks.reduce((s, rank, i) => s + (signs & (1 << i) ? rank : 0), 0))
    return got.exact && Math.abs(got.pValue - bruteP(sums, got.statistic)) < 1e-12
  }))
  property(t, 'Mann-Whitney: the exact p is the enumeration\'s', fc.property(fc.array(figure, { minLength: 1, maxLength: 7 }), fc.array(figure, { minLength: 1, maxLength: 7 }), (a, b) => {
    const got = mannWhitneyTest(a, b)
    const ranks = midranks([...a, ...b])
    const us: number[] = []
    for (let chosen = 0; chosen < 1 << ranks.length; chosen++) {
      let k = 0, sum = 0
      ranks.forEach((rank, i) => { if (chosen & (1 << i)) { k++; sum += rank } })
      if (k === a.length) us.push(sum - a.length * (a.length + 1) / 2)
    }
    return got.exact && Math.abs(got.pValue - bruteP(us, got.statistic)) < 1e-12
  }))
})
