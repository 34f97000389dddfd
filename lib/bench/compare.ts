// `tileharness bench --compare BASELINE.json`: this benchmark against one written earlier by
// `bench --json`, for CI performance gates. A command regressed when its wall time got slower, or
// its max RSS larger, by more than the threshold and the difference is significant; the command
// then exits 1. Runs from two sessions are not paired, so the test is Mann-Whitney U.
import { displayUnit, formatValue, type FigureKey } from './figures.js'
import { BENCH_SCHEMA, formatPValue, pad, type BenchReport } from './report.js'
import { SIGNIFICANCE_LEVEL, mannWhitneyTest, median, type TestResult } from './statistics.js'

export const DEFAULT_THRESHOLD = 0.05
export const COMPARE_TEST = 'Mann-Whitney U test, two-sided (the runs of two sessions are not paired)'

/** The figures compared, and what more and less of each is called. */
const COMPARED = [
  { key: 'wallMs', label: 'wall', kind: 'time', worse: 'slower', better: 'faster' },
  { key: 'maxRSSKiB', label: 'max RSS', kind: 'memory', worse: 'larger', better: 'smaller' },
] as const satisfies ReadonlyArray<{ key: FigureKey; label: string; kind: 'time' | 'memory'; worse: string; better: string }>

type ComparedKey = (typeof COMPARED)[number]['key']

/** What --compare needs of a baseline report: each command's runs (NaN for a figure a run lacked). */
export interface BaselineCommand {
  command: string
  /** A --command-name, when the report has one: commands are matched by it first. */
  name?: string
  /** Its -P/-L parameter values ({} when none): a command is matched only with the same values. */
  parameters: Record<string, string>
  runs: Record<ComparedKey, number[]>
}

/** A baseline file that cannot serve: the message says why, for `--compare: '<file>' <why>`. */
export class BaselineRefused extends Error {}

/**
 * The commands of a `bench --json` report, checked as far as --compare reads it: the schema, and
 * for every command its command string and every run's wall time and max RSS (a number, or null
 * where JSON had to write NaN). Throws BaselineRefused.
 */
export function parseBaseline(text: string): BaselineCommand[] {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new BaselineRefused(`is not JSON (${(error as Error).message})`)
  }
  const report = json as { schema?: unknown; commands?: unknown }
  if (typeof json !== 'object' || json === null || report.schema !== BENCH_SCHEMA) {
    const found = typeof json === 'object' && json !== null && 'schema' in json ? `schema ${JSON.stringify(report.schema)}` : 'no schema'
    throw new BaselineRefused(`is not a 'tileharness bench --json' report (${found}; expected '${BENCH_SCHEMA}')`)
  }
  if (!Array.isArray(report.commands) || report.commands.length === 0) throw new BaselineRefused('has no commands')
  return report.commands.map((c: unknown, i): BaselineCommand => {
    const where = `commands[${i}]`
    const command = c as { command?: unknown; name?: unknown; parameters?: unknown; runs?: unknown }
    if (typeof command?.command !== 'string') throw new BaselineRefused(`has no command string at ${where}`)
    const parameters = command.parameters ?? {}
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters) || !Object.values(parameters).every(v => typeof v === 'string')) {
      throw new BaselineRefused(`has parameters that are not an object of strings at ${where}`)
    }
    if (!Array.isArray(command.runs)) throw new BaselineRefused(`has no runs at ${where}`)
    const runs = {} as Record<ComparedKey, number[]>
    for (const { key } of COMPARED) {
      runs[key] = command.runs.map((run: unknown, j) => {
        const value = (run as { figures?: Record<string, unknown> } | null)?.figures?.[key]
        if (value === null) return NaN
        if (typeof value !== 'number') throw new BaselineRefused(`has no figures.${key} at ${where}.runs[${j}]`)
        return value
      })
    }
    return { command: command.command, ...(typeof command.name === 'string' ? { name: command.name } : {}), parameters: { ...parameters } as Record<string, string>, runs }
  })
}

/** `5%`, `12.5%` or a bare `5` (percent) as a fraction; null for anything else. */
export function parseThreshold(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)%?$/.exec(text)
  return m ? Number(m[1]) / 100 : null
}

export interface FigureComparison {
  figure: ComparedKey
  baseline: { runs: number; median: number }
  now: { runs: number; median: number }
  /** now median / baseline median - 1: +0.10 is 10% more. NaN when either has no figure. */
  change: number
  test: TestResult
  /** slower/larger (a regression), faster/smaller, within threshold, not significant, or no data. */
  verdict: 'slower' | 'larger' | 'faster' | 'smaller' | 'within threshold' | 'not significant' | 'no data'
  regression: boolean
}

export interface CommandComparison {
  command: string
  /** The baseline's command it was matched with (the same string, or the same name). */
  baselineCommand: string
  figures: FigureComparison[]
}

export interface Comparison {
  /** The baseline file, as given. */
  baseline: string
  threshold: number
  test: string
  alpha: number
  commands: CommandComparison[]
  /** Commands of this benchmark the baseline lacks, and the reverse: not compared. */
  notInBaseline: string[]
  onlyInBaseline: string[]
  /** A figure of some command regressed: --compare exits 1. */
  regressed: boolean
}

