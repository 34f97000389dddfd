// A finished benchmark as data (BenchReport), built in one place from the runs, and its printed
// forms: the terminal summary, Markdown, CSV and JSON. The SVG is in svg.ts.
import { formatComparison, type Comparison } from './compare.js'
import { FIGURES, displayUnit, formatValue, type FigureKey, type Figures, type TimeUnitName } from './figures.js'
import { machineLoad, type LoadReading, type MachineLoad } from './machine.js'
import {
  BOOTSTRAP_LEVEL, BOOTSTRAP_METHOD, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, OUTLIER_FLOOR, OUTLIER_RULE, OUTLIER_RULE_ID,
  SIGNIFICANCE_LEVEL, bootstrapRatioInterval, pairedRatio, signedRankTest, summarizeAvailable,
  type Interval, type Ratio, type Summary, type TestResult,
} from './statistics.js'

export const BENCH_SCHEMA = 'tileharness-bench/1'

/** One measured run (warmup runs are not kept). */
export interface BenchRun {
  /** 1-based; run i of every command was taken in the same round, side by side. */
  round: number
  figures: Figures
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  /** The harness's verdict; '' when the command exited normally, whatever its code. */
  diagnostic: string
}

export interface BenchOptionsRecord {
  runs: number
  warmup: number
  /** 0 = none. */
  timeoutMs: number
  shell: boolean
  measure: boolean
  ignoreFailure: boolean
  launcher: string
  rlimits: Record<string, unknown>
  /** Runs chosen as hyperfine does (`runs` is then the count chosen); null with -n. */
  automaticRuns?: { minRuns: number; maxRuns: number | null; minTimeMs: number } | null
  /** The commands' stdin: a file, or null for /dev/null. */
  input?: string | null
  /** Where the commands' output went: 'null', 'pipe', 'inherit' or a file. */
  output?: string
  /** --time-unit: times printed in it (terminal, Markdown; as hyperfine, not CSV nor JSON); null: each figure's own. */
  timeUnit?: TimeUnitName | null
  /** --sort: the order of the Summary's ratios and of the Markdown rows (see displayOrder). */
  sort?: SortOrder
  /** --cpu: the CPUs every run was pinned to; null or absent: not pinned. */
  cpus?: number[] | null
}

/** hyperfine's --sort: auto (Summary by mean wall time, tables as given), command (as given) or mean-time. */
export const SORT_ORDERS = ['auto', 'command', 'mean-time'] as const
export type SortOrder = (typeof SORT_ORDERS)[number]

export interface CommandReport {
  /** Its --command-name, else the command as given, each with its parameters substituted. */
  command: string
  /** What was run. */
  argv: string[]
  reference: boolean
  /** Its values of -P/-L parameters, by name (hyperfine's `parameters`); {} when there are none. */
  parameters: Record<string, string>
  runs: BenchRun[]
  summary: Record<FigureKey, Summary>
  /** Runs that exited non-zero, were killed by a signal or timed out. */
  failedRuns: number
  timedOutRuns: number
  /** Against the reference command (null for the reference itself). */
  ratio: { wallMs: ReferenceRatio | null; maxRSSKiB: ReferenceRatio | null } | null
}

/** The paired ratio to the reference, its confidence interval and the significance of the difference. */
export interface ReferenceRatio extends Ratio {
  /** report.ratioInterval says how. */
  interval: Interval
  /** The Wilcoxon signed-rank test of the pairs (report.significance). */
  test: TestResult
}

export interface BenchReport {
  schema: typeof BENCH_SCHEMA
  options: BenchOptionsRecord
  outlierRule: { id: typeof OUTLIER_RULE_ID; description: string; floor: string }
  ratioMethod: string
  /** How each ratio's confidence interval was drawn; the same seed gives the same intervals. */
  ratioInterval: { method: string; level: number; resamples: number; seed: number }
  /** How each command's difference from the reference is tested. */
  significance: { test: string; alpha: number }
  units: Record<FigureKey, string>
  commands: CommandReport[]
  /** The load before the first run and after the last, judged; null when not read. */
  machine: MachineLoad | null
  /** Set by --compare (compare.ts): this benchmark against a baseline report. */
  comparison?: Comparison
}

