// The figures `tileharness bench` takes from every run: the one table of what is measured, in
// which unit, and how it is printed. Reports, JSON, CSV and SVG all read it from here.
import type { ChildResult } from '../spawn/index.js'

/** How a figure's values are scaled for printing. */
export type FigureKind = 'time' | 'memory' | 'count'

export interface Figure {
  /** The key in JSON and CSV; the unit is part of the name where there is one. */
  key: string
  /** What reports call it. */
  label: string
  /** The unit of the raw values. */
  unit: 'ms' | 'KiB' | 'count' | 'blocks'
  kind: FigureKind
  /**
   * The figure's resolution in its unit: the smallest step it moves in (1 µs for the clocks, a
   * 4 KiB page for max RSS, 1 for counts). The outlier rule does not fire on steps this small.
   */
  quantum: number
  of(r: ChildResult): number
}

export const FIGURES = [
  { key: 'wallMs', label: 'wall', unit: 'ms', kind: 'time', quantum: 0.001, of: r => r.durationMs },
  { key: 'userMs', label: 'user', unit: 'ms', kind: 'time', quantum: 0.001, of: r => r.rusage.userCPUTime / 1000 },
  { key: 'sysMs', label: 'sys', unit: 'ms', kind: 'time', quantum: 0.001, of: r => r.rusage.systemCPUTime / 1000 },
  { key: 'maxRSSKiB', label: 'max RSS', unit: 'KiB', kind: 'memory', quantum: 4, of: r => r.rusage.maxRSS },
  { key: 'minorPageFault', label: 'minor faults', unit: 'count', kind: 'count', quantum: 1, of: r => r.rusage.minorPageFault },
  { key: 'majorPageFault', label: 'major faults', unit: 'count', kind: 'count', quantum: 1, of: r => r.rusage.majorPageFault },
  { key: 'voluntaryContextSwitches', label: 'vol. ctx sw', unit: 'count', kind: 'count', quantum: 1, of: r => r.rusage.voluntaryContextSwitches },
  { key: 'involuntaryContextSwitches', label: 'invol. ctx sw', unit: 'count', kind: 'count', quantum: 1, of: r => r.rusage.involuntaryContextSwitches },
  // getrusage counts file-system I/O in 512-byte blocks, whatever the device's block size.
  { key: 'fsRead', label: 'fs in', unit: 'blocks', kind: 'count', quantum: 1, of: r => r.rusage.fsRead },
  { key: 'fsWrite', label: 'fs out', unit: 'blocks', kind: 'count', quantum: 1, of: r => r.rusage.fsWrite },
] as const satisfies readonly Figure[]

export type FigureKey = (typeof FIGURES)[number]['key']
export type Figures = Record<FigureKey, number>

export function figuresOf(r: ChildResult): Figures {
  const out = {} as Figures
  for (const f of FIGURES) out[f.key] = f.of(r)
  return out
}

/** A unit for printing a set of values of one kind, chosen so that the largest reads well. */
export interface DisplayUnit {
  /** Printed after the number, e.g. 'ms', 'MiB'; '' for counts. */
  suffix: string
  /** Raw value / divisor = displayed value. */
  divisor: number
}

const TIME_UNITS: DisplayUnit[] = [{ suffix: 'µs', divisor: 0.001 }, { suffix: 'ms', divisor: 1 }, { suffix: 's', divisor: 1000 }]
/** `--time-unit`'s words (hyperfine's) for the time units. */
export const TIME_UNIT_NAMES = { microsecond: TIME_UNITS[0], millisecond: TIME_UNITS[1], second: TIME_UNITS[2] } as const
export type TimeUnitName = keyof typeof TIME_UNIT_NAMES
const MEMORY_UNITS: DisplayUnit[] = [{ suffix: 'KiB', divisor: 1 }, { suffix: 'MiB', divisor: 1024 }, { suffix: 'GiB', divisor: 1024 ** 2 }]

/** The largest unit in which `largest` (a raw value of `kind`) is still at least 1; for times,
 * `timeUnit` when one is given (--time-unit). */
export function displayUnit(kind: FigureKind, largest: number, timeUnit?: TimeUnitName | null): DisplayUnit {
  if (kind === 'count') return { suffix: '', divisor: 1 }
  if (kind === 'time' && timeUnit) return TIME_UNIT_NAMES[timeUnit]
  const units = kind === 'time' ? TIME_UNITS : MEMORY_UNITS
  let chosen = units[0]
  for (const u of units) if (Math.abs(largest) >= u.divisor) chosen = u
  return chosen
}

/** `value` in `unit`, with three significant digits (at least no decimals for whole counts). */
export function formatValue(value: number, unit: DisplayUnit, kind: FigureKind): string {
  if (!Number.isFinite(value)) return String(value)
  const v = value / unit.divisor
  let text: string
  if (kind === 'count' && Number.isInteger(v)) text = String(v)
  else if (Math.abs(v) >= 100 || v === 0) text = v.toFixed(kind === 'count' && !Number.isInteger(v) ? 1 : 0)
  else if (Math.abs(v) >= 10) text = v.toFixed(1)
  else text = v.toFixed(2)
  return unit.suffix ? `${text} ${unit.suffix}` : text
}