function compareFigure(key: ComparedKey, before: number[], after: number[], threshold: number): FigureComparison {
  const spec = COMPARED.find(c => c.key === key)!
  const base = before.filter(Number.isFinite), now = after.filter(Number.isFinite)
  const change = base.length && now.length && median(base) > 0 ? median(now) / median(base) - 1 : NaN
  const test = mannWhitneyTest(now, base)
  let verdict: FigureComparison['verdict']
  if (Number.isNaN(change)) verdict = 'no data'
  else if (Math.abs(change) <= threshold) verdict = 'within threshold'
  else if (!test.significant) verdict = 'not significant'
  else verdict = change > 0 ? spec.worse : spec.better
  return {
    figure: key,
    baseline: { runs: base.length, median: base.length ? median(base) : NaN },
    now: { runs: now.length, median: now.length ? median(now) : NaN },
    change, test, verdict,
    regression: verdict === spec.worse,
  }
}

/**
 * `report` against `baseline` (read from `file`): each command of the report that the baseline
 * has, matched by --command-name when both have one, else by the command string.
 */
/** Parameter values as one comparable string, whatever order their names came in. */
function parameterKey(parameters: Record<string, string> | undefined): string {
  return JSON.stringify(Object.entries(parameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export function compareWithBaseline(baseline: BaselineCommand[], file: string, report: BenchReport, threshold = DEFAULT_THRESHOLD): Comparison {
  const matched = new Set<BaselineCommand>()
  const commands: CommandComparison[] = []
  const notInBaseline: string[] = []
  for (const c of report.commands) {
    const name = (c as { name?: string }).name
    // Each baseline command serves once, and only a command with its parameter values: a scan
    // under one -c name, or two commands alike, each meet their own, in order.
    const values = parameterKey(c.parameters)
    const free = baseline.filter(b => !matched.has(b) && parameterKey(b.parameters) === values)
    const before = (name !== undefined ? free.find(b => b.name === name) : undefined) ?? free.find(b => b.command === c.command)
    if (!before) {
      notInBaseline.push(name ?? c.command)
      continue
    }
    matched.add(before)
    commands.push({
      command: name ?? c.command,
      baselineCommand: before.name ?? before.command,
      figures: COMPARED.map(({ key }) => compareFigure(key, before.runs[key], c.runs.map(r => r.figures[key]), threshold)),
    })
  }
  return {
    baseline: file, threshold, test: COMPARE_TEST, alpha: SIGNIFICANCE_LEVEL, commands, notInBaseline,
    onlyInBaseline: baseline.filter(b => !matched.has(b)).map(b => b.name ?? b.command),
    regressed: commands.some(c => c.figures.some(f => f.regression)),
  }
}

function formatChange(change: number): string {
  if (Number.isNaN(change)) return 'n/a'
  const percent = change * 100
  const text = Math.abs(percent) >= 100 ? percent.toFixed(0) : Math.abs(percent) >= 10 ? percent.toFixed(1) : percent.toFixed(2)
  return `${percent >= 0 ? '+' : ''}${text}%`
}

/** The table the summary prints under the benchmark: baseline vs now, one row per command and figure. */
export function formatComparison(c: Comparison): string {
  const percent = `${+(c.threshold * 100).toFixed(4)}%`
  const out = [
    `Compared with the baseline '${c.baseline}' (medians; a regression is ${percent} worse and significant;`,
    `  p: ${c.test}, significant below ${c.alpha})`,
  ]
  const width = Math.min(40, Math.max(7, ...c.commands.map(x => [...x.command].length)))
  out.push(`  ${pad('command', width)}  ${pad('figure', 8)}${pad('baseline', 12, true)}${pad('now', 12, true)}${pad('change', 10, true)}${pad('p', 8, true)}  verdict`)
  for (const command of c.commands) {
    for (const f of command.figures) {
      const spec = COMPARED.find(x => x.key === f.figure)!
      const unit = displayUnit(spec.kind, Math.max(f.baseline.median || 0, f.now.median || 0))
      const fmt = (v: number) => formatValue(v, unit, spec.kind)
      const verdict = f.regression ? `${f.verdict} (regression)` : f.verdict
      out.push(`  ${pad(command.command, width)}  ${pad(spec.label, 8)}${pad(fmt(f.baseline.median), 12, true)}${pad(fmt(f.now.median), 12, true)}` +
        `${pad(formatChange(f.change), 10, true)}${pad(formatPValue(f.test.pValue), 8, true)}  ${verdict}`)
    }
  }
  if (c.notInBaseline.length) out.push(`  not in the baseline, not compared: ${c.notInBaseline.map(x => `'${x}'`).join(', ')}`)
  if (c.onlyInBaseline.length) out.push(`  only in the baseline: ${c.onlyInBaseline.map(x => `'${x}'`).join(', ')}`)
  const regressions = c.commands.flatMap(x => x.figures.filter(f => f.regression).map(f => `${x.command} ${COMPARED.find(s => s.key === f.figure)!.label}`))
  out.push(regressions.length ? `  regressed: ${regressions.join(', ')} (exit status 1)` : '  no regression')
  out.push('')
  return out.join('\n')
}