/** What buildReport takes besides the runs, read from the world by the caller so tests can inject it. */
export interface ReportContext {
  /** The load readings before the first run and after the last. */
  load?: { start: LoadReading; end: LoadReading }
  /** The bootstrap's seed (default BOOTSTRAP_SEED). */
  seed?: number
}

export interface CommandRuns {
  command: string
  argv: string[]
  parameters?: Record<string, string>
  runs: BenchRun[]
}

export const RATIO_METHOD = 'median of the pairwise ratios run i / reference run i, runs interleaved (A B A B ...)'
export const SIGNIFICANCE_TEST = 'Wilcoxon signed-rank test on the pairwise log ratios, two-sided'

export function isFailedRun(r: Pick<BenchRun, 'exitCode' | 'signal' | 'timedOut'>): boolean {
  return r.timedOut || r.signal !== null || r.exitCode !== 0
}

/** The report for `commands` (the reference first), each with at least one run. */
export function buildReport(commands: CommandRuns[], options: BenchOptionsRecord, context: ReportContext = {}): BenchReport {
  const column = (c: CommandRuns, key: FigureKey) => c.runs.map(r => r.figures[key])
  const reference = commands[0]
  const seed = context.seed ?? BOOTSTRAP_SEED
  const ratioTo = (c: CommandRuns, key: 'wallMs' | 'maxRSSKiB'): ReferenceRatio | null => {
    const values = column(c, key), ref = column(reference, key)
    const ratio = pairedRatio(values, ref)
    return ratio && { ...ratio, interval: bootstrapRatioInterval(values, ref, { seed })!, test: signedRankTest(values, ref) }
  }
  const units = {} as Record<FigureKey, string>
  for (const f of FIGURES) units[f.key] = f.unit
  return {
    schema: BENCH_SCHEMA,
    options,
    outlierRule: { id: OUTLIER_RULE_ID, description: OUTLIER_RULE, floor: OUTLIER_FLOOR },
    ratioMethod: RATIO_METHOD,
    ratioInterval: { method: BOOTSTRAP_METHOD, level: BOOTSTRAP_LEVEL, resamples: BOOTSTRAP_RESAMPLES, seed },
    significance: { test: SIGNIFICANCE_TEST, alpha: SIGNIFICANCE_LEVEL },
    units,
    machine: context.load ? machineLoad(context.load.start, context.load.end) : null,
    commands: commands.map((c, i) => {
      const summary = {} as Record<FigureKey, Summary>
      for (const f of FIGURES) summary[f.key] = summarizeAvailable(column(c, f.key), f.quantum)
      return {
        command: c.command,
        argv: c.argv,
        reference: i === 0,
        parameters: c.parameters ?? {},
        runs: c.runs,
        summary,
        failedRuns: c.runs.filter(isFailedRun).length,
        timedOutRuns: c.runs.filter(r => r.timedOut).length,
        ratio: i === 0 ? null : { wallMs: ratioTo(c, 'wallMs'), maxRSSKiB: ratioTo(c, 'maxRSSKiB') },
      }
    }),
  }
}

/** The commands in the order `where` shows them by the report's --sort. */
export function displayOrder(report: BenchReport, where: 'summary' | 'table'): CommandReport[] {
  const sort = report.options.sort ?? 'command'
  if (sort === 'command' || (sort === 'auto' && where === 'table')) return report.commands
  return [...report.commands].sort((a, b) => a.summary.wallMs.mean - b.summary.wallMs.mean)
}

export function formatRatio(r: Ratio | null): string {
  if (r === null) return 'n/a'
  return `${ratioText(r.median)}x`
}

/** A confidence interval of a ratio, `[1.48–1.60]`. */
function formatInterval(r: ReferenceRatio | null): string {
  return r ? `[${ratioText(r.interval.low)}–${ratioText(r.interval.high)}]` : ''
}

/**
 * A ratio to two places, `1.48`; below 0.1 to two significant digits, `0.0012`: `true` against a
 * 0.6 s reference read `0.00x [0.00–0.00]`.
 */
function ratioText(x: number): string {
  if (x === 0 || Math.abs(x) >= 0.1 || !Number.isFinite(x)) return x.toFixed(2)
  // toPrecision writes 1.2e-7 below 1e-6: the places two significant digits take instead.
  return x.toFixed(Math.min(100, 1 - Math.floor(Math.log10(Math.abs(x)))))
}

