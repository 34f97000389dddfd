// `tileharness bench --compare BASELINE.json` end to end, as a subprocess: a baseline written by
// `bench --json` from real runs, then compared against commands far slower, far faster, or the
// same with a threshold no noise reaches. Differences are 5x or more (`true` against `sleep 0.2`,
// even on a machine so loaded that `true` takes 25 ms), or nothing: never a timing a loaded machine
// could get wrong. How significant a difference of ten runs against ten is depends on how far the
// runs spread, so the p-value is held to the level the verdict uses (5%), not to its usual <0.001.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { CLI_MAIN as MAIN, tempDir } from '../helpers.js'

const cli = (args: string[], extra: Partial<ChildSpec> = {}) =>
  spawnChildSync({ file: process.execPath, args: [MAIN, 'bench', ...args], timeout: 120000, ...extra })

/** A baseline of real runs of `command`, written by `bench --json`, its command renamed to `as`. */
function baseline(dir: string, command: string, as = command): string {
  const file = path.join(dir, `baseline-${as.replace(/\W/g, '_')}.json`)
  const r = cli(['-n', '10', '--warmup', '1', '--json', file, command])
  if (r.exitCode !== 0) throw new Error(`bench ${command}: ${r.stderr}`)
  const report = JSON.parse(fs.readFileSync(file, 'utf8'))
  report.commands[0].command = as
  fs.writeFileSync(file, JSON.stringify(report))
  return file
}

t.test('a command far slower than its baseline: the table, the verdict, exit 1', async t => {
  const dir = tempDir(t)
  // `true` takes a millisecond or two; `sleep 0.2` at least 200.
  const base = baseline(dir, 'true', 'sleep 0.2')
  const json = path.join(dir, 'now.json')
  const r = cli(['-n', '10', '--compare', base, '--json', json, 'sleep 0.2'])
  t.equal(r.exitCode, 1, r.stderr.toString())
  t.equal(r.stderr.toString(), '', 'a regression is a verdict, not an error message')
  const text = r.stdout.toString()
  t.match(text, /^Benchmark 1: sleep 0\.2$/m, 'the benchmark as always')
  t.match(text, new RegExp(`^Compared with the baseline '${base.replace(/[.]/g, '\\.')}' \\(medians; a regression is 5% worse and significant;$`, 'm'))
  t.match(text, /^ {2}command +figure +baseline +now +change +p {2}verdict$/m)
  t.match(text, /^ {2}sleep 0\.2 +wall +[\d.]+ (µs|ms) +[\d.]+ ms +\+\d+% +<?[\d.]+ {2}slower \(regression\)$/m)
  t.match(text, /^ {2}sleep 0\.2 +max RSS +[\d.]+ (KiB|MiB) +[\d.]+ (KiB|MiB) +[+-][\d.]+% +\S+ {2}\S/m, 'max RSS compared too')
  t.match(text, /^ {2}regressed: sleep 0\.2 wall(, sleep 0\.2 max RSS)? \(exit status 1\)$/m)

  // The JSON written in the same run carries the comparison.
  const report = JSON.parse(fs.readFileSync(json, 'utf8'))
  t.match(report.comparison, { baseline: base, threshold: 0.05, alpha: 0.05, regressed: true, notInBaseline: [], onlyInBaseline: [] })
  t.match(report.comparison.commands[0], { command: 'sleep 0.2', baselineCommand: 'sleep 0.2' })
  t.match(report.comparison.commands[0].figures[0], { figure: 'wallMs', verdict: 'slower', regression: true, baseline: { runs: 10 }, now: { runs: 10 } })
  // How much slower depends on how busy the machine is (`true` alone can take 10 ms then); the
  // figure is the medians' ratio, and `sleep 0.2` cannot take less than 200 ms.
  const wall = report.comparison.commands[0].figures[0]
  t.ok(wall.now.median >= 200, `sleep 0.2's median is at least 200 ms (${wall.now.median} ms)`)
  t.ok(Math.abs(wall.change - (wall.now.median / wall.baseline.median - 1)) < 1e-9, `the change is the medians' ratio: ${wall.change * 100}% slower`)
  t.ok(wall.change > 0.05, 'beyond the 5% threshold')
  t.ok(wall.test.pValue < 0.05, `significant at the verdict's level (p = ${wall.test.pValue})`)

  // A threshold beyond even this difference lets it pass.
  const lenient = cli(['-n', '5', '--compare', base, '--threshold', '100000%', 'sleep 0.2'])
  t.equal(lenient.exitCode, 0, lenient.stderr.toString())
  t.match(lenient.stdout.toString(), /^ {2}sleep 0\.2 +wall .* {2}within threshold$/m)
  t.match(lenient.stdout.toString(), /^ {2}no regression$/m)
})

