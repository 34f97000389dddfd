// `tileharness bench`: hyperfine's habits (warmup, repeated runs, min/median/mean/max/stddev,
// outliers, relative speed) with the resource figures hyperfine lacks, each run measured by the
// harness. Runs are interleaved, A B A B, and commands compared by the median of pairwise ratios.
import fs from 'node:fs'
import { splitCommand } from '../split-command.js'
import { BaselineRefused, DEFAULT_THRESHOLD, compareWithBaseline, parseBaseline, parseThreshold, type BaselineCommand } from '../bench/compare.js'
import { benchSvg } from '../bench/svg.js'
import { figuresOf } from '../bench/figures.js'
import { loadReading } from '../bench/machine.js'
import { ProgressBar } from '../bench/progress.js'
import {
  buildReport, formatCsv, formatJson, formatMarkdown, formatText,
  type BenchOptionsRecord, type BenchReport, type BenchRun, type CommandRuns,
} from '../bench/report.js'
import { spawnChild, type ChildResult, type ChildSpec } from '../spawn/index.js'
import { spawnFailureMessage } from '../spawn-failure.js'
import { CHILD_OPTIONS, childSpecOf, defaultChildOptions, takeChildOption, type ChildOptions } from './child-options.js'
import { UsageError, parseCommandLine, type OptionTable } from './options.js'
import { OutputRefused, errnoText, isStandardOutput, resolveOutput, writeOutput } from './output.js'
import { HARNESS_FAILURE } from './run.js'

export const BENCH_USAGE = `usage: tileharness bench [-n 10] [--warmup 1] [--timeout 30s] [--rlimit as=2G]...
                         [--json F] [--markdown F] [--csv F] [--svg F] [--reference 'CMD']
                         [--shell] [--ignore-failure] [--no-measure] [--launcher L] [--show-output]
                         [--compare BASELINE.json [--threshold 5%]]
                         [--] 'CMD A' ['CMD B' ...]

  -n, --runs N        measured runs per command (default 10)
  --warmup N          unmeasured runs per command first (default 1)
  --timeout D         kill a run after D (500ms, 5s, 2m); the run is reported as timed out
  --rlimit N=V        a resource limit for every run (as 'tileharness run --rlimit')
  --reference CMD     compare every command with CMD (default: the first command)
  --shell             run each command with 'sh -c CMD' (default: split into words, no shell)
  --ignore-failure    keep going when a run exits non-zero, is killed or times out
  --no-measure        take rusage as the parent sees it instead of through the measuring
                      helper (then max RSS is at least this process's own)
  --launcher L        auto (default), posix_spawn or fork
  --show-output       let the commands write to this terminal (default: /dev/null)
  --json F            every run's raw figures and the summary
  --markdown F        the summary as a Markdown table
  --csv F             the summary, one row per command and figure
  --svg F             per-run wall time and max RSS, one strip/box plot per command
                      (each F: a file, replaced atomically when the benchmark is done; a
                      character device or FIFO, written in place; - for standard output, the
                      summary then going to standard error; checked before the first run)
  --compare F         compare with F, a report written earlier by --json: exit 1 when a
                      command's wall time or max RSS got worse by more than the threshold
                      and the difference is significant (Mann-Whitney U, p < 0.05)
  --threshold P       how much worse counts with --compare (default 5%)
  -h, --help          print this and exit

Runs are interleaved (A B A B ...) and each command's ratio to the reference is the median of
the pairwise ratios, so drift on a busy machine cancels; with it, a 95% bootstrap confidence
interval and a p-value (Wilcoxon signed-rank test on the pairs). Outliers: beyond 1.5 IQR of
the quartiles (Tukey's fences), the IQR taken as at least 4 quanta of the figure and 2% of its
median. A warning when the load average says other work competed for the CPUs. A progress bar
is drawn on stderr when it is a terminal.

exit status: 0; 1 a run failed (non-zero exit, signal, timeout), a command could not be started,
or --compare found a regression; 125 bad options, a report file that cannot be written, or a
--compare baseline that cannot be read`

export const BENCH_FAILED = 1

interface BenchOptions extends ChildOptions {
  runs: number
  warmup: number
  shell: boolean
  ignoreFailure: boolean
  showOutput: boolean
  reference: string | null
  commands: string[]
  outputs: { json?: string; markdown?: string; csv?: string; svg?: string }
  compare: { file: string; baseline: BaselineCommand[] } | null
  threshold: number | null
}

