// `tileharness bench`: hyperfine's habits (warmup, repeated runs, min/median/mean/max/stddev,
// outliers, relative speed) with the resource figures hyperfine lacks, each run measured by the
// harness. Runs are interleaved, A B A B, and commands compared by the median of pairwise ratios.
import fs from 'node:fs'
import { splitCommand } from '../split-command.js'
import { BaselineRefused, DEFAULT_THRESHOLD, compareWithBaseline, parseBaseline, parseThreshold, type BaselineCommand } from '../bench/compare.js'
import { benchSvg } from '../bench/svg.js'
import { TIME_UNIT_NAMES, figuresOf, type TimeUnitName } from '../bench/figures.js'
import { loadReading } from '../bench/machine.js'
import { ProgressBar } from '../bench/progress.js'
import {
  SORT_ORDERS, buildReport, formatCsv, formatJson, formatMarkdown, formatText,
  type BenchOptionsRecord, type BenchReport, type BenchRun, type CommandRuns, type SortOrder,
} from '../bench/report.js'
import { DEFAULT_MIN_RUNS, MIN_BENCHMARK_MS, roundsFor, type AutomaticRuns } from '../bench/run-count.js'
import { formatRunsCsv } from '../bench/runs-csv.js'
import { signalNumber, spawnChild, type ChildResult, type ChildSpec } from '../spawn/index.js'
import { spawnFailureMessage } from '../spawn-failure.js'
import { CHILD_OPTIONS, checkChildSpec, childSpecOf, defaultChildOptions, takeChildOption, type ChildOptions } from './child-options.js'
import { combinations, parametersOf, substitute, type ParameterOption, type ParameterValues } from './bench-parameters.js'
import { UsageError, oneOf, parseCommandLine, type OptionTable } from './options.js'
import { readAtMost } from './input.js'
import { OutputRefused, errnoText, fileIdentity, isStandardOutput, outputIdentity, pollPhase, resolveOutput, writeOutput } from './output.js'
import { HARNESS_FAILURE } from './status.js'

export const BENCH_USAGE = `usage: tileharness bench [-n 10 | --min-runs 10 --max-runs N] [--warmup 1] [--timeout 30s]
                         [--rlimit as=2G]... [-P NAME LO HI [-D STEP] | -L NAME A,B,C]...
                         [-c NAME]... [--setup CMD] [--prepare CMD]... [--conclude CMD]...
                         [--cleanup CMD] [--input F] [--output WHERE] [--time-unit U] [--sort S]
                         [--json F] [--markdown F] [--csv F] [--runs-csv F] [--svg F]
                         [--reference 'CMD'] [--shell] [--ignore-failure] [--no-measure]
                         [--launcher L] [--cpu LIST] [--compare BASELINE.json [--threshold 5%]]
                         [--] 'CMD A' ['CMD B' ...]

  -n, --runs N        exactly N measured runs per command (default: chosen as hyperfine does:
                      at least --min-runs, and enough for the slowest command to run 3 s in all,
                      at most --max-runs; counted from the first round)
  --min-runs N        at least N runs (default 10)
  --max-runs N        at most N runs (default: no limit)
  --warmup N          unmeasured runs per command first (default 1)
  --timeout D         kill a run after D (500ms, 5s, 2m); the run is reported as timed out
  --rlimit N=V        a resource limit for every run (as 'tileharness run --rlimit')
  -P, --parameter-scan NAME LO HI
                      one benchmark per number from LO to HI, in steps of 1 (of -D STEP),
                      {NAME} in the commands replaced by it
  -D, --parameter-step-size STEP
                      the step of -P (LO, HI and STEP may then have decimals: -D 0.25)
  -L, --parameter-list NAME A,B,C
                      one benchmark per value; several -P/-L: every combination
  -c, --command-name NAME
                      the name reports give a command, once per command in order (the
                      --reference first; {NAME}s replaced); the command itself when not given
  --setup CMD         run once before the first run of each command
  --prepare CMD       run before every run of each command (warmups too), not timed
  --conclude CMD      run after every run of each command, not timed
  --cleanup CMD       run once after the last run of each command
                      (each of the four: once for every command, or once per command in order,
                      the --reference first; {NAME}s replaced; run as the commands are, --shell
                      or not, their stdin and output /dev/null, or this terminal with --output
                      inherit; a failure stops the benchmark, whatever --ignore-failure says)
  --input F           the commands' stdin, read from F (default: null, /dev/null)
  --output WHERE      the commands' stdout and stderr: null (default, /dev/null), pipe (read
                      and discarded), inherit (this terminal), or a file F (stdout, each run
                      writing it anew; stderr to /dev/null)
  --show-output       --output inherit
  --time-unit U       the unit of times on the terminal and in --markdown: microsecond,
                      millisecond or second (default: chosen per figure)
  --sort S            auto (default: the Summary by mean wall time, the tables as given),
                      command (as given) or mean-time (fastest first)
  --reference CMD     compare every command with CMD (default: the first command)
  --shell             run each command with 'sh -c CMD' (default: split into words, no shell)
  --ignore-failure    keep going when a run exits non-zero, is killed or times out
  --no-measure        take rusage as the parent sees it instead of through the measuring
                      helper (then max RSS is at least this process's own)
  --launcher L        auto (default), posix_spawn or fork
  --cpu LIST          pin every run (and hook) to these CPUs (1, 0,2 or 0-3, taskset -c's list),
                      so the scheduler cannot move it around: less noise
  --json F            every run's raw figures and the summary
  --markdown F        the summary as a Markdown table
  --csv F             the summary, one row per command and figure
  --runs-csv F        every measured run, one row each: its command, parameters, round,
                      figures (ms, KiB, counts) and how it ended
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
the quartiles (Tukey's fences), the IQR taken as at least 4 quanta of the figure and 5% of its
median. A warning when the load average says other work competed for the CPUs. A progress bar
is drawn on stderr when it is a terminal.

exit status: 0; 1 a run failed (non-zero exit, signal, timeout), a command could not be started,
or --setup, --prepare, --conclude or --cleanup failed, or --compare found a regression; 125 bad
options, a report file that cannot be written, or a --compare baseline that cannot be read;
INT, TERM, HUP or QUIT ends the running command (and reaps it), writes no report, and ends
tileharness by that signal`