t.test('faster than the baseline, or the same within a threshold: exit 0', async t => {
  const dir = tempDir(t)
  const slowBase = baseline(dir, 'sleep 0.2', 'true')
  let r = cli(['-n', '10', '--compare', slowBase, 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stdout.toString(), /^ {2}true +wall +[\d.]+ ms +[\d.]+ (µs|ms) +-\d+\.?\d*% +<?[\d.]+ {2}faster$/m, 'faster is no regression')
  t.match(r.stdout.toString(), /^ {2}no regression$/m)

  // The same command again. Its wall time is its 200 ms sleep: no load doubles the median.
  const same = baseline(dir, 'sleep 0.2')
  r = cli(['-n', '10', '--compare', same, '--threshold', '100%', 'sleep 0.2', 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  const text = r.stdout.toString()
  t.match(text, /^ {2}sleep 0\.2 +wall .* {2}(within threshold|not significant)$/m)
  t.match(text, /^ {2}sleep 0\.2 +max RSS .* {2}(within threshold|not significant)$/m)
  t.match(text, /^ {2}not in the baseline, not compared: 'true'$/m, 'a new command is named, not compared')
  t.match(text, /^ {2}no regression$/m)
})

t.test('the comparison goes with the summary: to stderr when a report takes stdout', async t => {
  const dir = tempDir(t)
  const base = baseline(dir, 'true', 'sleep 0.2')
  const r = cli(['-n', '10', '--compare', base, '--json', '-', 'sleep 0.2'])
  t.equal(r.exitCode, 1)
  t.match(r.stderr.toString(), /^ {2}sleep 0\.2 +wall .*slower \(regression\)$/m)
  t.equal(JSON.parse(r.stdout.toString()).comparison.regressed, true, 'stdout is the JSON alone')
})

t.test('a baseline that cannot serve, or a bad threshold: refused before any run, exit 125', async t => {
  const dir = tempDir(t)
  const at = (name: string) => path.join(dir, name)
  const ran = at('ran')
  fs.writeFileSync(at('not.json'), 'Benchmark 1: true\n')
  fs.writeFileSync(at('hyperfine.json'), JSON.stringify({ results: [{ command: 'true', mean: 0.001 }] }))
  fs.writeFileSync(at('empty.json'), JSON.stringify({ schema: 'tileharness-bench/1', commands: [] }))
  fs.mkdirSync(at('a-directory'))
  const rows: Array<[string[], string]> = [
    [['--compare', at('none.json')], `--compare: cannot read '${at('none.json')}': no such file or directory (ENOENT)`],
    [['--compare', at('a-directory')], `--compare: cannot read '${at('a-directory')}': illegal operation on a directory (EISDIR)`],
    // Read whole, without bound: a 3 GB file took 26 s and 4 GB before V8 refused the string.
    [['--compare', '/dev/zero'], "--compare: '/dev/zero' is over 64 MiB, too large to be a bench report"],
    [['--compare', at('not.json')], `--compare: '${at('not.json')}' is not JSON (Unexpected token 'B', "Benchmark 1: true\n" is not valid JSON)`],
    [['--compare', at('hyperfine.json')], `--compare: '${at('hyperfine.json')}' is not a 'tileharness bench --json' report (no schema; expected 'tileharness-bench/1')`],
    [['--compare', at('empty.json')], `--compare: '${at('empty.json')}' has no commands`],
    [['--compare', at('empty.json'), '--threshold', 'ten'], `--compare: '${at('empty.json')}' has no commands`],
    [['--threshold', '5%'], '--threshold is for --compare'],
    [['--threshold', '-5%'], "invalid --threshold '-5%' (a percentage: 5%, 12.5%)"],
    [['--threshold=0.1x'], "invalid --threshold '0.1x' (a percentage: 5%, 12.5%)"],
  ]
  for (const [options, message] of rows) {
    const r = cli(['-n', '1', '--warmup', '0', '--shell', ...options, `echo run >> '${ran}'`])
    t.equal(r.exitCode, 125, `${options.join(' ')}: exit 125`)
    t.equal(r.stderr.toString(), `tileharness bench: ${message}\nTry 'tileharness bench --help' for more information.\n`, `${options.join(' ')}: message`)
    t.equal(r.stdout.toString(), '', `${options.join(' ')}: no report`)
  }
  t.notOk(fs.existsSync(ran), 'no run was started')
})

t.test('--help names --compare and --threshold', async t => {
  const r = cli(['--help'])
  t.equal(r.exitCode, 0)
  t.match(r.stdout.toString(), /^ {2}--compare F +compare with F, a report written earlier by --json/m)
  t.match(r.stdout.toString(), /^ {2}--threshold P +how much worse counts with --compare \(default 5%\)$/m)
})
