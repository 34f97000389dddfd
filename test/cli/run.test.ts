// `tileharness run` end to end, as a subprocess: output, exit codes, options.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { CLI_MAIN as MAIN, eventually, processState, script, tempDir } from '../helpers.js'
import { nodeChildEnv } from '../reliability/helpers.js'

const cli = (args: string[], extra: Partial<ChildSpec> = {}) =>
  spawnChildSync({ file: process.execPath, args: [MAIN, ...args], timeout: 60000, ...extra })

const TRY = "Try 'tileharness run --help' for more information.\n"

t.test('exit status follows coreutils timeout; messages in its shape', async t => {
  const dir = tempDir(t)
  const noX = script(dir, 'no-x', '#!/bin/sh\n', 0o644)
  const noShebang = script(dir, 'no-shebang', 'echo hi\n')
  const badInterpreter = script(dir, 'bad-interpreter', '#!/nonexistent/th-python -u\nprint(1)\n')
  const rows: Array<[string[], number, RegExp | null]> = [
    [['run', '--', 'sh', '-c', 'exit 7'], 7, null],
    [['run', 'true'], 0, null],
    [['run', '--timeout', '100ms', '--', 'sleep', '10'], 124, /^tileharness run: Child timed out\n$/],
    [['run', '--timeout=0.1', 'sleep', '10'], 124, /Child timed out/],
    [['run', '--bogus', 'true'], 125, new RegExp(`^tileharness run: unknown option --bogus\n${TRY}$`)],
    [['run', '--timeout', '5x', 'true'], 125, /^tileharness run: invalid --timeout '5x'/],
    [['run', '--rlimit', 'bogus=5', 'true'], 125, /^tileharness run: invalid --rlimit 'bogus=5' \(no resource 'bogus'; one of as, core, cpu, .*, stack\)\nTry/],
    [['run', '--timeout'], 125, new RegExp(`^tileharness run: option --timeout needs a value\n${TRY}$`)],
    [['run', '--timeout', '99999999999s', 'true'], 125, new RegExp(`^tileharness run: invalid --timeout '99999999999s' \\(at most 2147483647ms, about 24.8 days\\)\n${TRY}$`)],
    [['run', '--timeout', '2147483648ms', 'true'], 125, /^tileharness run: invalid --timeout '2147483648ms' \(at most 2147483647ms/],
    [['run', '--kill-after', '597h', 'true'], 125, /^tileharness run: invalid --kill-after '597h' \(at most 2147483647ms/],
    [['run', '--rlimit', 'nofile=5:3', 'true'], 125, new RegExp(`^tileharness run: invalid --rlimit 'nofile=5:3' \\(the soft limit 5 is above the hard limit 3\\)\n${TRY}$`)],
    [['run', '--rlimit', 'nofile=unlimited:64', 'true'], 125, /^tileharness run: invalid --rlimit 'nofile=unlimited:64' \(the soft limit unlimited is above the hard limit 64\)\n/],
    [['run'], 125, new RegExp(`^tileharness run: no command given\n${TRY}$`)],
    [['run', '--signal', '99', 'true'], 125, /^tileharness run: invalid --signal '99' \(a name such as TERM or a number such as 15\)\nTry/],
    [['run', '--signal', 'SIGFOO', 'true'], 125, /^tileharness run: invalid --signal 'SIGFOO'/],
    [['run', 'th-no-such-program'], 127, /^tileharness run: failed to run 'th-no-such-program': No such file or directory\n$/],
    [['run', noX], 126, new RegExp(`^tileharness run: failed to run '${noX}': Permission denied \\(it has no execute permission\\)\n$`)],
    [['run', noShebang, 'arg'], 126, new RegExp(`^tileharness run: failed to run '${noShebang}': Exec format error \\(no #! line\\?\\)\n$`)],
    [['run', '--launcher', 'fork', noShebang], 126, /: Exec format error \(no #! line\?\)\n$/],
    [['run', badInterpreter], 127, new RegExp(`^tileharness run: failed to run '${badInterpreter}': No such file or directory \\(its #! interpreter '/nonexistent/th-python' was not found\\)\n$`)],
    [['run', dir], 126, new RegExp(`^tileharness run: failed to run '${dir}': Permission denied \\(it is a directory\\)\n$`)],
    [['run', '--', 'sh', '-c', 'kill -TERM $$'], 143, null],
    [['run', '--', 'sh', '-c', 'kill -SEGV $$'], 139, null],
    // What the harness refuses in a spec the command line made is a bad command line, in the
    // options' words (these were 'cwd must not be empty' and 'launcher ... rlimits', with no Try line).
    [['run', '--', ''], 125, new RegExp(`^tileharness run: CMD must not be empty\n${TRY}$`)],
    [['run', '--cwd', '', 'true'], 125, new RegExp(`^tileharness run: --cwd must not be empty\n${TRY}$`)],
    [['run', '--launcher', 'posix_spawn', '--rlimit', 'as=2G', 'true'], 125, new RegExp(`^tileharness run: --launcher 'posix_spawn' cannot be combined with --rlimit: posix_spawn cannot set resource limits in the child; use 'fork' or 'auto'\n${TRY}$`)],
    [['run', '--launcher', 'posix_spawn', '--cpu', '0', 'true'], 125, new RegExp(`^tileharness run: --launcher 'posix_spawn' cannot be combined with --cpu: .*\n${TRY}$`)],
    [['run', '--cwd', '/nonexistent', 'true'], 126, /^tileharness run: failed to run 'true': cannot change directory to '\/nonexistent': No such file or directory\n$/],
  ]
  for (const [args, code, stderr] of rows) {
    const r = cli(args)
    t.equal(r.exitCode, code, `${args.join(' ')} -> ${code}`)
    if (stderr) t.match(r.stderr.toString(), stderr, `${args.join(' ')}: message`)
    t.notMatch(r.stderr.toString(), /\n\s+at /, 'never a stack trace')
  }
})

// The hint looked for the program from tileharness's own directory, not the child's: it blamed
// the #! line of another file of the same name, or hinted at a program that was not there.
t.test("a failed run's hint reads the program where the child looked for it (--cwd)", async t => {
  const dir = tempDir(t)
  script(dir, 'tool.py', '#!/nonexistent/th-python\nprint(1)\n')
  fs.mkdirSync(`${dir}/other`)
  script(`${dir}/other`, 'tool.py', '#!/bin/sh\nexit 0\n')
  const from = (cwd: string, args: string[]) => cli(['run', ...args], { cwd }).stderr.toString()
  t.equal(from(`${dir}/other`, ['--cwd', '..', './tool.py']), "tileharness run: failed to run './tool.py': No such file or directory (its #! interpreter '/nonexistent/th-python' was not found)\n", "the child's ./tool.py, not this directory's")
  t.equal(from(dir, ['--cwd', '/', './tool.py']), "tileharness run: failed to run './tool.py': No such file or directory\n", 'no hint when the child had no such file')
})

t.test('--signal takes a name or a number, as kill(1) does', async t => {
  for (const signal of ['15', 'TERM', 'SIGTERM', 'term']) {
    const r = cli(['run', '--json', '--signal', signal, '--timeout', '100ms', 'sleep', '10'])
    t.equal(r.exitCode, 124, `--signal ${signal}: timed out`)
    t.equal(JSON.parse(r.stdout.toString()).signal, 'SIGTERM', `--signal ${signal}: the child got SIGTERM`)
  }
})

t.test('stdio is inherited by default', async t => {
  const r = cli(['run', '--', 'sh', '-c', 'cat; echo to-err >&2'], { input: 'piped in\n' })
  t.equal(r.stdout.toString(), 'piped in\n')
  t.equal(r.stderr.toString(), 'to-err\n')
  const merged = cli(['run', '--merge-stderr', '--', 'sh', '-c', 'echo a; echo b >&2'])
  t.equal(merged.stdout.toString(), 'a\nb\n')
  t.equal(merged.stderr.toString(), '')
})

t.test('--rlimit, --env, --cwd, --setsid reach the child', async t => {
  const dir = tempDir(t)
  const r = cli(['run', '--rlimit', 'nofile=64:128', '--rlimit', 'as=2G', '--env', 'TH_X=y z', '--cwd', dir, '--setsid', '--',
    'sh', '-c', 'ulimit -Sn; ulimit -Hn; ulimit -v; echo "$TH_X"; pwd; ps -o sid= -p $$; echo $$'])
  const lines = r.stdout.toString().trim().split('\n').map(s => s.trim())
  t.same(lines.slice(0, 5), ['64', '128', String(2 * 1024 * 1024), 'y z', fs.realpathSync(dir)])
  t.equal(lines[5], lines[6], 'new session: sid is the child pid')
  t.match(cli(['run', '--', 'sh', '-c', 'echo $HOME']).stdout.toString(), process.env.HOME!, 'environment inherited')
})

t.test('--usage reports resource usage on stderr', async t => {
  const r = cli(['run', '--usage', '--', 'sh', '-c', 'echo hi'])
  t.equal(r.exitCode, 0)
  t.equal(r.stdout.toString(), 'hi\n')
  const report = r.stderr.toString()
  t.match(report, /^tileharness: wall \d+\.\d{3} s, user \d+\.\d{3} s, sys \d+\.\d{3} s, max RSS [\d.]+ (KiB|MiB)$/m)
  t.match(report, /^tileharness: page faults \d+ minor, \d+ major; context switches \d+ voluntary, \d+ involuntary; fs \d+ in, \d+ out/m)
})

t.test('--json keeps all of a large output, on either stream, and the child is not held up', async t => {
  // More than a pipe and a stream's buffer hold: a capture read only as fast as an unread stream
  // was drained stopped at 16 KiB, and the child blocked on its next write until killed.
  for (const [stream, redirect] of [['stdout', ''], ['stderr', ' >&2']] as const) {
    for (const launcher of ['fork', 'posix_spawn']) {
      const r = cli(['run', '--json', '--launcher', launcher, '--timeout', '30s', '--', 'sh', '-c', `head -c 3000000 /dev/zero${redirect}; echo done${redirect}`])
      t.equal(r.exitCode, 0, `${stream}, ${launcher}: the child finished (${r.stderr.toString().trim() || 'no message'})`)
      const result = JSON.parse(r.stdout.toString())
      const bytes = Buffer.from(result[stream], 'base64')
      t.same({ length: bytes.length, tail: bytes.subarray(-5).toString(), timedOut: result.timedOut, waitDelayExpired: result.waitDelayExpired },
        { length: 3000005, tail: 'done\n', timedOut: false, waitDelayExpired: false }, `${stream}, ${launcher}: every byte kept`)
    }
  }
})

t.test('--json prints the whole result', async t => {
  const r = cli(['run', '--json', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'])
  t.equal(r.exitCode, 3)
  const result = JSON.parse(r.stdout.toString())
  t.equal(Buffer.from(result.stdout, 'base64').toString(), 'out\n')
  t.equal(Buffer.from(result.stderr, 'base64').toString(), 'err\n')
  t.equal(result.exitCode, 3)
  t.equal(result.launcher, 'fork', "'auto' with killOnExit (the default): the fork path, for its death signal")
  for (const key of ['pid', 'signal', 'coreDumped', 'timedOut', 'spawnError', 'diagnostic', 'rusage', 'durationMs']) t.ok(key in result, key)
  t.type(result.rusage.maxRSS, 'number')
  const timedOut = JSON.parse(cli(['run', '--json', '--timeout', '50ms', 'sleep', '5']).stdout.toString())
  t.equal(timedOut.timedOut, true)
  t.equal(timedOut.diagnostic, 'Child timed out')
})

t.test('--kill-after: TERM at the deadline, KILL after the delay', async t => {
  const r = cli(['run', '--timeout', '1s', '--kill-after', '200ms', '--setsid', '--json', '--',
    'sh', '-c', 'trap "" TERM; while :; do sleep 0.05; done'])
  t.equal(r.exitCode, 124)
  const result = JSON.parse(r.stdout.toString())
  t.equal(result.signal, 'SIGKILL')
  const gentle = JSON.parse(cli(['run', '--timeout', '100ms', '--kill-after', '5s', '--json', 'sleep', '10']).stdout.toString())
  t.equal(gentle.signal, 'SIGTERM', 'a child that obeys TERM ends with TERM')
})

t.test('signals sent to tileharness are forwarded to the child', async t => {
  const run = startChild({ file: process.execPath, args: [MAIN, 'run', '--', 'sh', '-c', 'echo $$; exec sleep 100'], timeout: 60000 })
  const pid = await new Promise<number>(resolve => run.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))))
  run.kill('SIGTERM')
  const r = await run.result
  t.equal(r.exitCode, 143, 'exit 128+15: the child died of the forwarded SIGTERM')
  t.ok(await eventually(() => processState(pid) !== 'alive'))
})

// SIGUSR1 opened Node's inspector on 127.0.0.1:9229 ("Debugger listening on ws://..."): anyone who
// may signal the process could attach and run code as its user. run forwards it (and USR2) to the
// child; bench ignores it.
t.test('SIGUSR1 opens no inspector: run forwards it to the child, bench ignores it', async t => {
  const run = startChild({ file: process.execPath, args: [MAIN, 'run', '--', 'sh', '-c', 'echo $$; exec sleep 100'], env: nodeChildEnv(), timeout: 60000 })
  await new Promise<void>(resolve => run.stdout.once('data', () => resolve()))
  run.kill('SIGUSR1')
  const r = await run.result
  t.equal(r.exitCode, 138, 'exit 128+10: the child died of the forwarded SIGUSR1')
  t.notMatch(r.stderr.toString(), /Debugger listening/, 'no inspector')

  const dir = tempDir(t)
  const started = path.join(dir, 'started'), gate = path.join(dir, 'gate')
  const bench = startChild({
    file: process.execPath, args: [MAIN, 'bench', '-n', '1', '--warmup', '0', '--shell', `touch ${started}; while [ ! -e ${gate} ]; do sleep 0.01; done`],
    env: nodeChildEnv(), stdout: 'ignore', stderr: 'pipe', timeout: 60000,
  })
  t.ok(await eventually(() => fs.existsSync(started)), 'the run has started')
  bench.kill('SIGUSR1')
  // Taken by the process (no longer pending: /proc's ShdPnd and SigPnd masks) before the run may
  // end, so that what it does with it is decided while bench still runs (a Node that opens its
  // inspector says so on stderr before it exits).
  const usr1 = 1n << 9n
  const pending = () => fs.readFileSync(`/proc/${bench.pid}/status`, 'utf8').split('\n').filter(l => /^(ShdPnd|SigPnd):/.test(l)).some(l => (BigInt('0x' + l.split(/\s+/)[1]) & usr1) !== 0n)
  t.ok(await eventually(() => !pending()), 'bench took the signal')
  fs.writeFileSync(gate, '')
  const b = await bench.result
  t.same([b.exitCode, b.signal], [0, null], 'bench went on and finished')
  t.notMatch(b.stderr.toString(), /Debugger listening/, 'no inspector')
})

t.test("run measures by default: --json and --usage give the child's own max RSS, as GNU time does", async t => {
  const measured = JSON.parse(cli(['run', '--json', '--', '/bin/true']).stdout.toString())
  const plain = JSON.parse(cli(['run', '--json', '--no-measure', '--', '/bin/true']).stdout.toString())
  t.equal(measured.rusageSource, 'helper', 'measured by default')
  t.equal(plain.rusageSource, 'wait4', '--no-measure: wait4 as this process sees it')
  t.ok(plain.rusage.maxRSS > 20 * 1024, `unmeasured, max RSS is Node's own image (${plain.rusage.maxRSS} KiB)`)
  const gnu = spawnChildSync({ file: '/usr/bin/time', args: ['-f', '%M', '/bin/true'] })
  const skip = gnu.exitCode === 0 ? false : 'GNU time is not installed'
  t.test('within 2 MiB of GNU time for the same command', { skip }, async t => {
    const gnuKiB = Number(gnu.stderr.toString().trim().split('\n').pop())
    t.ok(Math.abs(measured.rusage.maxRSS - gnuKiB) <= 2048, `tileharness run ${measured.rusage.maxRSS} KiB, GNU time ${gnuKiB} KiB`)
  })
  const usage = cli(['run', '--usage', '--', '/bin/true'])
  t.match(usage.stderr.toString(), /max RSS/, '--usage reports it')
})

/** The highest CPU this process may run on (not CPU 0, where that is possible: a pin that changes something). */
const CPU = Number(/Cpus_allowed_list:\s*(?:.*[,-])?(\d+)\s*$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1])

t.test('--cpu pins the child (and through the measuring helper, the target)', async t => {
  for (const measure of [[], ['--no-measure']]) {
    const r = cli(['run', '--cpu', String(CPU), ...measure, '--', 'grep', 'Cpus_allowed_list', '/proc/self/status'], { stdout: 'pipe' })
    t.equal(r.exitCode, 0, r.stderr.toString())
    t.equal(r.stdout.toString(), `Cpus_allowed_list:\t${CPU}\n`, `${measure.join(' ') || 'measured'}: pinned to CPU ${CPU}`)
  }
  const bad = cli(['run', '--cpu', '2-1', '--', 'true'], { stdout: 'pipe', stderr: 'pipe' })
  t.equal(bad.exitCode, 125)
  t.match(bad.stderr.toString(), /^tileharness run: invalid --cpu '2-1' /)
  const offline = cli(['run', '--cpu', '1000', '--', 'true'], { stdout: 'pipe', stderr: 'pipe' })
  t.equal(offline.exitCode, 126, 'a CPU that is not there: the child could not be started')
  t.match(offline.stderr.toString(), /^tileharness run: failed to run 'true': cannot pin the child to CPUs 1000: /)
})
