// `tileharness bench`'s hyperfine options end to end, through the built binary: parameter scans,
// the commands run around the benchmarked ones, names, stdin and output. The run count, the
// printed forms and the usage errors are in bench-hyperfine-reports.test.ts.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { FIGURES } from '../../lib/bench/figures.js'
import { CLI_MAIN as MAIN, tempDir } from '../helpers.js'

const cli = (args: string[], extra: Partial<ChildSpec> = {}) =>
  spawnChildSync({ file: process.execPath, args: [MAIN, 'bench', ...args], timeout: 120000, ...extra })
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'))
const lines = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n')

t.test('-P and -L: one benchmark per combination, {NAME} substituted, parameters in every report', async t => {
  const dir = tempDir(t)
  const log = path.join(dir, 'log'), json = path.join(dir, 'p.json'), runs = path.join(dir, 'runs.csv')
  const r = cli(['-n', '2', '--warmup', '0', '--shell', '-P', 'n', '1', '3', '-L', 'w', 'a,b', '-c', 'n={n} w={w}',
    '--json', json, '--runs-csv', runs, `echo {n}{w} >> '${log}'`])
  t.equal(r.exitCode, 0, r.stderr.toString())
  const names = ['n=1 w=a', 'n=1 w=b', 'n=2 w=a', 'n=2 w=b', 'n=3 w=a', 'n=3 w=b']
  const round = ['1a', '1b', '2a', '2b', '3a', '3b']
  t.same(lines(log), [...round, ...round], 'each round runs every combination once, the first parameter varying slowest (A B A B)')
  const report = readJson(json)
  t.same(report.commands.map((c: { command: string }) => c.command), names, '-c names each combination')
  t.same(report.commands.map((c: { parameters: object }) => c.parameters), round.map(v => ({ n: v[0], w: v[1] })), 'JSON: parameters: {name: value}')
  t.same(report.commands[3].argv, ['sh', '-c', `echo 2b >> '${log}'`], 'argv: what ran, substituted')
  t.same(report.commands.map((c: { runs: unknown[] }) => c.runs.length), [2, 2, 2, 2, 2, 2])
  const csv = lines(runs)
  t.equal(csv[0], `command,parameter_n,parameter_w,round,${FIGURES.map(f => f.key).join(',')},exitCode,signal,timedOut`)
  t.equal(csv.length, 1 + 6 * 2, '--runs-csv: one row per run')
  t.match(csv[5], /^n=2 w=a,2,a,1,[\d.]+,/, 'by command, then round')
  t.match(csv[12], /^n=3 w=b,3,b,2,[\d.]+,.*,0,,false$/)
  t.match(r.stdout.toString(), /^Benchmark 6: n=3 w=b$/m)
  t.match(r.stdout.toString(), /^Summary: wall time and max RSS relative to 'n=1 w=a'$/m)
})

