// The statistics of `tileharness bench` and of the performance suite: one quantile definition,
// one outlier rule, one way to compare two commands. Everything here is pure and synchronous.

/**
 * The q-quantile (0..1) of `values` by linear interpolation between order statistics
 * (Hyndman & Fan type 7, what R, NumPy and spreadsheets use by default). NaN for no values.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sortedQuantile(sorted, q)
}

function sortedQuantile(sorted: readonly number[], q: number): number {
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
  /** Tukey's fences, Q1 - 1.5 IQR and Q3 + 1.5 IQR: values outside them are outliers. */
  lowerFence: number
  upperFence: number
  /** Indices (into the values given) of the outliers, in order. */
  outliers: number[]
}

/** min, quartiles, max, mean, sample stddev and Tukey outliers of `values` (at least one). */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError('summarize: no values')
  const sorted = [...values].sort((a, b) => a - b)
  const m = mean(values)
  let squares = 0
  for (const v of values) squares += (v - m) ** 2
  const q1 = sortedQuantile(sorted, 0.25)
  const q3 = sortedQuantile(sorted, 0.75)
  const iqr = q3 - q1
  const lowerFence = q1 - 1.5 * iqr
  const upperFence = q3 + 1.5 * iqr
  const outliers: number[] = []
  values.forEach((v, i) => { if (v < lowerFence || v > upperFence) outliers.push(i) })
  return {
    count: values.length,
    min: sorted[0],
    q1,
    median: sortedQuantile(sorted, 0.5),
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
export function summarizeAvailable(values: readonly number[]): Summary {
  const kept: number[] = []
  values.forEach((v, i) => { if (Number.isFinite(v)) kept.push(i) })
  if (kept.length === 0) {
    return { count: 0, min: NaN, q1: NaN, median: NaN, q3: NaN, max: NaN, mean: NaN, stddev: NaN, lowerFence: NaN, upperFence: NaN, outliers: [] }
  }
  const s = summarize(kept.map(i => values[i]))
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
  const ratios: number[] = []
  const n = Math.min(values.length, reference.length)
  for (let i = 0; i < n; i++) {
    if (reference[i] > 0 && Number.isFinite(values[i]) && Number.isFinite(reference[i])) ratios.push(values[i] / reference[i])
  }
  if (ratios.length === 0) return null
  const s = summarize(ratios)
  return { median: s.median, q1: s.q1, q3: s.q3, min: s.min, max: s.max, pairs: ratios.length }
}