/** A p-value to two significant places, as few as say it: 0.25, 0.0098, <0.001. */
export function formatPValue(p: number): string {
  if (p < 0.001) return '<0.001'
  return p >= 0.01 ? p.toFixed(2) : p.toFixed(3)
}

function significance(r: ReferenceRatio | null): string {
  if (!r) return ''
  const p = formatPValue(r.test.pValue)
  return `p${p.startsWith('<') ? '' : '='}${p} ${r.test.significant ? 'significant' : 'not significant'}`
}

/** `text` padded to `width` columns, on the left with `right` (right-aligned). */
export function pad(text: string, width: number, right = false): string {
  // Count code points, so that 'µs' is two columns wide as it is on a terminal.
  const n = [...text].length
  if (n >= width) return text
  return right ? ' '.repeat(width - n) + text : text + ' '.repeat(width - n)
}

function runList(indices: number[], runs: BenchRun[]): string {
  const rounds = indices.map(i => runs[i].round)
  return rounds.length <= 6 ? rounds.join(', ') : `${rounds.slice(0, 6).join(', ')}, ...`
}

/** The terminal summary (stdout). */
export function formatText(report: BenchReport): string {
  const out: string[] = []
  const many = report.commands.length > 1
  report.commands.forEach((c, i) => {
    const tag = many && c.reference ? '  (reference)' : ''
    out.push(`Benchmark ${i + 1}: ${c.command}${tag}`)
    out.push(`  ${pad('', 14)}${pad('min', 12, true)}${pad('median', 12, true)}${pad('mean ± stddev', 24, true)}${pad('max', 12, true)}`)
    for (const f of FIGURES) {
      const s = c.summary[f.key]
      const unit = displayUnit(f.kind, s.max, report.options.timeUnit)
      const fmt = (v: number) => formatValue(v, unit, f.kind)
      const label = f.unit === 'blocks' ? `${f.label} (blk)` : f.label
      out.push(`  ${pad(label, 14)}${pad(fmt(s.min), 12, true)}${pad(fmt(s.median), 12, true)}${pad(`${fmt(s.mean)} ± ${fmt(s.stddev)}`, 24, true)}${pad(fmt(s.max), 12, true)}`)
    }
    const runs = c.runs.length
    const notes: string[] = []
    for (const key of ['wallMs', 'maxRSSKiB'] as const) {
      const o = c.summary[key].outliers
      if (o.length) notes.push(`${key === 'wallMs' ? 'wall' : 'max RSS'} ${o.length} of ${runs} (run ${runList(o, c.runs)})`)
    }
    out.push(`  ${runs} runs; outliers ${OUTLIER_RULE}: ${notes.length ? notes.join('; ') : 'none'}`)
    if (c.failedRuns) {
      const timed = c.timedOutRuns ? `, ${c.timedOutRuns} of them timed out` : ''
      out.push(`  warning: ${c.failedRuns} of ${runs} runs failed${timed} (--ignore-failure)`)
    }
    out.push('')
  })
  if (many) {
    out.push(`Summary: wall time and max RSS relative to '${report.commands[0].command}'`)
    out.push(`  (${RATIO_METHOD};`)
    out.push(`  in brackets its ${report.ratioInterval.level * 100}% confidence interval, by the bootstrap with seed ${report.ratioInterval.seed};`)
    out.push(`  p: ${report.significance.test}, significant below ${report.significance.alpha})`)
    const width = Math.min(40, Math.max(...report.commands.slice(1).map(c => [...c.command].length)))
    for (const c of displayOrder(report, 'summary').filter(c => !c.reference)) {
      const w = c.ratio!.wallMs, m = c.ratio!.maxRSSKiB
      const wall = pad(`wall ${formatRatio(w)} ${formatInterval(w)} ${significance(w)}`, 48)
      out.push(`  ${pad(c.command, width)}  ${wall}  max RSS ${formatRatio(m)} ${formatInterval(m)} ${significance(m)}`.trimEnd())
    }
    out.push('')
  }
  if (report.comparison) out.push(formatComparison(report.comparison))
  if (report.machine?.warning) out.push(`warning: ${report.machine.warning}`, '')
  return out.join('\n')
}

function markdownCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

