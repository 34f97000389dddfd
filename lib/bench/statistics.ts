// The statistics of `tileharness bench` and of the performance suite: one quantile definition,
// one outlier rule, one way to compare two commands run side by side (the paired ratio, its
// bootstrap interval, the signed-rank test) and one for runs of two sessions (Mann-Whitney U).
// Everything here is pure and synchronous; the only randomness is a seeded PRNG.

/**
 * The q-quantile (0..1) of `values` by linear interpolation between order statistics
 * (Hyndman & Fan type 7, what R, NumPy and spreadsheets use by default). NaN for no values.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sortedQuantile(sorted, q)
}

function sortedQuantile(sorted: ArrayLike<number>, q: number): number {
  const h = (sorted.length - 1) * q
  const lo = Math.floor(h)
  const hi = Math.ceil(h)
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo])
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5)
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

/** The name of the outlier rule, as reports print it. */
export const OUTLIER_RULE = 'beyond 1.5 IQR of the quartiles (Tukey\'s fences)'
/** The same rule as a key, for machine-readable output. */
export const OUTLIER_RULE_ID = 'tukey-1.5-iqr'
/**
 * The floor under the IQR the fences are drawn with. A figure is only as fine as its quantum (max
 * RSS moves in 4 KiB pages, counts in ones) and a steady one barely moves at all: with runs at
 * 2048, 2048, 2052, 2048, 2056 KiB the IQR is 0 and plain Tukey flags every run a page off the
 * median. So the IQR is taken as at least OUTLIER_FLOOR_QUANTA quanta and OUTLIER_FLOOR_RELATIVE
 * of the median: a run must stand out by more than the figure can resolve, and by more than a
 * few percent, to be called an outlier. A real spike (a run 10x the others) still is. 5%, not
 * less: a measured `sleep 0.005`'s max RSS on this machine spreads over 1552-1776 KiB (ASLR and
 * the loader's choices), two clusters 7% apart, and a 2% floor flagged 8 of 40 such runs.
 */
export const OUTLIER_FLOOR_QUANTA = 4
export const OUTLIER_FLOOR_RELATIVE = 0.05
export const OUTLIER_FLOOR = `the IQR taken as at least ${OUTLIER_FLOOR_QUANTA} quanta of the figure (4 KiB pages, 1 µs, 1 count) and ${OUTLIER_FLOOR_RELATIVE * 100}% of the median`

export interface Summary {
  count: number
  min: number
  /** First quartile. */
  q1: number
  median: number
  /** Third quartile. */
  q3: number
  max: number
  mean: number
  /** Sample standard deviation (n - 1); 0 for a single value. */
  stddev: number
  /**
   * Tukey's fences, Q1 - 1.5 IQR and Q3 + 1.5 IQR, the IQR floored (OUTLIER_FLOOR): values
   * outside them are outliers.
   */
  lowerFence: number
  upperFence: number
  /** Indices (into the values given) of the outliers, in order. */
  outliers: number[]
}

/**
 * min, quartiles, max, mean, sample stddev and outliers of `values` (at least one); `quantum` is
 * the figure's resolution in the values' unit (4 for max RSS in KiB), 0 when it has none.
 */
export function summarize(values: readonly number[], quantum = 0): Summary {
  if (values.length === 0) throw new RangeError('summarize: no values')
  const sorted = [...values].sort((a, b) => a - b)
  const m = mean(values)
  let squares = 0
  for (const v of values) squares += (v - m) ** 2
  const q1 = sortedQuantile(sorted, 0.25)
  const q3 = sortedQuantile(sorted, 0.75)
  const med = sortedQuantile(sorted, 0.5)
  const iqr = Math.max(q3 - q1, OUTLIER_FLOOR_QUANTA * quantum, OUTLIER_FLOOR_RELATIVE * Math.abs(med))
  const lowerFence = q1 - 1.5 * iqr
  const upperFence = q3 + 1.5 * iqr
  const outliers: number[] = []
  values.forEach((v, i) => { if (v < lowerFence || v > upperFence) outliers.push(i) })
  return {
    count: values.length,
    min: sorted[0],
    q1,
    median: med,
    q3,
    max: sorted[sorted.length - 1],
    mean: m,
    stddev: values.length > 1 ? Math.sqrt(squares / (values.length - 1)) : 0,
    lowerFence,
    upperFence,
    outliers,
  }
}

