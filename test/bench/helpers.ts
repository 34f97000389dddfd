// Synthetic benchmarks for the report tests: runs with given wall times and max RSS, every other
// figure 0, and a report built from them.
import { FIGURES, type Figures } from '../../lib/bench/figures.js'
import { buildReport, type BenchOptionsRecord, type BenchReport, type BenchRun } from '../../lib/bench/report.js'

export const OPTIONS: BenchOptionsRecord = { runs: 0, warmup: 0, timeoutMs: 0, shell: false, measure: true, ignoreFailure: false, launcher: 'auto', rlimits: {} }

/** One run per wall time; max RSS taken from `rss` in turn. */
export function runsOf(wall: number[], rss: number[]): BenchRun[] {
  return wall.map((w, i) => {
    const figures = {} as Figures
    for (const f of FIGURES) figures[f.key] = 0
    figures.wallMs = w
    figures.maxRSSKiB = rss[i % rss.length]
    return { round: i + 1, figures, exitCode: 0, signal: null, timedOut: false, diagnostic: '' }
  })
}

/** A report of [command, wall times, max RSS] rows, the first the reference. */
export function report(commands: Array<[string, number[], number[]]>): BenchReport {
  return buildReport(commands.map(([command, wall, rss]) => ({ command, argv: command.split(' '), runs: runsOf(wall, rss) })), OPTIONS)
}
