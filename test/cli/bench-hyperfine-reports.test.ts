// `tileharness bench`'s hyperfine options end to end, through the built binary: the run count,
// the time unit and order of the summary, the per-run CSV, and the options' usage errors. Exact
// counts come from -n or from --min-runs equal to --max-runs; the automatic count is checked
// against the first run's own wall time, so nothing here depends on how fast the machine is.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { CLI_MAIN as MAIN, tempDir } from '../helpers.js'
import { nodeChildEnv, stageForNobody } from '../reliability/helpers.js'

const cli = (args: string[], extra: Partial<ChildSpec> = {}) =>
  spawnChildSync({ file: process.execPath, args: [MAIN, 'bench', ...args], timeout: 120000, ...extra })
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'))

t.test('runs: -n exact; automatic between --min-runs and --max-runs, the same for every command', async t => {
  const dir = tempDir(t)
  const json = path.join(dir, 'r.json')
  const roundsOf = (report: { commands: Array<{ runs: Array<{ round: number }> }> }) => report.commands.map(c => c.runs.map(run => run.round))

  let r = cli(['--min-runs', '3', '--max-runs', '3', '--warmup', '0', '--json', json, 'true', 'sh -c true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  let report = readJson(json)
  t.same(roundsOf(report), [[1, 2, 3], [1, 2, 3]], '--min-runs = --max-runs: exactly that many')
  t.match(report.options, { runs: 3, automaticRuns: { minRuns: 3, maxRuns: 3, minTimeMs: 3000 } })

  r = cli(['-n', '4', '--warmup', '0', '--json', json, 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  report = readJson(json)
  t.same(roundsOf(report), [[1, 2, 3, 4]], '-n 4')
  t.match(report.options, { runs: 4, automaticRuns: null })

  // Automatic: the count follows from the first round's wall times, whatever they were.
  r = cli(['--min-runs', '2', '--max-runs', '40', '--warmup', '0', '--json', json, 'sleep 0.2', 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  report = readJson(json)
  const slowest = Math.max(...report.commands.map((c: { runs: Array<{ figures: { wallMs: number } }> }) => c.runs[0].figures.wallMs))
  const expected = Math.min(40, Math.max(2, Math.ceil(3000 / slowest)))
  t.ok(report.options.runs >= 2 && report.options.runs <= 40, `${report.options.runs} runs, between the bounds`)
  t.equal(report.options.runs, expected, 'enough for the slowest command (by its first run) to run 3 s')
  t.same(roundsOf(report), [1, 2].map(() => Array.from({ length: expected }, (_, i) => i + 1)), 'every command the same rounds')

  // The default: at least 10 runs; `sleep 0.4` reaches 3 s in fewer, so exactly 10.
  r = cli(['--warmup', '0', '--json', json, 'sleep 0.4'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  report = readJson(json)
  t.match(report.options, { runs: 10, automaticRuns: { minRuns: 10, maxRuns: null, minTimeMs: 3000 } })
  t.equal(report.commands[0].runs.length, 10)
})

t.test('--time-unit and --sort shape the printed summary and the Markdown', async t => {
  const dir = tempDir(t)
  const md = path.join(dir, 's.md')
  let r = cli(['-n', '2', '--warmup', '0', '--time-unit', 'second', '--markdown', md, 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stdout.toString(), /^ {2}wall +\d+\.\d\d s +\d+\.\d\d s /m, 'the terminal in seconds')
  t.match(fs.readFileSync(md, 'utf8'), /\| Wall median \[s\] \|/, 'the Markdown in seconds')
  r = cli(['-n', '2', '--warmup', '0', '--time-unit', 'microsecond', 'true'])
  t.match(r.stdout.toString(), /^ {2}wall +\d+ µs /m, 'the terminal in microseconds')

  // The order by mean time is read from the report itself, so no test here depends on which
  // command the machine ran faster (`sleep 0.1` given first is all but always the slower).
  const json = path.join(dir, 's.json')
  const order = (sort: string[]) => {
    const r = cli(['-n', '2', '--warmup', '0', ...sort, '--json', json, '--markdown', md, '--reference', 'sh -c true', 'sleep 0.1', 'true'])
    t.equal(r.exitCode, 0, r.stderr.toString())
    const out = r.stdout.toString()
    const commands: Array<{ command: string; summary: { wallMs: { mean: number } } }> = readJson(json).commands
    return {
      summary: out.slice(out.indexOf('Summary:')).split('\n').filter(l => / wall [\d.]+x/.test(l)).map(l => l.trim().replace(/ +wall .*/, '')),
      table: fs.readFileSync(md, 'utf8').trim().split('\n').slice(2).map(row => /^\| `([^`]*)`/.exec(row)![1]),
      byMean: [...commands].sort((a, b) => a.summary.wallMs.mean - b.summary.wallMs.mean).map(c => c.command),
    }
  }
  const given = ['sh -c true', 'sleep 0.1', 'true']
  let o = order(['--sort', 'command'])
  t.same([o.summary, o.table], [given.slice(1), given], 'command: both as given')
  o = order([])
  t.same([o.summary, o.table], [o.byMean.filter(c => c !== 'sh -c true'), given], 'auto (the default): the Summary by mean time, the table as given')
  o = order(['--sort', 'mean-time'])
  t.same([o.summary, o.table], [o.byMean.filter(c => c !== 'sh -c true'), o.byMean], 'mean-time: both by mean time')
})

t.test('--runs-csv follows the output rules: standard output, refused before any run', async t => {
  const dir = tempDir(t)
  let r = cli(['-n', '2', '--warmup', '0', '--runs-csv', '-', 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stderr.toString(), /^Benchmark 1: true$/m, 'the summary moves to stderr')
  t.match(r.stdout.toString(), /^command,round,wallMs,[^\n]*\ntrue,1,[^\n]*\ntrue,2,[^\n]*\n$/, 'stdout is the CSV alone')
  r = cli(['-n', '1', '--runs-csv', dir, 'true'])
  t.equal(r.exitCode, 125)
  t.equal(r.stderr.toString().split('\n')[0], `tileharness bench: --runs-csv: cannot write '${dir}': it is a directory`)
  r = cli(['-n', '1', '--runs-csv', '-', '--json', '-', 'true'])
  t.equal(r.stderr.toString().split('\n')[0], 'tileharness bench: --runs-csv and --json would all write to standard output')
})

t.test('one file under two options (a report over the input, the runs\' output or another report): exit 125, before any run, nothing touched', async t => {
  const dir = tempDir(t)
  const at = (name: string) => path.join(dir, name)
  const ran = at('ran')
  const command = `sh -c 'echo run >> "${ran}"; cat'`
  fs.writeFileSync(at('in.txt'), 'precious input\n')
  fs.symlinkSync('in.txt', at('link.txt'))
  fs.writeFileSync(at('out.txt'), 'earlier output\n')
  const rows: Array<[string[], string]> = [
    [['--input', 'in.txt', '--output', 'in.txt'], "--input 'in.txt' and --output 'in.txt' are the same file"],
    [['--input', 'in.txt', '--json', './in.txt'], "--input 'in.txt' and --json './in.txt' are the same file"],
    [['--input', at('in.txt'), '--csv', 'link.txt'], `--input '${at('in.txt')}' and --csv 'link.txt' are the same file`],
    [['--output', 'out.txt', '--markdown', 'out.txt'], "--output 'out.txt' and --markdown 'out.txt' are the same file"],
    [['--json', 'new.txt', '--svg', 'new.txt'], "--json 'new.txt' and --svg 'new.txt' are the same file"],
    [['--output', 'new.txt', '--runs-csv', 'new.txt'], "--output 'new.txt' and --runs-csv 'new.txt' are the same file"],
  ]
  for (const [options, message] of rows) {
    const r = cli(['-n', '2', '--warmup', '0', ...options, command], { cwd: dir })
    t.equal(r.exitCode, 125, `${options.join(' ')}: exit 125`)
    t.equal(r.stderr.toString(), `tileharness bench: ${message}\nTry 'tileharness bench --help' for more information.\n`, `${options.join(' ')}: message`)
  }
  t.notOk(fs.existsSync(ran), 'no run was started')
  t.equal(fs.readFileSync(at('in.txt'), 'utf8'), 'precious input\n', 'the input is kept')
  t.equal(fs.readFileSync(at('out.txt'), 'utf8'), 'earlier output\n', 'the earlier output is kept')
  t.same(fs.readdirSync(dir).sort(), ['in.txt', 'link.txt', 'out.txt'], 'nothing made (the --output check leaves no empty file)')

  // What may be shared: a device, written in place; and a --compare baseline, read whole before
  // the runs, which --json then replaces (compare with the last report, keep the new one).
  let r = cli(['-n', '2', '--warmup', '0', '--json', '/dev/null', '--markdown', '/dev/null', '--output', '/dev/null', 'true'], { cwd: dir })
  t.equal(r.exitCode, 0, `/dev/null three times (${r.stderr})`)
  r = cli(['-n', '2', '--warmup', '0', '--json', 'base.json', 'true'], { cwd: dir })
  t.equal(r.exitCode, 0, r.stderr.toString())
  const before = fs.readFileSync(at('base.json'), 'utf8')
  r = cli(['-n', '2', '--warmup', '0', '--compare', 'base.json', '--threshold', '1000%', '--json', 'base.json', 'true'], { cwd: dir })
  t.equal(r.exitCode, 0, `--compare and --json on one file (${r.stderr})`)
  t.not(fs.readFileSync(at('base.json'), 'utf8'), before, 'the baseline replaced by the new report')
})

t.test('a report file this user may not write, in a directory it may: exit 125, before any run, the file kept (as nobody)', async t => {
  const staged = stageForNobody(t)
  if (typeof staged === 'string') return t.skip(staged)
  const dir = tempDir(t)
  fs.chmodSync(dir, 0o777) // a rename here would succeed: only the file's own mode says no
  const ran = path.join(dir, 'ran')
  const main = path.join(staged.root, 'dist/cli/main.js')
  for (const option of ['--json', '--markdown', '--csv', '--runs-csv', '--svg']) {
    const file = path.join(dir, `${option.slice(2)}.report`)
    fs.writeFileSync(file, 'earlier report')
    fs.chmodSync(file, 0o444)
    const r = spawnChildSync({
      file: staged.wrap[0], args: [...staged.wrap.slice(1), process.execPath, main, 'bench', '-n', '2', '--warmup', '0', option, file, `sh -c 'echo run >> ${ran}'`],
      cwd: dir, env: nodeChildEnv(staged), timeout: 120000,
    })
    t.equal(r.exitCode, 125, `${option}: exit 125 (${r.stderr})`)
    t.equal(r.stderr.toString().split('\n')[0], `tileharness bench: ${option}: cannot write '${file}': permission denied (EACCES)`)
    t.equal(fs.readFileSync(file, 'utf8'), 'earlier report', `${option}: kept`)
  }
  t.notOk(fs.existsSync(ran), 'no run was started')
})

t.test('bad hyperfine options: the option named, exit 125, before any run', async t => {
  const dir = tempDir(t)
  const ran = path.join(dir, 'ran')
  const command = `sh -c 'echo run >> "${ran}"'`
  const rows: Array<[string[], string]> = [
    [['-P', 'x', '1', 'a'], "invalid -P HI 'a' (a number)"],
    [['--parameter-scan', 'x', 'one', '3'], "invalid --parameter-scan LO 'one' (a number)"],
    [['-P', 'x', '3', '1'], '-P x: LO 3 is above HI 1'],
    [['-P', 'x', '1', '2', '-D', '0'], "invalid -D '0' (a step > 0)"],
    [['-P', 'x', '1', '2', '--parameter-step-size', '-1'], "invalid --parameter-step-size '-1' (a step > 0)"],
    [['-P', 'x', '1.5', '2'], "invalid -P '1.5' (a whole number, unless a step is given with -D)"],
    [['-D', '1'], 'option -D needs a parameter scan (-P NAME LO HI)'],
    [['-L', 'x', 'a', '-L', 'x', 'b'], "parameter 'x' given twice"],
    [['-P'], 'option -P needs 3 values'],
    [[command, '-P', 'x', '1'], 'option -P needs 3 values'],
    [['-c', 'a', '-c', 'b'], '-c given 2 times for 1 command'],
    [['--prepare', 'true', '--prepare', 'true', '--reference', 'true', '--', 'true', command], '--prepare given 2 times for 3 commands (give it once, or once per command)'],
    [['--setup', 'sh -c "unterminated'], `--setup: cannot split 'sh -c "unterminated': unterminated double quote (opened at offset 6)`],
    [['-n', '3', '--max-runs', '5'], '-n and --max-runs: give an exact count or bounds, not both'],
    [['--min-runs', '5', '--max-runs', '2'], '--min-runs 5 is above --max-runs 2'],
    [['--min-runs', '0'], "invalid --min-runs '0' (a whole number >= 1)"],
    [['--max-runs', 'x'], "invalid --max-runs 'x' (a whole number >= 1)"],
    [['--input', path.join(dir, 'nope')], `--input: cannot read '${path.join(dir, 'nope')}': no such file or directory (ENOENT)`],
    [['--input', dir], `--input: cannot read '${dir}': it is a directory`],
    [['--output', path.join(dir, 'no-dir', 'out')], `--output: cannot write '${path.join(dir, 'no-dir', 'out')}': no such file or directory (ENOENT)`],
    [['--time-unit', 'hour'], "invalid --time-unit 'hour' (microsecond, millisecond or second)"],
    [['--sort', 'name'], "invalid --sort 'name' (auto, command or mean-time)"],
  ]
  for (const [options, message] of rows) {
    const args = options.includes(command) ? options : [...options, command]
    const r = cli(args)
    t.equal(r.exitCode, 125, `${options.join(' ')}: exit 125`)
    t.equal(r.stderr.toString(), `tileharness bench: ${message}\nTry 'tileharness bench --help' for more information.\n`, `${options.join(' ')}: message`)
  }
  t.notOk(fs.existsSync(ran), 'no run was started')
})