export const BENCH_FAILED = 1

/** The commands run around the benchmarked ones, hyperfine's words, in the order they run. */
const HOOKS = ['setup', 'prepare', 'conclude', 'cleanup'] as const
type Hook = (typeof HOOKS)[number]

/** --output's words; anything else is a file. */
const OUTPUT_WORDS = ['null', 'pipe', 'inherit'] as const

interface BenchOptions extends ChildOptions {
  /** -n; null: chosen automatically (roundsFor) between minRuns and maxRuns. */
  runs: number | null
  minRuns: number | null
  maxRuns: number | null
  warmup: number
  shell: boolean
  ignoreFailure: boolean
  /** One of OUTPUT_WORDS, or a file. */
  output: string
  /** null: /dev/null. */
  input: string | null
  reference: string | null
  commands: string[]
  /** -c, in order. */
  names: string[]
  parameters: ParameterOption[]
  step: { option: string; text: string } | null
  hooks: Record<Hook, string[]>
  timeUnit: TimeUnitName | null
  sort: SortOrder
  outputs: { json?: string; markdown?: string; csv?: string; 'runs-csv'?: string; svg?: string }
  /** How each option given was last written (`-c`, `--command-name`), for messages. */
  spelled: Record<string, string>
  compare: { file: string; baseline: BaselineCommand[] } | null
  threshold: number | null
}

const BENCH_OPTIONS: OptionTable = {
  ...CHILD_OPTIONS,
  runs: { kind: 'value', short: 'n' },
  'min-runs': { kind: 'value' },
  'max-runs': { kind: 'value' },
  warmup: { kind: 'value' },
  'parameter-scan': { kind: 'value', short: 'P', words: 3 },
  'parameter-step-size': { kind: 'value', short: 'D' },
  'parameter-list': { kind: 'value', short: 'L', words: 2 },
  'command-name': { kind: 'value', short: 'c' },
  setup: { kind: 'value' },
  prepare: { kind: 'value' },
  conclude: { kind: 'value' },
  cleanup: { kind: 'value' },
  input: { kind: 'value' },
  output: { kind: 'value' },
  'time-unit': { kind: 'value' },
  sort: { kind: 'value' },
  json: { kind: 'value' },
  markdown: { kind: 'value' },
  csv: { kind: 'value' },
  'runs-csv': { kind: 'value' },
  svg: { kind: 'value' },
  reference: { kind: 'value' },
  shell: { kind: 'flag' },
  'ignore-failure': { kind: 'flag', short: 'i' },
  'show-output': { kind: 'flag' },
  compare: { kind: 'value' },
  threshold: { kind: 'value' },
}