const BENCH_OPTIONS: OptionTable = {
  ...CHILD_OPTIONS,
  runs: { kind: 'value', short: 'n' },
  warmup: { kind: 'value' },
  json: { kind: 'value' },
  markdown: { kind: 'value' },
  csv: { kind: 'value' },
  svg: { kind: 'value' },
  reference: { kind: 'value' },
  shell: { kind: 'flag' },
  'ignore-failure': { kind: 'flag', short: 'i' },
  'show-output': { kind: 'flag' },
  compare: { kind: 'value' },
  threshold: { kind: 'value' },
}

function count(text: string, option: string, min: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`invalid ${option} '${text}' (a whole number${min > 0 ? ` >= ${min}` : ''})`)
  }
  return Number(text)
}

/** A report file, checked by the output rules (./output.ts) before any run is spent on it. */
function writablePath(file: string, option: string): string {
  if (file === '') throw new UsageError(`option ${option} needs a file name`)
  try {
    resolveOutput(file)
  } catch (error) {
    if (!(error instanceof OutputRefused)) throw error
    throw new UsageError(`${option}: cannot write '${file}': ${error.message}`)
  }
  return file
}

/** A --compare baseline, read and checked before any run is spent. */
function baselineOf(file: string): BenchOptions['compare'] {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new UsageError(`--compare: cannot read '${file}': ${errnoText(error)}`)
  }
  try {
    return { file, baseline: parseBaseline(text) }
  } catch (error) {
    if (!(error instanceof BaselineRefused)) throw error
    throw new UsageError(`--compare: '${file}' ${error.message}`)
  }
}

export function parseBenchArgs(argv: string[]): BenchOptions {
  const o: BenchOptions = {
    ...defaultChildOptions(), runs: 10, warmup: 1, shell: false, ignoreFailure: false,
    showOutput: false, reference: null, commands: [], outputs: {}, compare: null, threshold: null,
  }
  o.commands = parseCommandLine(argv, BENCH_OPTIONS, {
    option(name, value, option) {
      if (takeChildOption(o, name, value, option)) return
      switch (name) {
        case 'runs': o.runs = count(value!, option, 1); break
        case 'warmup': o.warmup = count(value!, option, 0); break
        case 'json': case 'markdown': case 'csv': case 'svg': o.outputs[name] = writablePath(value!, option); break
        case 'reference': o.reference = value!; break
        case 'shell': o.shell = true; break
        case 'ignore-failure': o.ignoreFailure = true; break
        case 'show-output': o.showOutput = true; break
        case 'compare': o.compare = baselineOf(value!); break
        case 'threshold':
          o.threshold = parseThreshold(value!)
          if (o.threshold === null) throw new UsageError(`invalid ${option} '${value}' (a percentage: 5%, 12.5%)`)
          break
      }
    },
  })
  if (o.commands.length === 0) throw new UsageError('no command given')
  if (o.threshold !== null && o.compare === null) throw new UsageError('--threshold is for --compare')
  const toStdout = Object.entries(o.outputs).filter(([, file]) => isStandardOutput(resolveOutput(file)))
  if (toStdout.length > 1) throw new UsageError(`${toStdout.map(([name]) => `--${name}`).join(' and ')} would all write to standard output`)
  return o
}

/** The argv of one command: split like sh would, without a shell, or `sh -c CMD` with --shell. */
export function commandArgv(command: string, shell: boolean): string[] {
  if (shell) return ['sh', '-c', command]
  let words: string[]
  try {
    words = splitCommand(command, 'command')
  } catch (err) {
    throw new UsageError(`cannot split '${command}': ${(err as Error).message.replace(/^command: /, '')}`)
  }
  if (words.length === 0) throw new UsageError(`empty command '${command}'`)
  return words
}

