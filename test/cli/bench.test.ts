// `tileharness bench` end to end, as a subprocess: the JSON it writes, its exit codes and
// messages, the other exports, and an SVG that an XML parser accepts. No timing is asserted.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { FIGURES } from '../../lib/bench/figures.js'
import { CLI_MAIN as MAIN, eventually, processState as processStateOf, script, tempDir } from '../helpers.js'
import { nodeChildEnv, slowHelperEnv, stageForNobody } from '../reliability/helpers.js'

const cli = (args: string[], extra: Partial<ChildSpec> = {}) =>
  spawnChildSync({ file: process.execPath, args: [MAIN, 'bench', ...args], timeout: 120000, ...extra })
const has = (program: string) => spawnChildSync({ file: 'sh', args: ['-c', `command -v ${program}`], stdout: 'pipe' }).exitCode === 0

/** null when `file` is well-formed XML (xmllint if installed, else python3's xml.etree), else why not. */
function xmlError(file: string): string | null {
  const r = has('xmllint')
    ? spawnChildSync({ file: 'xmllint', args: ['--noout', file], stdout: 'pipe', stderr: 'pipe' })
    : spawnChildSync({ file: 'python3', args: ['-c', 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])', file], stdout: 'pipe', stderr: 'pipe' })
  return r.exitCode === 0 ? null : r.stderr.toString() || r.diagnostic
}

t.test('two commands: summary on stdout, every export written, JSON carries every run', async t => {
  const dir = tempDir(t)
  const out = (name: string) => path.join(dir, name)
  const r = cli(['-n', '3', '--warmup', '1', '--json', out('b.json'), '--markdown', out('b.md'), '--csv', out('b.csv'), '--svg', out('b.svg'),
    '/bin/true', 'sh -c "exit 0"'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.equal(r.stderr.toString(), '', 'piped stderr: no progress bar, no noise')
  const text = r.stdout.toString()
  t.match(text, /^Benchmark 1: \/bin\/true {2}\(reference\)$/m)
  t.match(text, /^Benchmark 2: sh -c "exit 0"$/m)
  t.match(text, /^ {2}wall +\S+ (µs|ms|s) /m)
  t.match(text, /^ {2}max RSS +\S+ (KiB|MiB) /m)
  t.match(text, /^ {2}3 runs; outliers beyond 1\.5 IQR of the quartiles \(Tukey's fences\): /m)
  t.match(text, /^Summary: wall time and max RSS relative to '\/bin\/true'$/m)
  t.match(text, /^ {2}sh -c "exit 0" +wall \d+\.\d\dx \[[\d.]+–[\d.]+\] p(=[\d.]+|<0\.001) (not )?significant +max RSS \d+\.\d\dx \[[\d.]+–[\d.]+\] p(=[\d.]+|<0\.001) (not )?significant$/m)

  // The JSON: the schema, every run's raw figures, the summary.
  const json = JSON.parse(fs.readFileSync(out('b.json'), 'utf8'))
  t.equal(json.schema, 'tileharness-bench/1')
  t.match(json.options, { runs: 3, warmup: 1, timeoutMs: 0, shell: false, measure: true, ignoreFailure: false, launcher: 'auto' })
  t.match(json.outlierRule, { id: 'tukey-1.5-iqr', description: String })
  t.type(json.ratioMethod, 'string')
  t.same(Object.keys(json.units), FIGURES.map(f => f.key))
  t.equal(json.commands.length, 2)
  const [ref, sh] = json.commands
  t.match(ref, { command: '/bin/true', argv: ['/bin/true'], reference: true, ratio: null, failedRuns: 0, timedOutRuns: 0 })
  t.match(sh, { command: 'sh -c "exit 0"', argv: ['sh', '-c', 'exit 0'], reference: false, failedRuns: 0 })
  t.match(sh.ratio, { wallMs: { median: Number, q1: Number, q3: Number, min: Number, max: Number, pairs: 3 }, maxRSSKiB: { pairs: 3 } })
  for (const key of ['wallMs', 'maxRSSKiB']) {
    t.match(sh.ratio[key].interval, { level: 0.95, low: Number, high: Number }, `${key}: its confidence interval`)
    t.match(sh.ratio[key].test, { statistic: Number, pValue: Number, n: Number, exact: true, significant: false }, `${key}: three pairs are never significant`)
  }
  t.match(json.ratioInterval, { level: 0.95, resamples: 2000, seed: 18 })
  t.match(json.significance, { test: /Wilcoxon signed-rank/, alpha: 0.05 })
  // The machine's load, read at the start and the end; busy or not is this machine's business.
  t.match(json.machine, { start: { loadAverage: Number, parallelism: Number }, end: { loadAverage: Number, parallelism: Number }, busy: Boolean })
  t.equal(json.machine.warning === null, !json.machine.busy)
  if (json.machine.busy) t.match(text, /^warning: the machine was busy: load average /m, 'a busy machine is said in the summary')
  for (const c of json.commands) {
    t.equal(c.runs.length, 3, `${c.command}: every measured run, no warmup run`)
    t.same(c.runs.map((run: { round: number }) => run.round), [1, 2, 3])
    for (const run of c.runs) {
      t.match(run, { exitCode: 0, signal: null, timedOut: false, diagnostic: '' })
      for (const f of FIGURES) t.ok(Number.isFinite(run.figures[f.key]) && run.figures[f.key] >= 0, `${c.command}: run ${run.round} ${f.key}`)
    }
    for (const f of FIGURES) {
      t.match(c.summary[f.key], { count: 3, min: Number, q1: Number, median: Number, q3: Number, max: Number, mean: Number, stddev: Number, outliers: Array })
    }
    // measure: true by default: max RSS is the command's own, far below this Node process's.
    t.ok(c.summary.maxRSSKiB.max < 16 * 1024, `${c.command}: max RSS ${c.summary.maxRSSKiB.max} KiB is the child's own`)
  }

  // The other exports.
  const md = fs.readFileSync(out('b.md'), 'utf8').trim().split('\n')
  t.equal(md.length, 4, 'Markdown: header, rule, one row per command')
  t.match(md[2], /^\| `\/bin\/true` \(reference\) \|/)
  const csv = fs.readFileSync(out('b.csv'), 'utf8').trim().split('\n')
  t.equal(csv.length, 1 + 2 * FIGURES.length, 'CSV: one row per command and figure')
  t.match(csv[1], /^\/bin\/true,true,wallMs,ms,3,/)

  const svg = fs.readFileSync(out('b.svg'), 'utf8')
  t.equal(xmlError(out('b.svg')), null, 'the SVG is well-formed XML')
  t.match(svg, /<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
  t.match(svg, /class="name">sh -c &quot;exit 0&quot;</, 'names are escaped and sit beside their rows')
  t.equal(svg.match(/<circle /g)?.length, 2 * 2 * 3, 'every run in both panels')
})

t.test('--reference, --shell, --rlimit, --no-measure, --show-output', async t => {
  const dir = tempDir(t)
  const json = path.join(dir, 'r.json')
  let r = cli(['-n', '2', '--warmup', '0', '--json', json, '--reference', 'true', 'sh -c true'])
  t.equal(r.exitCode, 0)
  let report = JSON.parse(fs.readFileSync(json, 'utf8'))
  t.same(report.commands.map((c: { command: string; reference: boolean }) => [c.command, c.reference]), [['true', true], ['sh -c true', false]])
  t.match(r.stdout.toString(), /relative to 'true'/)

  r = cli(['-n', '2', '--warmup', '0', '--shell', '--json', json, 'test "$(ulimit -n)" = 64'], {})
  t.equal(r.exitCode, 1, 'without the limit the check fails')
  r = cli(['-n', '2', '--warmup', '0', '--shell', '--rlimit', 'nofile=64', '--json', json, 'test "$(ulimit -n)" = 64'])
  t.equal(r.exitCode, 0, '--rlimit reaches every run')
  report = JSON.parse(fs.readFileSync(json, 'utf8'))
  t.same(report.commands[0].argv, ['sh', '-c', 'test "$(ulimit -n)" = 64'], '--shell: sh -c CMD')
  t.same(report.options.rlimits, { nofile: 64 })

  r = cli(['-n', '2', '--warmup', '0', '--no-measure', '--json', json, 'true'])
  t.equal(r.exitCode, 0)
  report = JSON.parse(fs.readFileSync(json, 'utf8'))
  t.equal(report.options.measure, false)
  t.ok(report.commands[0].summary.maxRSSKiB.min > 16 * 1024, 'without the helper max RSS is at least the Node parent\'s (the reason measure is the default)')

  r = cli(['-n', '2', '--warmup', '1', '--show-output', 'echo shown'])
  t.equal(r.exitCode, 0)
  t.equal(r.stdout.toString().split('\n').filter(l => l === 'shown').length, 3, 'warmup + 2 runs wrote to the terminal')
})

t.test('a failing run fails the benchmark, naming the command and why', async t => {
  const noShebang = script(tempDir(t), 'no-shebang', 'echo hi\n')
  const rows: Array<[string[], RegExp]> = [
    [['-n', '3', 'true', 'sh -c "exit 3"'], /^tileharness bench: 'sh -c "exit 3"' exited with code 3 \(warmup run 1 of 1\); see its output with --show-output, or use --ignore-failure\n$/],
    [['-n', '3', '--warmup', '0', 'sh -c "exit 3"'], /^tileharness bench: 'sh -c "exit 3"' exited with code 3 \(run 1 of 3\)/],
    [['--timeout', '100ms', '--warmup', '0', 'sleep 5'], /^tileharness bench: 'sleep 5' timed out after 100 ms \(run 1\)\n$/], // runs not yet chosen
    [['--warmup', '0', `sh -c 'kill -9 $$'`], /^tileharness bench: 'sh -c 'kill -9 \$\$'' was killed by SIGKILL/],
    [['th-no-such-program'], /^tileharness bench: failed to run 'th-no-such-program': No such file or directory\n$/],
    [['--ignore-failure', 'th-no-such-program --version'], /^tileharness bench: 'th-no-such-program --version': failed to run 'th-no-such-program': No such file or directory\n$/],
    [[noShebang], new RegExp(`^tileharness bench: failed to run '${noShebang}': Exec format error \\(no #! line\\?\\)\n$`)],
  ]
  for (const [args, message] of rows) {
    const r = cli(args)
    t.equal(r.exitCode, 1, `${args.join(' ')}: exit 1`)
    t.match(r.stderr.toString(), message, `${args.join(' ')}: message`)
    t.equal(r.stdout.toString(), '', 'no report for a benchmark that did not finish')
  }
})

t.test('--ignore-failure keeps going and reports failed and timed-out runs', async t => {
  const dir = tempDir(t)
  const json = path.join(dir, 'f.json')
  // A deadline a loaded machine cannot miss for `sh -c "exit 3"`, and `sleep 5` always does.
  const r = cli(['-n', '2', '--warmup', '0', '--ignore-failure', '--timeout', '1s', '--json', json, 'sh -c "exit 3"', 'sleep 5'])
  t.equal(r.exitCode, 0)
  t.match(r.stdout.toString(), /warning: 2 of 2 runs failed \(--ignore-failure\)/)
  t.match(r.stdout.toString(), /warning: 2 of 2 runs failed, 2 of them timed out/)
  const report = JSON.parse(fs.readFileSync(json, 'utf8'))
  t.match(report.commands[0], { failedRuns: 2, timedOutRuns: 0 })
  t.match(report.commands[0].runs[0], { exitCode: 3, timedOut: false })
  t.match(report.commands[1], { failedRuns: 2, timedOutRuns: 2 })
  t.match(report.commands[1].runs[1], { exitCode: null, signal: 'SIGKILL', timedOut: true, diagnostic: 'Child timed out' })
})

t.test('bad options: the message and a pointer to --help, exit 125, never a stack trace', async t => {
  const rows: Array<[string[], RegExp]> = [
    [['--bogus', 'true'], /^tileharness bench: unknown option --bogus\n/],
    [[], /^tileharness bench: no command given\n/],
    [['-n', '0', 'true'], /^tileharness bench: invalid -n '0' \(a whole number >= 1\)\n/],
    [['--runs=x', 'true'], /^tileharness bench: invalid --runs 'x'/],
    [['--warmup', '-1', 'true'], /^tileharness bench: invalid --warmup '-1'/],
    [['--warmup', '99999999999999999999', 'true'], /^tileharness bench: invalid --warmup '99999999999999999999' \(too large: at most 9007199254740991\)\n/],
    [['-n'], /^tileharness bench: option -n needs a value\n/],
    [['--timeout', '5x', 'true'], /^tileharness bench: invalid --timeout '5x'/],
    [['--rlimit', 'bogus=5', 'true'], /^tileharness bench: invalid --rlimit 'bogus=5' \(no resource 'bogus'; one of as, core, cpu, .*, stack\)\n/],
    [['--rlimit', 'nofile', 'true'], /^tileharness bench: invalid --rlimit 'nofile'/],
    [['--launcher', 'nope', 'true'], /^tileharness bench: invalid --launcher 'nope'/],
    [['--shell=yes', 'true'], /^tileharness bench: option --shell takes no value\n/],
    [['sh -c "unterminated'], /^tileharness bench: cannot split 'sh -c "unterminated': unterminated double quote/],
    [['  '], /^tileharness bench: empty command ' {2}'\n/],
    [['--json', '/nonexistent-dir/x.json', 'true'], /^tileharness bench: --json: cannot write '\/nonexistent-dir\/x\.json': directory '\/nonexistent-dir': no such file or directory \(ENOENT\)\n/],
    // Refused after the whole benchmark had run (ENOENT from /proc).
    [['--launcher', 'posix_spawn', '--rlimit', 'as=2G', 'true'], /^tileharness bench: --launcher 'posix_spawn' cannot be combined with --rlimit: /],
    [['--json', '/dev/fd/99', 'true'], /^tileharness bench: --json: cannot write '\/dev\/fd\/99': descriptor 99 is not open\n/],
  ]
  for (const [args, message] of rows) {
    const r = cli(args)
    t.equal(r.exitCode, 125, `${JSON.stringify(args)}: exit 125`)
    t.match(r.stderr.toString(), message, `${JSON.stringify(args)}: message`)
    t.equal(r.stderr.toString().split('\n').slice(1).join('\n'), "Try 'tileharness bench --help' for more information.\n", 'then the pointer to --help')
    t.notMatch(r.stderr.toString(), /\n\s+at /, 'never a stack trace')
  }
})

t.test('--help', async t => {
  const r = cli(['--help'])
  t.equal(r.exitCode, 0)
  t.match(r.stdout.toString(), /^usage: tileharness bench \[-n 10 \| --min-runs 10 --max-runs N\] \[--warmup 1\]/)
  t.match(r.stdout.toString(), /Tukey's fences/)
})

// Report files by the output rules (lib/cli/output.ts): checked when the options are read, before
// the first run; written by the same rules when the benchmark is done.
t.test('report files that cannot be written: refused before any run, exit 125', async t => {
  const dir = tempDir(t)
  const at = (name: string) => path.join(dir, name)
  const ran = at('ran')
  const command = `echo run >> '${ran}'`
  fs.mkdirSync(at('a-directory'))
  fs.writeFileSync(at('a-file'), '')
  fs.symlinkSync('loop-b', at('loop-a'))
  fs.symlinkSync('loop-a', at('loop-b'))
  const server = net.createServer().listen(at('a-socket'))
  await new Promise(resolve => server.once('listening', resolve))
  t.teardown(() => { server.close() })
  const rows: Array<[string[], string]> = [
    [['--svg', at('a-directory')], `--svg: cannot write '${at('a-directory')}': it is a directory`],
    [['--json', at('a-socket')], `--json: cannot write '${at('a-socket')}': it is a socket`],
    [['--csv', at('loop-a')], `--csv: cannot write '${at('loop-a')}': too many levels of symbolic links`],
    [['--markdown', at('a-file/x.md')], `--markdown: cannot write '${at('a-file/x.md')}': '${at('a-file')}' is not a directory`],
    [['--json', at('no-dir/x.json')], `--json: cannot write '${at('no-dir/x.json')}': directory '${at('no-dir')}': no such file or directory (ENOENT)`],
    [['--json', '-', '--csv', '/dev/stdout'], '--json and --csv would all write to standard output'],
    [['--json', `${at('a-file')}/`], `--json: cannot write '${at('a-file')}/': not a directory (ENOTDIR)`],
    [['--json', `${dir}/no-dir/../x.json`], `--json: cannot write '${dir}/no-dir/../x.json': directory '${at('no-dir')}/..': no such file or directory (ENOENT)`],
  ]
  if (process.getuid?.() === 0 && spawnChildSync({ file: 'mknod', args: [at('a-block-device'), 'b', '7', '0'] }).exitCode === 0) {
    rows.push([['--svg', at('a-block-device')], `--svg: cannot write '${at('a-block-device')}': it is a block device (only character devices and FIFOs are written in place)`])
  }
  for (const [options, message] of rows) {
    const r = cli(['-n', '1', '--warmup', '0', '--shell', ...options, command])
    t.equal(r.exitCode, 125, `${options.join(' ')}: exit 125`)
    t.equal(r.stderr.toString(), `tileharness bench: ${message}\nTry 'tileharness bench --help' for more information.\n`, `${options.join(' ')}: message`)
    t.equal(r.stdout.toString(), '', `${options.join(' ')}: no report`)
  }
  t.notOk(fs.existsSync(ran), 'no run was started')
})

// --output's check opens the file once and removes what it made. Through a symlink to nothing, the
// open made the link's target, and the check removed nothing: a command refused later left it.
t.test('--output through a link to nothing: a command refused later leaves nothing behind', async t => {
  const dir = tempDir(t)
  fs.symlinkSync('made.txt', path.join(dir, 'link'))
  const r = cli(['--output', 'link'], { cwd: dir })
  t.equal(r.exitCode, 125, r.stderr.toString())
  t.match(r.stderr.toString(), /^tileharness bench: no command given\n/)
  t.same(fs.readdirSync(dir), ['link'], 'no made.txt')
})

// A report file checked before the runs that the runs themselves turn into something that cannot be
// written: the summary is printed and the write refused by name, as any failed write is. It ended
// with one line naming neither option nor file ("tileharness bench: it is a directory") and no
// summary.
t.test('a report file that a run turned into a directory: the summary, then the option and file named, exit 125', async t => {
  const dir = tempDir(t)
  const r = cli(['-n', '1', '--warmup', '0', '--shell', '--json', 'out.json', 'mkdir out.json'], { cwd: dir })
  t.equal(r.exitCode, 125)
  t.match(r.stdout.toString(), /^Benchmark 1: mkdir out\.json\n/, 'the summary')
  t.equal(r.stderr.toString().split('\n').filter(l => l.startsWith('tileharness')).join('\n'), "tileharness bench: --json: cannot write 'out.json': it is a directory")
})

t.test('a report directory this user cannot write: refused before any run (as nobody)', async t => {
  const staged = stageForNobody(t)
  if (typeof staged === 'string') return t.skip(staged)
  const dir = tempDir(t)
  fs.chmodSync(dir, 0o755) // nobody may enter, not write
  const runs = tempDir(t)
  fs.chmodSync(runs, 0o777)
  const ran = path.join(runs, 'ran')
  const main = path.join(staged.root, 'dist/cli/main.js')
  const r = spawnChildSync({
    file: staged.wrap[0], args: [...staged.wrap.slice(1), process.execPath, main, 'bench', '--shell', '--json', path.join(dir, 'r.json'), `echo run >> '${ran}'`],
    env: nodeChildEnv(staged), timeout: 60000,
  })
  t.equal(r.exitCode, 125, r.stderr.toString())
  t.equal(r.stderr.toString(), `tileharness bench: --json: cannot write '${path.join(dir, 'r.json')}': directory '${dir}': permission denied (EACCES)\nTry 'tileharness bench --help' for more information.\n`)
  t.notOk(fs.existsSync(ran), 'no run was started')
})

t.test("report files: '-' is stdout (the summary moves to stderr), devices and FIFOs written in place, symlinks followed", async t => {
  const dir = tempDir(t)
  const at = (name: string) => path.join(dir, name)
  for (const [option, output] of [['--json', '-'], ['--json', '/dev/stdout'], ['--csv', '-']]) {
    const r = cli(['-n', '2', '--warmup', '0', option, output, 'true'], { cwd: dir })
    t.equal(r.exitCode, 0, `${option} ${output}: ${r.stderr}`)
    t.match(r.stderr.toString(), /^Benchmark 1: true$/m, `${option} ${output}: the summary on stderr`)
    if (option === '--json') t.equal(JSON.parse(r.stdout.toString()).commands[0].runs.length, 2, `${option} ${output}: stdout is the JSON alone`)
    else t.match(r.stdout.toString(), /^command,reference,figure,unit,/, `${option} ${output}: stdout is the CSV alone`)
  }
  t.same(fs.readdirSync(dir), [], "no file named '-', nor any other")

  fs.mkdirSync(at('reports'))
  fs.symlinkSync('reports/latest.json', at('latest.json'))
  const nullDevice = process.getuid?.() === 0 && spawnChildSync({ file: 'mknod', args: [at('null'), 'c', '1', '3'] }).exitCode === 0 ? at('null') : '/dev/null'
  const device = fs.statSync(nullDevice)
  t.equal(spawnChildSync({ file: 'mkfifo', args: [at('fifo')] }).exitCode, 0)
  const reader = startChild({ file: 'sh', args: ['-c', 'exec cat fifo > from-fifo.md'], cwd: dir, timeout: 60000 })
  const r = await new Promise<ReturnType<typeof cli>>(resolve => setImmediate(() =>
    resolve(cli(['-n', '2', '--warmup', '0', '--json', at('latest.json'), '--svg', nullDevice, '--markdown', at('fifo'), 'true']))))
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stdout.toString(), /^Benchmark 1: true/, 'the summary on stdout')
  t.ok(fs.lstatSync(at('latest.json')).isSymbolicLink(), 'the link stays a link')
  t.equal(JSON.parse(fs.readFileSync(at('reports/latest.json'), 'utf8')).schema, 'tileharness-bench/1', 'its target got the JSON')
  t.same([fs.lstatSync(nullDevice).isCharacterDevice(), fs.lstatSync(nullDevice).ino], [true, device.ino], `${nullDevice}: the same device node`)
  t.equal((await reader.result).exitCode, 0)
  t.match(fs.readFileSync(at('from-fifo.md'), 'utf8'), /^\| Command \|/, 'the FIFO carried the Markdown')
})

t.test("a measured run's wall time is the target's own: a helper that takes 400 ms to start is not in it", async t => {
  // The same slow helper as test/spawn/measure.test.ts: a wrapper beside a copy of the addon. With
  // the helper's start counted, every run of /bin/true would be over 400 ms; --no-measure, which
  // does not use the helper, is the control.
  const env = slowHelperEnv(t, 400)
  const r = cli(['-n', '3', '--warmup', '0', '--json', '-', '/bin/true'], { env, stdout: 'pipe', stderr: 'pipe' })
  t.equal(r.exitCode, 0, r.stderr.toString())
  const report = JSON.parse(r.stdout.toString())
  const walls: number[] = report.commands[0].runs.map((run: { figures: { wallMs: number } }) => run.figures.wallMs)
  t.equal(walls.length, 3)
  for (const wall of walls) t.ok(wall < 400, `run of /bin/true: ${wall.toFixed(2)} ms, the helper's start not in it`)
})

/** The highest CPU this process may run on (not CPU 0, where that is possible: a pin that changes something). */
const CPU = Number(/Cpus_allowed_list:\s*(?:.*[,-])?(\d+)\s*$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1])

t.test('--cpu pins every run: the command sees only the CPU asked for', async t => {
  const dir = tempDir(t)
  const out = path.join(dir, 'out')
  const r = cli(['-n', '2', '--warmup', '0', '--cpu', String(CPU), '--output', out, '--json', path.join(dir, 'b.json'), 'grep Cpus_allowed_list /proc/self/status'])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.equal(fs.readFileSync(out, 'utf8'), `Cpus_allowed_list:\t${CPU}\n`, `the run saw CPU ${CPU} alone`)
  t.same(JSON.parse(fs.readFileSync(path.join(dir, 'b.json'), 'utf8')).options.cpus, [CPU], 'the JSON says so')
})

// A run leads a process group of its own: a --timeout, or a signal that ends the benchmark, ends
// everything it started. A timed-out `sh -c 'sleep N; true'` left its sleep to pid 1, to compete
// with the runs after it; so did a shell that ignores the ending signal, when bench was ended.
t.test('a timed-out run, or one bench is ended in, leaves none of its processes behind', async t => {
  const dir = tempDir(t)
  const needle = (tag: string) => `${tag}${process.pid}.${Date.now() % 100000}`
  const sleepers = (n: string) => fs.readdirSync('/proc').filter(p => /^\d+$/.test(p)).filter(p => {
    try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${n}\0` && processStateOf(Number(p)) === 'alive' } catch { return false }
  })
  const timedOut = needle('31')
  t.teardown(() => { for (const p of sleepers(timedOut)) process.kill(Number(p), 'SIGKILL') })
  const r = cli(['-n', '2', '--warmup', '0', '--ignore-failure', '--timeout', '100ms', '--shell', `sleep ${timedOut}; true`])
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stdout.toString(), /2 of 2 runs failed, 2 of them timed out/)
  t.same(sleepers(timedOut), [], 'no sleep of a timed-out run is left')

  const ended = needle('41')
  t.teardown(() => { for (const p of sleepers(ended)) process.kill(Number(p), 'SIGKILL') })
  const pidFile = path.join(dir, 'shell.pid')
  const bench = startChild({
    file: process.execPath, args: [MAIN, 'bench', '-n', '3', '--warmup', '0', '--shell', `trap "" INT TERM HUP; echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; sleep ${ended}; true`],
    env: nodeChildEnv(), stdout: 'ignore', stderr: 'pipe', timeout: 60000,
  })
  while (!fs.existsSync(pidFile)) await new Promise(resolve => setTimeout(resolve, 20))
  t.ok(await eventually(() => sleepers(ended).length === 1), 'the shell has started its sleep')
  bench.kill('SIGTERM')
  const b = await bench.result
  t.equal(b.signal, 'SIGTERM', 'bench ended by SIGTERM')
  t.ok(await eventually(() => sleepers(ended).length === 0, 5000), `the sleep of the shell that ignored it is gone too (${sleepers(ended).join(', ') || 'none'})`)
})

// A signal that came while a report was being written (a temp file beside it, renamed into place)
// took its default action in the middle, and the temp file was left: the handlers were gone before
// the reports were written. The write is held (strace delays its fsync by 2 s) and SIGTERM sent.
t.test('TERM while a report is written: no temp file left, bench ends by it', { skip: has('strace') ? false : 'strace is not installed (Debian: strace)' }, async t => {
  const dir = tempDir(t)
  const report = path.join(dir, 'r.json')
  const others = [path.join(dir, 'r.md'), path.join(dir, 'r.csv')]
  const bench = startChild({
    file: 'strace', args: ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=fsync', '-e', 'inject=fsync:delay_enter=2000000', process.execPath, MAIN, 'bench', '-n', '1', '--warmup', '0', '--json', report, '--markdown', others[0]!, '--csv', others[1]!, 'true'],
    env: nodeChildEnv(), stdout: 'ignore', stderr: 'pipe', timeout: 60000,
  })
  const temp = () => fs.readdirSync(dir).filter(f => f.endsWith('.tmp'))
  t.ok(await eventually(() => temp().length > 0, 30000), 'the report is being written')
  const node = Number(fs.readFileSync(`/proc/${bench.pid}/task/${bench.pid}/children`, 'utf8').trim().split(/\s+/)[0])
  process.kill(node, 'SIGTERM')
  const r = await bench.result
  t.same(temp(), [], 'no temp file left')
  t.equal(r.signal, 'SIGTERM', 'bench ended by SIGTERM (strace passes it on)')
  t.match(r.stderr.toString(), /^$|killed|Terminated/, 'no error of its own')
  t.equal(fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')).commands?.length ?? 1 : 0, fs.existsSync(report) ? 1 : 0, 'the report, if there, is whole')
  // The signal came during the first: the others were written all the same, before bench died.
  t.same([report, ...others].filter(f => fs.existsSync(f)).length, 1, 'no report after the one being written')
})

// A report written in place (a FIFO, a pipe) can block: a signal must still end bench then, by its
// default action. With the handlers kept for the reports, TERM was caught and bench hung on.
t.test('TERM while a report blocks on a FIFO with no reader: bench ends by it', async t => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'fifo')
  t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
  const bench = startChild({
    file: process.execPath, args: [MAIN, 'bench', '-n', '1', '--warmup', '0', '--json', fifo, 'true'],
    env: nodeChildEnv(), stdout: 'ignore', stderr: 'pipe', timeout: 60000,
  })
  const wchan = () => { try { return fs.readFileSync(`/proc/${bench.pid}/wchan`, 'utf8') } catch { return '' } }
  t.ok(await eventually(() => /fifo|pipe|partner/.test(wchan()), 30000), `bench waits for the FIFO's reader (${wchan()})`)
  bench.kill('SIGTERM')
  const r = await bench.result
  t.same([r.signal, r.timedOut], ['SIGTERM', false], 'ended by SIGTERM, at once')
})

// On a terminal, in its foreground, a run in a group of its own would be a background job: stopped
// at its first use of /dev/tty (here stty's tcsetattr: SIGTTOU) until the deadline. There the runs
// stay in bench's group, as with timeout's --foreground.
t.test("on a terminal's foreground, a run may use the terminal", { skip: has('script') ? false : 'script (util-linux) is not installed' }, async t => {
  const r = spawnChildSync({
    // The paths quoted for script's shell: CI runs a clone from a directory with a space in its name.
    file: 'script', args: ['-qec', `${shQuote(process.execPath)} ${shQuote(MAIN)} bench -n 1 --warmup 0 --timeout 20s --shell 'stty sane </dev/tty'`, '/dev/null'],
    env: nodeChildEnv(), stdin: 'ignore', timeout: 60000,
  })
  t.equal(r.exitCode, 0, `bench under a terminal: the run set the terminal's modes and exited 0 (${r.stdout.toString().split(/\r|\n/).filter(l => l.includes('tileharness')).pop() ?? 'no message'})`)
})

t.test('INT, TERM, HUP or QUIT mid-run: the running command is ended and reaped, no report, and bench ends by that signal', async t => {
  const dir = tempDir(t)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const) {
    for (const where of ['run', 'prepare'] as const) {
      const pidFile = path.join(dir, `${sig}-${where}.pid`)
      const report = path.join(dir, `${sig}-${where}.json`)
      fs.writeFileSync(report, 'earlier report')
      const waiting = `sh -c 'echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; exec sleep 100'`
      const args = where === 'run' ? [waiting] : ['--prepare', waiting, 'true']
      // Not with this process's NODE_OPTIONS: tap's hooks there handle these signals themselves.
      const bench = startChild({
        file: process.execPath, args: [MAIN, 'bench', '-n', '3', '--warmup', '0', '--json', report, ...args],
        env: nodeChildEnv(), stdout: 'ignore', stderr: 'pipe', timeout: 60000,
      })
      while (!fs.existsSync(pidFile)) await new Promise(resolve => setTimeout(resolve, 20))
      const waiter = Number(fs.readFileSync(pidFile, 'utf8'))
      t.equal(bench.kill(sig), true)
      const r = await bench.result
      t.same({ signal: r.signal, timedOut: r.timedOut }, { signal: sig, timedOut: false }, `${sig} during the ${where}: bench ended by it (${r.stderr.toString().trim()})`)
      // Reaped by bench itself before it ended: not a zombie left for pid 1 to collect.
      t.equal(processStateOf(waiter), 'gone', `${sig} during the ${where}: the command is gone, not a zombie`)
      t.equal(fs.readFileSync(report, 'utf8'), 'earlier report', `${sig}: no report written`)
    }
  }
})

/** `s` as one word of sh. */
function shQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`
}