function count(text: string, option: string, min: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min) {
    throw new UsageError(`invalid ${option} '${text}' (a whole number${min > 0 ? ` >= ${min}` : ''})`)
  }
  if (!Number.isSafeInteger(Number(text))) throw new UsageError(`invalid ${option} '${text}' (too large: at most ${Number.MAX_SAFE_INTEGER})`)
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

/**
 * The most a --compare baseline is read of: a report holds every run's figures, some hundred bytes
 * a run, so this is millions of runs. A larger file (or /dev/zero) is no report, and was read whole
 * (a 3 GB file: 26 s and 4 GB of memory, then V8's "Cannot create a string longer than ...").
 */
const MAX_BASELINE_BYTES = 64 * 1024 * 1024

/** A --compare baseline, read and checked before any run is spent. */
function baselineOf(file: string): BenchOptions['compare'] {
  let bytes: Buffer | null
  try {
    bytes = readAtMost(file, MAX_BASELINE_BYTES)
  } catch (error) {
    throw new UsageError(`--compare: cannot read '${file}': ${errnoText(error)}`)
  }
  if (bytes === null) throw new UsageError(`--compare: '${file}' is over ${MAX_BASELINE_BYTES / 1024 / 1024} MiB, too large to be a bench report`)
  const text = bytes.toString('utf8')
  try {
    return { file, baseline: parseBaseline(text) }
  } catch (error) {
    if (!(error instanceof BaselineRefused)) throw error
    throw new UsageError(`--compare: '${file}' ${error.message}`)
  }
}

/** Whether `file` is a FIFO (through symlinks); false for what is not there. */
function isFifo(file: string): boolean {
  try {
    return fs.statSync(file).isFIFO()
  } catch {
    return false
  }
}

/** --input's file, opened once to see that the runs can read it (a FIFO only looked at); null for /dev/null. */
function readableInput(file: string, option: string): string | null {
  if (file === 'null') return null
  if (file === '') throw new UsageError(`option ${option} needs a file name`)
  let why: string | null = null
  try {
    if (isFifo(file)) {
      // Not opened: an open would pair with a writer waiting there, whose data the check's close
      // then threw away (and the first run would wait for another). Its permission is checked.
      fs.accessSync(file, fs.constants.R_OK)
    } else {
      const fd = fs.openSync(file, 'r')
      if (fs.fstatSync(fd).isDirectory()) why = 'it is a directory'
      fs.closeSync(fd)
    }
  } catch (error) {
    why = errnoText(error)
  }
  if (why !== null) throw new UsageError(`${option}: cannot read '${file}': ${why}`)
  return file
}

/**
 * --output's word, or a file opened once to see that the runs can write it. A file made for the
 * check is removed again (the first run makes it): a command refused later leaves nothing behind.
 */
function commandOutput(where: string, option: string): string {
  if ((OUTPUT_WORDS as readonly string[]).includes(where)) return where
  if (where === '') throw new UsageError(`option ${option} needs null, pipe, inherit or a file name`)
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOCTTY } = fs.constants
  try {
    if (isFifo(where)) {
      // Not opened: the check's open and close would be a waiting reader's whole input (it reads
      // EOF and leaves), so that the first run then waited for a reader. Its permission is checked.
      fs.accessSync(where, fs.constants.W_OK)
      return where
    }
    let made: string | null = where // the file the check makes, removed again
    let fd: number
    try {
      fd = fs.openSync(where, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      // There already, or a symlink, which O_EXCL does not follow: opened through it, as the runs
      // will open it. A link to nothing has its target made, and that is what is removed.
      const existed = fs.existsSync(where)
      fd = fs.openSync(where, O_WRONLY | O_CREAT | O_NOCTTY)
      made = existed ? null : fs.realpathSync.native(where)
    }
    fs.closeSync(fd)
    if (made !== null) fs.rmSync(made, { force: true })
  } catch (error) {
    throw new UsageError(`${option}: cannot write '${where}': ${errnoText(error)}`)
  }
  return where
}