/** Why a run counts as failed, in words; '' when it did not fail. */
function failureOf(r: ChildResult, timeoutMs: number): string {
  if (r.timedOut) return `timed out after ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${timeoutMs / 1000} s`}`
  if (r.signal !== null) return `was killed by ${r.signal}${r.diagnostic ? `: ${r.diagnostic}` : ''}`
  if (r.exitCode !== 0) return `exited with code ${r.exitCode}`
  return ''
}

class BenchFailure extends Error {}

export async function benchCommand(argv: string[]): Promise<number> {
  const o = parseBenchArgs(argv)
  const commands = o.reference === null ? o.commands : [o.reference, ...o.commands]
  const specs: Array<ChildSpec & { file: string; args: string[] }> = commands.map(command => {
    const [file, ...args] = commandArgv(command, o.shell)
    const output = o.showOutput ? 'inherit' as const : 'ignore' as const
    return {
      file, args, stdin: 'ignore', stdout: output, stderr: output, ...childSpecOf(o),
    }
  })
  const collected: CommandRuns[] = commands.map((command, i) => ({ command, argv: [specs[i].file, ...specs[i].args], runs: [] }))
  const progress = new ProgressBar(process.stderr)
  const loadAtStart = loadReading()

  // One run of command i; throws BenchFailure when it must stop the benchmark.
  const runOnce = async (i: number, label: string): Promise<ChildResult> => {
    const r = await spawnChild(specs[i])
    if (r.spawnError) {
      const message = spawnFailureMessage(specs[i].file, r.spawnError)
      throw new BenchFailure(commands[i] === specs[i].file ? message : `'${commands[i]}': ${message}`)
    }
    const failure = failureOf(r, o.timeoutMs)
    if (failure && !o.ignoreFailure) {
      const hint = r.timedOut ? '' : o.showOutput ? '; use --ignore-failure to benchmark it anyway' : '; see its output with --show-output, or use --ignore-failure'
      throw new BenchFailure(`'${commands[i]}' ${failure} (${label})${hint}`)
    }
    return r
  }

  let failure: BenchFailure | null = null
  try {
    // Warmup and measured runs, round by round: A B A B, never A A B B.
    for (const [phase, rounds] of [['warmup', o.warmup], ['measuring', o.runs]] as const) {
      progress.begin()
      for (let round = 1; round <= rounds; round++) {
        for (let i = 0; i < commands.length; i++) {
          progress.update({ phase, done: (round - 1) * commands.length + i, total: rounds * commands.length, command: commands[i] })
          const label = `${phase === 'warmup' ? 'warmup run' : 'run'} ${round} of ${rounds}`
          const r = await runOnce(i, label)
          if (phase === 'measuring') collected[i].runs.push(runRecord(r, round))
        }
      }
    }
  } catch (err) {
    if (!(err instanceof BenchFailure)) throw err
    failure = err
  } finally {
    progress.clear()
  }
  if (failure) {
    process.stderr.write(`tileharness bench: ${failure.message}\n`)
    return BENCH_FAILED
  }

  const options: BenchOptionsRecord = {
    runs: o.runs, warmup: o.warmup, timeoutMs: o.timeoutMs, shell: o.shell, measure: o.measure,
    ignoreFailure: o.ignoreFailure, launcher: o.launcher, rlimits: o.rlimits,
  }
  const report = buildReport(collected, options, { load: { start: loadAtStart, end: loadReading() } })
  if (o.compare) report.comparison = compareWithBaseline(o.compare.baseline, o.compare.file, report, o.threshold ?? DEFAULT_THRESHOLD)
  // A report on standard output has it to itself: the summary then goes to standard error.
  const reportOnStdout = Object.values(o.outputs).some(file => isStandardOutput(resolveOutput(file)))
  ;(reportOnStdout ? process.stderr : process.stdout).write(formatText(report))
  for (const [name, file] of Object.entries(o.outputs)) {
    try {
      await writeOutput(file, FORMATS[name as keyof typeof FORMATS](report))
    } catch (error) {
      const why = error instanceof OutputRefused ? error.message : errnoText(error)
      process.stderr.write(`tileharness bench: --${name}: cannot write '${file}': ${why}\n`)
      return HARNESS_FAILURE
    }
  }
  return report.comparison?.regressed ? BENCH_FAILED : 0
}

function runRecord(r: ChildResult, round: number): BenchRun {
  return { round, figures: figuresOf(r), exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, diagnostic: r.diagnostic }
}

/** What each report option writes. */
const FORMATS: Record<keyof BenchOptions['outputs'], (report: BenchReport) => string> = {
  json: formatJson,
  markdown: formatMarkdown,
  csv: formatCsv,
  svg: benchSvg,
}