/**
 * summarize() over the figures that were had: NaN marks a figure a run could not report (a
 * measured child killed before its helper could report its rusage), and is left out. Outlier
 * indices still refer to `values`; with no finite value at all, every field is NaN and count 0.
 */
export function summarizeAvailable(values: readonly number[], quantum = 0): Summary {
  const kept: number[] = []
  values.forEach((v, i) => { if (Number.isFinite(v)) kept.push(i) })
  if (kept.length === 0) {
    return { count: 0, min: NaN, q1: NaN, median: NaN, q3: NaN, max: NaN, mean: NaN, stddev: NaN, lowerFence: NaN, upperFence: NaN, outliers: [] }
  }
  const s = summarize(kept.map(i => values[i]), quantum)
  return { ...s, outliers: s.outliers.map(j => kept[j]) }
}

export interface Ratio {
  /** The median of the pairwise ratios: the figure reports quote. */
  median: number
  q1: number
  q3: number
  min: number
  max: number
  /** Pairs that had a usable (finite, positive denominator) ratio. */
  pairs: number
}

/**
 * How `values` compares with `reference` when run i of each was taken side by side (interleaved
 * A B A B): the median of values[i] / reference[i]. Pairing first means drift on a noisy machine
 * (a neighbour's load, thermal throttling) hits both sides of each ratio and cancels, which a
 * ratio of two medians taken minutes apart does not. Pairs with a zero reference are skipped;
 * null when none is left.
 */
export function pairedRatio(values: readonly number[], reference: readonly number[]): Ratio | null {
  const ratios = pairwiseRatios(values, reference)
  if (ratios.length === 0) return null
  const s = summarize(ratios)
  return { median: s.median, q1: s.q1, q3: s.q3, min: s.min, max: s.max, pairs: ratios.length }
}

/** values[i] / reference[i] for every pair with finite figures and a positive reference. */
export function pairwiseRatios(values: readonly number[], reference: readonly number[]): number[] {
  const ratios: number[] = []
  const n = Math.min(values.length, reference.length)
  for (let i = 0; i < n; i++) {
    if (reference[i] > 0 && Number.isFinite(values[i]) && Number.isFinite(reference[i])) ratios.push(values[i] / reference[i])
  }
  return ratios
}

// ---- Confidence interval of the paired ratio: the bootstrap ------------------------------------

/**
 * mulberry32: a 32-bit PRNG small enough to read, good enough for resampling, and seeded, so a
 * report's intervals come out the same from the same runs (the seed is in the JSON).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface BootstrapOptions {
  /** Coverage of the interval (default 0.95). */
  level?: number
  /** How many resamples (default 2000). */
  resamples?: number
  /** The PRNG's seed (default BOOTSTRAP_SEED). */
  seed?: number
}

export const BOOTSTRAP_LEVEL = 0.95
export const BOOTSTRAP_RESAMPLES = 2000
export const BOOTSTRAP_SEED = 18
export const BOOTSTRAP_METHOD = 'percentile bootstrap: the pairs resampled with replacement, the median of their ratios each time'

export interface Interval {
  level: number
  low: number
  high: number
}

/**
 * A confidence interval for the median of the pairwise ratios values[i] / reference[i]: resample
 * the pairs with replacement, take the median ratio of each resample, and read the interval off the
 * percentiles of those medians. Resampling pairs, not each side on its own, keeps what pairing
 * bought (drift cancels within a pair). null when no pair has a usable ratio.
 */