/** One table, one row per command, hyperfine's layout plus the resource columns. */
export function formatMarkdown(report: BenchReport): string {
  const largest = (key: FigureKey) => Math.max(...report.commands.map(c => c.summary[key].max))
  const wall = displayUnit('time', largest('wallMs'), report.options.timeUnit)
  const cpu = displayUnit('time', Math.max(largest('userMs'), largest('sysMs')), report.options.timeUnit)
  const rss = displayUnit('memory', largest('maxRSSKiB'))
  const t = (v: number, u = wall) => formatValue(v, u, 'time').replace(/ \S+$/, '')
  const level = report.ratioInterval.level * 100
  const p = (r: ReferenceRatio | null) => (r ? `${formatPValue(r.test.pValue)}${r.test.significant ? ' (significant)' : ''}` : '')
  const rows = [
    `| Command | Wall median [${wall.suffix}] | Wall mean ± σ [${wall.suffix}] | Wall min … max [${wall.suffix}] | User [${cpu.suffix}] | Sys [${cpu.suffix}] | Max RSS median [${rss.suffix}] | Minor faults | Ctx sw (vol/invol) | Relative wall | Relative max RSS | Wall ratio ${level}% CI | Wall p | Max RSS ratio ${level}% CI | Max RSS p |`,
    '|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const c of displayOrder(report, 'table')) {
    const s = c.summary
    const name = '`' + markdownCell(c.command).replace(/`/g, "'") + '`' + (c.reference && report.commands.length > 1 ? ' (reference)' : '')
    rows.push(`| ${name} | ${t(s.wallMs.median)} | ${t(s.wallMs.mean)} ± ${t(s.wallMs.stddev)} | ${t(s.wallMs.min)} … ${t(s.wallMs.max)} | ` +
      `${t(s.userMs.mean, cpu)} | ${t(s.sysMs.mean, cpu)} | ${formatValue(s.maxRSSKiB.median, rss, 'memory').replace(/ \S+$/, '')} | ` +
      `${formatValue(s.minorPageFault.median, { suffix: '', divisor: 1 }, 'count')} | ` +
      `${formatValue(s.voluntaryContextSwitches.median, { suffix: '', divisor: 1 }, 'count')}/${formatValue(s.involuntaryContextSwitches.median, { suffix: '', divisor: 1 }, 'count')} | ` +
      `${c.ratio ? formatRatio(c.ratio.wallMs) : '1.00x'} | ${c.ratio ? formatRatio(c.ratio.maxRSSKiB) : '1.00x'} | ` +
      `${formatInterval(c.ratio?.wallMs ?? null)} | ${p(c.ratio?.wallMs ?? null)} | ${formatInterval(c.ratio?.maxRSSKiB ?? null)} | ${p(c.ratio?.maxRSSKiB ?? null)} |`)
  }
  return rows.join('\n') + '\n'
}

export function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** Long format: one row per command and figure, raw units. */
/** The -P/-L parameters' names across the report: the CSV columns `parameter_NAME`, as hyperfine's export has them. */
export function parameterNames(report: BenchReport): string[] {
  return [...new Set(report.commands.flatMap(c => Object.keys(c.parameters)))]
}

export function formatCsv(report: BenchReport): string {
  const names = parameterNames(report)
  const rows = [['command', ...names.map(n => csvField(`parameter_${n}`)), 'reference,figure,unit,runs,min,q1,median,q3,max,mean,stddev,outliers,ratio_to_reference,ratio_ci_low,ratio_ci_high,p_value,significant'].join(',')]
  for (const c of report.commands) {
    const parameters = names.map(n => csvField(c.parameters[n] ?? ''))
    for (const f of FIGURES) {
      const s = c.summary[f.key]
      const r = c.ratio && (f.key === 'wallMs' || f.key === 'maxRSSKiB') ? c.ratio[f.key] : null
      const versus = r ? [r.median, r.interval.low, r.interval.high, r.test.pValue, r.test.significant] : ['', '', '', '', '']
      rows.push([csvField(c.command), ...parameters, c.reference, f.key, f.unit, s.count, s.min, s.q1, s.median, s.q3, s.max, s.mean, s.stddev, s.outliers.length, ...versus].join(','))
    }
  }
  return rows.join('\n') + '\n'
}

export function formatJson(report: BenchReport): string {
  return JSON.stringify(report, null, 2) + '\n'
}