export function parseBenchArgs(argv: string[]): BenchOptions {
  const o: BenchOptions = {
    ...defaultChildOptions(), runs: null, minRuns: null, maxRuns: null, warmup: 1, shell: false, ignoreFailure: false,
    output: 'null', input: null, reference: null, commands: [], names: [], parameters: [], step: null,
    hooks: { setup: [], prepare: [], conclude: [], cleanup: [] }, timeUnit: null, sort: 'auto', outputs: {}, spelled: {},
    compare: null, threshold: null,
  }
  const given = o.spelled
  o.commands = parseCommandLine(argv, BENCH_OPTIONS, {
    option(name, value, option, words) {
      given[name] = option
      if (takeChildOption(o, name, value, option)) return
      switch (name) {
        case 'runs': o.runs = count(value!, option, 1); break
        case 'min-runs': o.minRuns = count(value!, option, 1); break
        case 'max-runs': o.maxRuns = count(value!, option, 1); break
        case 'warmup': o.warmup = count(value!, option, 0); break
        case 'parameter-scan': o.parameters.push({ kind: 'scan', option, name: words[0], lo: words[1], hi: words[2] }); break
        case 'parameter-step-size': o.step = { option, text: value! }; break
        case 'parameter-list': o.parameters.push({ kind: 'list', option, name: words[0], list: words[1] }); break
        case 'command-name': o.names.push(value!); break
        case 'setup': case 'prepare': case 'conclude': case 'cleanup': o.hooks[name].push(value!); break
        case 'input': o.input = readableInput(value!, option); break
        case 'output': o.output = commandOutput(value!, option); break
        case 'show-output': o.output = 'inherit'; break
        case 'time-unit': o.timeUnit = oneOf(value!, Object.keys(TIME_UNIT_NAMES) as TimeUnitName[], option); break
        case 'sort': o.sort = oneOf(value!, SORT_ORDERS, option); break
        case 'json': case 'markdown': case 'csv': case 'runs-csv': case 'svg': o.outputs[name] = writablePath(value!, option); break
        case 'reference': o.reference = value!; break
        case 'shell': o.shell = true; break
        case 'ignore-failure': o.ignoreFailure = true; break
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
  if (o.runs !== null && (o.minRuns !== null || o.maxRuns !== null)) {
    throw new UsageError(`${given.runs} and ${given['min-runs'] ?? given['max-runs']}: give an exact count or bounds, not both`)
  }
  if (o.minRuns !== null && o.maxRuns !== null && o.minRuns > o.maxRuns) {
    throw new UsageError(`${given['min-runs']} ${o.minRuns} is above ${given['max-runs']} ${o.maxRuns}`)
  }
  const toStdout = Object.entries(o.outputs).filter(([, file]) => isStandardOutput(resolveOutput(file)))
  if (toStdout.length > 1) throw new UsageError(`${toStdout.map(([name]) => `--${name}`).join(' and ')} would all write to standard output`)
  // One file under two options: a report renamed over the file the runs read or write, or over
  // another report, or over the --compare baseline. (The baseline is read whole before anything
  // runs, so --json alone may replace it: comparing with the last report and keeping the new one.)
  // A report's `-` is standard output, which may itself be a file (`>> file`, `1<> file`).
  const files: Array<[string, string, string | null]> = []
  if (o.input !== null) files.push(['--input', o.input, fileIdentity(o.input)])
  if (!(OUTPUT_WORDS as readonly string[]).includes(o.output)) files.push(['--output', o.output, fileIdentity(o.output)])
  for (const [name, file] of Object.entries(o.outputs)) files.push([`--${name}`, file, outputIdentity(file)])
  const seen = new Map<string, [string, string]>()
  for (const [option, file, identity] of files) {
    if (identity === null) continue
    const earlier = seen.get(identity)
    if (earlier !== undefined) throw new UsageError(`${earlier[0]} '${earlier[1]}' and ${option} '${file}' are the same file`)
    seen.set(identity, [option, file])
  }
  const baseline = o.compare === null ? null : fileIdentity(o.compare.file)
  for (const [option, file, identity] of files) {
    if (baseline !== null && identity === baseline && option !== '--input' && option !== '--json') {
      throw new UsageError(`--compare '${o.compare!.file}' and ${option} '${file}' are the same file (only --json may replace the baseline)`)
    }
  }
  return o
}

/** One command to benchmark, its parameters substituted: what runs, and what runs around it. */
interface Benchmark {
  /** What reports call it: its -c name, else its command. */
  name: string
  command: string
  parameters: ParameterValues
  spec: ChildSpec & { file: string; args: string[] }
  hooks: Partial<Record<Hook, { command: string; spec: ChildSpec & { file: string } }>>
}

/**
 * The benchmarks, in the order they run in each round: the --reference (if any), then each command
 * with every combination of the parameters. -c names and the hooks count per command as given
 * (the reference first); a hook given once is every command's. Every command is split here, so
 * a command that cannot be is a usage error before any run.
 */
function benchmarksOf(o: BenchOptions): Benchmark[] {
  const templates = o.reference === null ? o.commands : [o.reference, ...o.commands]
  const commands = `${templates.length} command${templates.length > 1 ? 's' : ''}`
  if (o.names.length > templates.length) throw new UsageError(`${o.spelled['command-name']} given ${o.names.length} times for ${commands}`)
  for (const hook of HOOKS) {
    const n = o.hooks[hook].length
    if (n > 1 && n !== templates.length) throw new UsageError(`--${hook} given ${n} times for ${commands} (give it once, or once per command)`)
  }
  const stdio = o.output === 'inherit' ? 'inherit' as const : 'ignore' as const
  // Each run (and hook) leads a process group of its own, so that a --timeout, or a signal that
  // ends the benchmark, ends everything it started (a shell's children too), as coreutils' timeout
  // does; else a timed-out `sh -c 'sleep 31; true'` left its sleep to pid 1, to compete with the
  // runs after it. But not on a terminal, in its foreground, where a group of its own would be a
  // background one: stopped by the terminal at its first write with tostop set, or any use of
  // /dev/tty, and out of reach of ^C and ^Z. There runs stay in bench's group, as with timeout's
  // --foreground, and a --timeout ends the run's own process only.
  const ownGroups = !inTerminalForeground()
  const hookSpec = (hook: Hook, command: string) => {
    let file: string, args: string[]
    try {
      [file, ...args] = commandArgv(command, o.shell)
    } catch (error) {
      throw error instanceof UsageError ? new UsageError(`--${hook}: ${error.message}`) : error
    }
    return { file, args, stdin: 'ignore' as const, stdout: stdio, stderr: stdio, processGroup: ownGroups, ...childSpecOf(o) }
  }
  const output: Pick<ChildSpec, 'stdout' | 'stderr' | 'maxBuffer'> =
    o.output === 'null' ? { stdout: 'ignore', stderr: 'ignore' }
      : o.output === 'pipe' ? { stdout: 'pipe', stderr: 'pipe', maxBuffer: 0 }
        : o.output === 'inherit' ? { stdout: 'inherit', stderr: 'inherit' }
          : { stdout: { path: o.output }, stderr: 'ignore' }
  const parameters = parametersOf(o.parameters, o.step)
  return templates.flatMap((template, i) => {
    // The reference is compared with every combination: it takes no parameters.
    const combos = o.reference !== null && i === 0 ? [{}] : combinations(parameters)
    return combos.map(values => {
      const command = substitute(template, values)
      const [file, ...args] = commandArgv(command, o.shell)
      const hooks: Benchmark['hooks'] = {}
      for (const hook of HOOKS) {
        const given = o.hooks[hook]
        if (given.length === 0) continue
        const hookCommand = substitute(given.length === 1 ? given[0] : given[i], values)
        hooks[hook] = { command: hookCommand, spec: hookSpec(hook, hookCommand) }
      }
      const spec: Benchmark['spec'] = { file, args, stdin: o.input === null ? 'ignore' : { path: o.input }, ...output, processGroup: ownGroups, ...childSpecOf(o) }
      checkChildSpec(spec)
      return { name: i < o.names.length ? substitute(o.names[i], values) : command, command, parameters: values, spec, hooks }
    })
  })
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

/** The signals that end a benchmark: a terminal's ^C and ^\\, a hang-up, a supervisor's TERM. */
const ENDING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']
/** Thrown when one of them came: nothing more runs. */
class Interrupted extends Error {}

export async function benchCommand(argv: string[]): Promise<number> {
  const o = parseBenchArgs(argv)
  const benchmarks = benchmarksOf(o)
  const collected: CommandRuns[] = benchmarks.map(b => ({ command: b.name, argv: [b.spec.file, ...b.spec.args], parameters: b.parameters, runs: [] }))
  const progress = new ProgressBar(process.stderr)
  const loadAtStart = loadReading()
  const automatic: AutomaticRuns | null = o.runs !== null ? null
    : { minRuns: o.minRuns ?? DEFAULT_MIN_RUNS, maxRuns: o.maxRuns, minTimeMs: MIN_BENCHMARK_MS }
  const hint = o.output === 'inherit' ? '' : '; see its output with --show-output'

  // INT, TERM, HUP or QUIT: the running child is ended by its abort and reaped here (never left to
  // pid 1 as a zombie), nothing more runs, no report is written, and the command then ends by
  // that same signal, as it would have without this handler.
  const interrupt = new AbortController()
  let endedBy: NodeJS.Signals | null = null
  const onSignal = (sig: NodeJS.Signals): void => {
    endedBy ??= sig
    interrupt.abort()
  }
  // The handlers on (or off: the signals' default actions again), once each.
  const listening = (on: boolean): void => {
    for (const sig of ENDING_SIGNALS) {
      process.off(sig, onSignal)
      if (on) process.on(sig, onSignal)
    }
  }
  listening(true)
  const spawn = async (spec: ChildSpec): Promise<ChildResult> => {
    if (endedBy !== null) throw new Interrupted()
    const r = await spawnChild({ ...spec, signal: interrupt.signal })
    if (endedBy !== null) throw new Interrupted()
    return r
  }

  // One run of b, its --prepare before and --conclude after; throws BenchFailure when it must stop
  // the benchmark.
  const runOnce = async (b: Benchmark, label: string): Promise<ChildResult> => {
    await runHook(b, 'prepare', label)
    const r = await spawn(b.spec)
    if (r.spawnError) {
      const message = spawnFailureMessage(b.spec.file, r.spawnError, b.spec)
      throw new BenchFailure(b.command === b.spec.file ? message : `'${b.command}': ${message}`)
    }
    const failure = failureOf(r, o.timeoutMs)
    if (failure && !o.ignoreFailure) {
      const why = r.timedOut ? '' : hint ? `${hint}, or use --ignore-failure` : '; use --ignore-failure to benchmark it anyway'
      throw new BenchFailure(`'${b.command}' ${failure} (${label})${why}`)
    }
    await runHook(b, 'conclude', label)
    return r
  }
  // A hook of benchmark b; its failure (whatever --ignore-failure says) stops the benchmark.
  const runHook = async (b: Benchmark, hook: Hook, when: string): Promise<void> => {
    const h = b.hooks[hook]
    if (h === undefined) return
    const r = await spawn(h.spec)
    const failure = r.spawnError ? spawnFailureMessage(h.spec.file, r.spawnError, h.spec) : failureOf(r, o.timeoutMs)
    if (failure) {
      const where = `for '${b.name}'${when ? `, ${when}` : ''}`
      throw new BenchFailure(r.spawnError ? `--${hook} '${h.command}' (${where}): ${failure}` : `--${hook} '${h.command}' ${failure} (${where})${r.timedOut ? '' : hint}`)
    }
  }

  let rounds = o.runs ?? automatic!.minRuns
  let failure: BenchFailure | null = null
  try {
    for (const b of benchmarks) await runHook(b, 'setup', '')
    // Warmup and measured runs, round by round: A B A B, never A A B B.
    for (const phase of ['warmup', 'measuring'] as const) {
      progress.begin()
      const total = () => (phase === 'warmup' ? o.warmup : rounds)
      for (let round = 1; round <= total(); round++) {
        for (const [i, b] of benchmarks.entries()) {
          progress.update({ phase, done: (round - 1) * benchmarks.length + i, total: total() * benchmarks.length, command: b.name })
          // Until the first round has decided it, the count of automatic runs is not known.
          const of = phase === 'measuring' && automatic !== null && round === 1 ? '' : ` of ${total()}`
          const r = await runOnce(b, `${phase === 'warmup' ? 'warmup run' : 'run'} ${round}${of}`)
          if (phase === 'measuring') collected[i].runs.push(runRecord(r, round))
        }
        if (phase === 'measuring' && round === 1 && automatic !== null) rounds = roundsFor(collected.map(c => c.runs[0].figures.wallMs), automatic)
      }
    }
    for (const b of benchmarks) await runHook(b, 'cleanup', '')
  } catch (err) {
    if (err instanceof BenchFailure) {
      failure = err
    } else if (!(err instanceof Interrupted)) {
      listening(false)
      throw err
    }
  } finally {
    progress.clear()
  }
  // From here the signals take their default action again (a report written in place to a FIFO or
  // a stalled pipe can block, and must stay a signal away from ending), but for the reports that
  // replace a file (reportOn). A signal libuv has caught is seen first, not lost with the handlers.
  await pollPhase()
  listening(false)
  const status = endedBy !== null ? 0 : await reportOn(failure)
  if (endedBy === null) return status
  // The default action (the handler is gone): the command ends by the signal.
  process.kill(process.pid, endedBy)
  return 128 + (signalNumber(endedBy) ?? 0)

  async function reportOn(failure: BenchFailure | null): Promise<number> {
    if (failure) {
      process.stderr.write(`tileharness bench: ${failure.message}\n`)
      return BENCH_FAILED
    }

    const options: BenchOptionsRecord = {
      runs: rounds, warmup: o.warmup, timeoutMs: o.timeoutMs, shell: o.shell, measure: o.measure,
      ignoreFailure: o.ignoreFailure, launcher: o.launcher, rlimits: o.rlimits,
      automaticRuns: automatic, input: o.input, output: o.output, timeUnit: o.timeUnit, sort: o.sort, cpus: o.cpus,
    }
    const report = buildReport(collected, options, { load: { start: loadAtStart, end: loadReading() } })
    if (o.compare) report.comparison = compareWithBaseline(o.compare.baseline, o.compare.file, report, o.threshold ?? DEFAULT_THRESHOLD)
    // A report on standard output has it to itself: the summary then goes to standard error.
    // (A report file that cannot be written now, changed since the check, is said below, by name.)
    const kinds = Object.entries(o.outputs).map(([name, file]) => {
      try {
        const target = resolveOutput(file)
        return { name, file, kind: target.kind, stdout: isStandardOutput(target) }
      } catch (error) {
        if (error instanceof OutputRefused) return { name, file, kind: null, stdout: false }
        throw error
      }
    })
    ;(kinds.some(k => k.stdout) ? process.stderr : process.stdout).write(formatText(report))
    // The files a report replaces first: each a temp file renamed into place by synchronous calls,
    // which a signal's default action in the middle left behind. The handlers listen during each
    // (a signal then lets it finish), and the loop turns after it so that one that came is seen:
    // then no more
    // reports (pollPhase). The rest are written in place, the signals' default actions restored.
    const ordered = [...kinds.filter(k => k.kind === 'replace'), ...kinds.filter(k => k.kind !== 'replace')]
    for (const { name, file, kind } of ordered) {
      if (kind === 'replace') listening(true)
      try {
        await writeOutput(file, FORMATS[name as keyof typeof FORMATS](report))
      } catch (error) {
        listening(false)
        const why = error instanceof OutputRefused ? error.message : errnoText(error)
        process.stderr.write(`tileharness bench: --${name}: cannot write '${file}': ${why}\n`)
        return HARNESS_FAILURE
      }
      if (kind === 'replace') {
        await pollPhase()
        listening(false)
      }
      if (endedBy !== null) return 0  // ends by it: no more reports
    }
    return report.comparison?.regressed ? BENCH_FAILED : 0
  }
}

/** Whether this process is in the foreground process group of a controlling terminal (its stat's
 * pgrp is the terminal's tpgid). */
function inTerminalForeground(): boolean {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const pgrp = Number(fields[2]), tpgid = Number(fields[5])
    return tpgid > 0 && tpgid === pgrp
  } catch {
    return false
  }
}

function runRecord(r: ChildResult, round: number): BenchRun {
  return { round, figures: figuresOf(r), exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, diagnostic: r.diagnostic }
}

/** What each report option writes. */
const FORMATS: Record<keyof BenchOptions['outputs'], (report: BenchReport) => string> = {
  json: formatJson,
  markdown: formatMarkdown,
  csv: formatCsv,
  'runs-csv': formatRunsCsv,
  svg: benchSvg,
}