export function bootstrapRatioInterval(values: readonly number[], reference: readonly number[], options: BootstrapOptions = {}): Interval | null {
  const { level = BOOTSTRAP_LEVEL, resamples = BOOTSTRAP_RESAMPLES, seed = BOOTSTRAP_SEED } = options
  const ratios = pairwiseRatios(values, reference)
  const n = ratios.length
  if (n === 0) return null
  const random = mulberry32(seed)
  const medians = new Float64Array(resamples)
  const sample = new Float64Array(n)
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) sample[i] = ratios[Math.floor(random() * n)]
    sample.sort()
    medians[b] = sortedQuantile(sample, 0.5)
  }
  medians.sort()
  const tail = (1 - level) / 2
  return { level, low: sortedQuantile(medians, tail), high: sortedQuantile(medians, 1 - tail) }
}

// ---- Significance tests -----------------------------------------------------------------------

/** A test is exact (the whole permutation distribution, ties included) up to this many values. */
export const EXACT_UP_TO = 50
export const SIGNIFICANCE_LEVEL = 0.05

export interface TestResult {
  /** W+ (signed-rank) or U of the first sample (Mann-Whitney). */
  statistic: number
  /** Two-sided. 1 when there is nothing to test (no pair that differs, an empty sample). */
  pValue: number
  /** The values the test used: non-zero differences (signed-rank), both samples (Mann-Whitney). */
  n: number
  /** The exact permutation distribution, or the normal approximation with tie and continuity corrections. */
  exact: boolean
  significant: boolean
}

/** Ranks 1..n of `values` in their order, ties given the mean of the ranks they span (midranks). */
export function midranks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0])
  const ranks = new Array<number>(values.length)
  for (let start = 0; start < order.length;) {
    let end = start
    while (end + 1 < order.length && order[end + 1][0] === order[start][0]) end++
    for (let k = start; k <= end; k++) ranks[order[k][1]] = (start + end) / 2 + 1
    start = end + 1
  }
  return ranks
}

/** Σ (t³ - t) over the groups of tied values, the tie correction of both tests' variances. */
function tieSum(values: readonly number[]): number {
  const counts = new Map<number, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  let sum = 0
  for (const t of counts.values()) sum += t ** 3 - t
  return sum
}

/**
 * The complementary error function for x >= 0, by the Chebyshev fit of Numerical Recipes' erfcc
 * (relative error below 1.2e-7 everywhere): p-values to far more digits than reports print, and
 * tail areas that stay accurate where 1 - cdf would round to 0.
 */
export function erfc(x: number): number {
  const t = 1 / (1 + 0.5 * x)
  return t * Math.exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
}

/** Two-sided p from a normal approximation: |statistic - mean| shrunk by the continuity correction. */
function normalPValue(statistic: number, mu: number, variance: number): number {
  if (variance <= 0) return 1
  const z = Math.max(0, Math.abs(statistic - mu) - 0.5) / Math.sqrt(variance)
  return Math.min(1, erfc(z / Math.SQRT2))
}

/**
 * Two-sided p from an exact null distribution of a statistic on the doubled-rank scale (every
 * midrank times 2 is a whole number): `counts[s]` ways of reaching a doubled statistic s.
 */
function exactPValue(counts: Float64Array, observed: number): number {
  let total = 0, below = 0, above = 0
  counts.forEach((c, s) => {
    total += c
    if (s <= observed) below += c
    if (s >= observed) above += c
  })
  return Math.min(1, 2 * Math.min(below, above) / total)
}

/**
 * The Wilcoxon signed-rank test of `values` against `reference`, run i of each taken side by side.
 *
 * Why this test and not Mann-Whitney U: the runs are paired (interleaved, A B A B), and a
 * neighbour's load or thermal drift moves both runs of a pair together. The signed-rank test works
 * on the within-pair differences, so that drift cancels as it does in the paired ratio, where
 * Mann-Whitney would count it as noise and lose power. The differences are taken as log ratios,
 * log(values[i] / reference[i]), so the test asks the question the ratio answers (is the median
 * ratio 1?) and a run twice as slow weighs the same whether the machine was fast or slow then.
 * Pairs with no difference are dropped (Wilcoxon's treatment of zeros); ties share midranks.
 * Exact up to EXACT_UP_TO differences (the permutation distribution of W+ given those midranks),
 * else the normal approximation with tie and continuity corrections (as SciPy's
 * `wilcoxon(..., method='approx', correction=True)`).
 */