t.test('-P with -D: decimal steps, exactly; --reference takes no parameters', async t => {
  const dir = tempDir(t)
  const json = path.join(dir, 'd.json')
  const r = cli(['-n', '1', '--warmup', '0', '--reference', 'true {t}', '-P', 't', '0', '0.5', '-D', '0.25', '--json', json, 'true {t}'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  const report = readJson(json)
  t.same(report.commands.map((c: { command: string; reference: boolean }) => [c.command, c.reference]),
    [['true {t}', true], ['true 0.00', false], ['true 0.25', false], ['true 0.50', false]], 'an unknown {name} is left as it is, as hyperfine')
  t.same(report.commands.map((c: { parameters: object }) => c.parameters), [{}, { t: '0.00' }, { t: '0.25' }, { t: '0.50' }])
  t.same(report.commands[2].argv, ['true', '0.25'], 'substituted, then split into words')
})

t.test('--setup, --prepare, --conclude, --cleanup: when each runs, {NAME} substituted, once or once per command', async t => {
  const dir = tempDir(t)
  const log = path.join(dir, 'log')
  const say = (what: string) => `echo ${what} >> '${log}'`
  let r = cli(['-n', '2', '--warmup', '1', '--shell', '-L', 'v', 'a,b',
    '--setup', say('setup-{v}'), '--prepare', say('prepare-{v}'), '--conclude', say('conclude-{v}'), '--cleanup', say('cleanup-{v}'), say('run-{v}')])
  t.equal(r.exitCode, 0, r.stderr.toString())
  const round = ['prepare-a', 'run-a', 'conclude-a', 'prepare-b', 'run-b', 'conclude-b']
  t.same(lines(log), ['setup-a', 'setup-b', ...round, ...round, ...round, 'cleanup-a', 'cleanup-b'],
    'setups before the first run, prepare and conclude around every run (warmup too), cleanups after the last')

  fs.rmSync(log)
  r = cli(['-n', '1', '--warmup', '0', '--shell', '--prepare', say('prepare-A'), '--prepare', say('prepare-B'), '--reference', say('A'), say('B')])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.same(lines(log), ['prepare-A', 'A', 'prepare-B', 'B'], '--prepare once per command, the --reference first')

  // Without --shell a hook is split into words as the commands are.
  const made = path.join(dir, 'made by setup')
  r = cli(['-n', '1', '--warmup', '0', '--setup', `touch '${made}'`, 'true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.ok(fs.existsSync(made), 'the setup ran, split like sh would without a shell')
})

t.test('a failing --setup, --prepare, --conclude or --cleanup stops the benchmark, naming which and why', async t => {
  const dir = tempDir(t)
  const log = path.join(dir, 'log')
  const run = `sh -c 'echo run >> "${log}"'`
  const rows: Array<[string[], RegExp, number]> = [
    [['--setup', 'sh -c "exit 4"'], /^tileharness bench: --setup 'sh -c "exit 4"' exited with code 4 \(for 'sh -c .*'\); see its output with --show-output\n$/, 0],
    [['--prepare', 'false'], /^tileharness bench: --prepare 'false' exited with code 1 \(for 'sh -c .*', warmup run 1 of 1\); see its output with --show-output\n$/, 0],
    [['--warmup', '0', '--conclude', 'false'], /^tileharness bench: --conclude 'false' exited with code 1 \(for 'sh -c .*', run 1 of 3\)/, 1],
    [['--cleanup', 'th-no-such-program x'], /^tileharness bench: --cleanup 'th-no-such-program x' \(for 'sh -c .*'\): failed to run 'th-no-such-program': No such file or directory\n$/, 4],
    [['--timeout', '200ms', '--prepare', 'sleep 5'], /^tileharness bench: --prepare 'sleep 5' timed out after 200 ms \(for 'sh -c .*', warmup run 1 of 1\)\n$/, 0],
    [['--ignore-failure', '--prepare', 'false'], /^tileharness bench: --prepare 'false' exited with code 1/, 0],
    [['--show-output', '--setup', 'false'], /^tileharness bench: --setup 'false' exited with code 1 \(for 'sh -c .*'\)\n$/, 0],
  ]
  for (const [options, message, runs] of rows) {
    fs.rmSync(log, { force: true })
    const r = cli(['-n', '3', ...options, run])
    t.equal(r.exitCode, 1, `${options.join(' ')}: exit 1`)
    t.match(r.stderr.toString(), message, `${options.join(' ')}: message`)
    t.equal(r.stdout.toString(), '', `${options.join(' ')}: no report`)
    t.equal(fs.existsSync(log) ? lines(log).length : 0, runs, `${options.join(' ')}: ${runs} runs before it stopped`)
  }
})

t.test('-c names the commands in order; the rest keep their command', async t => {
  const dir = tempDir(t)
  const json = path.join(dir, 'c.json')
  const r = cli(['-n', '1', '--warmup', '0', '-c', 'nothing', '--json', json, 'true', 'sh -c true'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.same(readJson(json).commands.map((c: { command: string; argv: string[] }) => [c.command, c.argv]), [['nothing', ['true']], ['sh -c true', ['sh', '-c', 'true']]])
  t.match(r.stdout.toString(), /^Benchmark 1: nothing {2}\(reference\)$/m)
  t.match(r.stdout.toString(), /relative to 'nothing'/)

  const named = cli(['-n', '1', '--warmup', '0', '--reference', 'true', '-c', 'base', '-c', 'shell {x}', '-L', 'x', '1,2', '--json', json, 'sh -c true'])
  t.equal(named.exitCode, 0, named.stderr.toString())
  t.same(readJson(json).commands.map((c: { command: string }) => c.command), ['base', 'shell 1', 'shell 2'], 'the --reference named first')
})

t.test('--input: the commands\' stdin from a file; null is /dev/null', async t => {
  const dir = tempDir(t)
  const input = path.join(dir, 'in.txt')
  fs.writeFileSync(input, 'hello\n')
  const check = `sh -c 'read x && test "$x" = hello'`
  t.equal(cli(['-n', '2', '--warmup', '1', '--input', input, check]).exitCode, 0, 'every run reads the file from its start')
  t.equal(cli(['-n', '1', '--warmup', '0', check]).exitCode, 1, 'by default, /dev/null')
  t.equal(cli(['-n', '1', '--warmup', '0', '--input', 'null', `sh -c '[ -c /dev/stdin ]'`]).exitCode, 0, '--input null: a character device')
})

t.test('--output: null, pipe, inherit (--show-output), or a file', async t => {
  const dir = tempDir(t)
  const out = path.join(dir, 'out.txt')
  const rows: Array<[string[], string]> = [
    [[], `[ -c /dev/stdout ] && [ -c /dev/stderr ]`],
    [['--output', 'null'], `[ -c /dev/stdout ] && [ -c /dev/stderr ]`],
    [['--output', 'pipe'], `[ -p /dev/stdout ] && [ -p /dev/stderr ] && echo lost && echo lost too >&2`],
    [['--output', out], `[ -f /dev/stdout ] && [ -c /dev/stderr ] && echo "run $$"`],
  ]
  for (const [options, test] of rows) {
    const r = cli(['-n', '2', '--warmup', '0', '--shell', ...options, test], { stdout: 'pipe', stderr: 'pipe' })
    t.equal(r.exitCode, 0, `${options.join(' ') || 'default'}: ${r.stderr}`)
    t.notMatch(r.stdout.toString() + r.stderr.toString(), /^(lost|run \d)/m, `${options.join(' ') || 'default'}: nothing reached this terminal`)
  }
  t.match(fs.readFileSync(out, 'utf8'), /^run \d+\n$/, 'the file holds the last run\'s output')
  for (const option of [['--output', 'inherit'], ['--show-output']]) {
    const r = cli(['-n', '2', '--warmup', '0', ...option, 'echo shown'])
    t.equal(r.exitCode, 0)
    t.equal(r.stdout.toString().split('\n').filter(l => l === 'shown').length, 2, `${option.join(' ')}: each run wrote to this terminal`)
  }
})