export function signedRankTest(values: readonly number[], reference: readonly number[], alpha = SIGNIFICANCE_LEVEL): TestResult {
  const d = pairwiseRatios(values, reference).map(Math.log).filter(x => x !== 0)
  const n = d.length
  if (n === 0) return { statistic: 0, pValue: 1, n: 0, exact: true, significant: false }
  const ranks = midranks(d.map(Math.abs))
  let wPlus = 0
  d.forEach((x, i) => { if (x > 0) wPlus += ranks[i] })
  let pValue: number
  const exact = n <= EXACT_UP_TO
  if (exact) {
    // Under the null hypothesis each rank's sign is + or - with probability 1/2: count the ways
    // of reaching each (doubled) sum, one rank at a time.
    const doubled = ranks.map(r => Math.round(2 * r))
    const counts = new Float64Array(doubled.reduce((a, b) => a + b, 0) + 1)
    counts[0] = 1
    let reach = 0
    for (const r of doubled) {
      for (let s = reach; s >= 0; s--) if (counts[s]) counts[s + r] += counts[s]
      reach += r
    }
    pValue = exactPValue(counts, Math.round(2 * wPlus))
  } else {
    const mu = n * (n + 1) / 4
    const variance = n * (n + 1) * (2 * n + 1) / 24 - tieSum(d.map(Math.abs)) / 48
    pValue = normalPValue(wPlus, mu, variance)
  }
  return { statistic: wPlus, pValue, n, exact, significant: pValue < alpha }
}

/**
 * The Mann-Whitney U test (Wilcoxon rank-sum), two-sided: do `a` and `b` come from one
 * distribution? For samples that are not paired, as runs from two sessions are (--compare). NaN
 * figures are left out. Exact up to EXACT_UP_TO values in all (the permutation distribution of
 * the rank sum given the midranks, so ties are handled exactly too), else the normal
 * approximation with tie and continuity corrections (SciPy's `mannwhitneyu(...,
 * method='asymptotic')`). `statistic` is U of `a`.
 */
export function mannWhitneyTest(a: readonly number[], b: readonly number[], alpha = SIGNIFICANCE_LEVEL): TestResult {
  const x = a.filter(Number.isFinite), y = b.filter(Number.isFinite)
  const n1 = x.length, n2 = y.length, n = n1 + n2
  if (n1 === 0 || n2 === 0) return { statistic: 0, pValue: 1, n, exact: true, significant: false }
  const all = [...x, ...y]
  const ranks = midranks(all)
  let r1 = 0
  for (let i = 0; i < n1; i++) r1 += ranks[i]
  const u = r1 - n1 * (n1 + 1) / 2
  let pValue: number
  const exact = n <= EXACT_UP_TO
  if (exact) {
    // Under the null hypothesis every choice of n1 of the n ranks for `a` is equally likely:
    // count the ways of reaching each (doubled) rank sum with k ranks chosen, one rank at a time.
    const doubled = ranks.map(r => Math.round(2 * r))
    const top = doubled.reduce((s, r) => s + r, 0)
    const ways = Array.from({ length: n1 + 1 }, () => new Float64Array(top + 1))
    ways[0][0] = 1
    let reach = 0
    for (const r of doubled) {
      for (let k = n1; k >= 1; k--) {
        const from = ways[k - 1], to = ways[k]
        for (let s = reach; s >= 0; s--) if (from[s]) to[s + r] += from[s]
      }
      reach += r
    }
    pValue = exactPValue(ways[n1], Math.round(2 * r1))
  } else {
    const mu = n1 * n2 / 2
    const variance = n1 * n2 / 12 * ((n + 1) - tieSum(all) / (n * (n - 1)))
    pValue = normalPValue(u, mu, variance)
  }
  return { statistic: u, pValue, n, exact, significant: pValue < alpha }
}
