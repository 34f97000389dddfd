// `tileharness` itself, as a subprocess: --version, --help and `help [command]` on stdout with exit
// 0; a bad command line on stderr in coreutils' two lines ("...\nTry '...' for more information.")
// with the command's usage status, and nothing on stdout.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { COMMANDS, synopsis } from '../../lib/cli/commands.js'
import { CLI_MAIN as MAIN, REPO_ROOT } from '../helpers.js'
import { PTXAS } from '../fixtures/cuda/helpers.js'

const cli = (args: string[]) => {
  const r = spawnChildSync({ file: process.execPath, args: [MAIN, ...args], timeout: 60000 })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

t.test('--version: the package name and version', async t => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  t.same(cli(['--version']), { code: 0, out: `tileharness ${pkg.version}\n`, err: '' })
})

t.test('--help, -h and help: the list of commands on stdout, exit 0', async t => {
  const top = cli(['--help'])
  t.equal(top.code, 0)
  t.equal(top.err, '')
  t.match(top.out, /^usage: tileharness <command> \[options\]\n {7}tileharness help \[command\]\n {7}tileharness --version\n/)
  for (const name of [...Object.keys(COMMANDS), 'help']) t.match(top.out, new RegExp(`^ {2}${name} +\\S`, 'm'), `lists ${name}`)
  t.same(cli(['-h']), top, '-h is --help')
  t.same(cli(['help']), top, 'help is --help')
  // help lists itself as a command: asked about, it is this usage (it was "unknown command 'help'").
  t.same(cli(['help', 'help']), top, 'help help')
  t.same(cli(['help', '--help']), top, 'help --help')
})

// A write error on stdout other than EPIPE had exited 125 saying nothing (compile too, whose
// statuses are the Program's 0-5). Now coreutils' "write error", with the command's own status.
t.test('stdout that cannot be written: "write error", and the command\'s failure status', async t => {
  const full = (args: string[]) => {
    const r = spawnChildSync({ file: process.execPath, args: [MAIN, ...args], stdout: { path: '/dev/full' }, timeout: 60000 })
    return { code: r.exitCode, err: r.stderr.toString() }
  }
  t.same(full(['--help']), { code: 125, err: 'tileharness: write error: no space left on device (ENOSPC)\n' }, '--help')
  t.same(full(['run', '--json', 'true']), { code: 125, err: 'tileharness run: write error: no space left on device (ENOSPC)\n' }, 'run --json')
  t.same(full(['run', 'true']), { code: 0, err: '' }, 'run with nothing to write: the child\'s status')
  if (PTXAS !== null) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-full-'))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    t.same(full(['compile', '-o', path.join(dir, 'vadd.o')]), { code: 5, err: 'tileharness compile: write error: no space left on device (ENOSPC)\n' }, 'compile: status 5')
    t.same(full(['compile', '-o', '-']), { code: 5, err: "tileharness compile: cannot write '-': no space left on device (ENOSPC)\n" }, 'compile -o -: said once, as the object it could not write')
  }
})

t.test("each command's usage: CMD --help, CMD -h and help CMD print the same, on stdout", async t => {
  for (const [name, command] of Object.entries(COMMANDS)) {
    const { usage } = await command.load()
    const help = cli([name, '--help'])
    t.same(help, { code: 0, out: usage + '\n', err: '' }, `${name} --help`)
    t.match(help.out, new RegExp(`^usage: tileharness ${name} `), `${name}: starts with its synopsis`)
    const [first, ...rest] = synopsis(usage).split('\n')
    const indent = ' '.repeat(`tileharness ${name} `.length)
    t.ok(first.startsWith(`tileharness ${name} [`) && rest.every(line => line.startsWith(`${indent}[`)), `${name}: the synopsis's lines line up`)
    t.match(help.out, /^ {2}-h, --help +print this and exit$/m, `${name}: documents -h, --help`)
    t.same(cli([name, '-h']), help, `${name} -h`)
    t.same(cli(['help', name]), help, `help ${name}`)
  }
  // Options are read in order, as getopt does: --help after a good option still prints the usage.
  t.equal(cli(['run', '--timeout', '5s', '--help']).code, 0, 'run --timeout 5s --help')
  t.equal(cli(['bench', '-n', '3', '--help']).code, 0, 'bench -n 3 --help')
  t.equal(cli(['compile', '-O', '1', '-h']).code, 0, 'compile -O 1 -h')
  // After run's command, --help belongs to the command.
  const passed = cli(['run', '--', 'sh', '-c', 'echo "$1"', 'sh', '--help'])
  t.same(passed, { code: 0, out: '--help\n', err: '' }, 'run -- CMD --help: the argument is the child\'s')
})

t.test('a bad command line: two lines on stderr, the usage status, nothing on stdout', async t => {
  const top = "Try 'tileharness --help' for more information.\n"
  const rows: Array<[string[], number, string]> = [
    [[], 125, `tileharness: no command given\n${top}`],
    [['frobnicate'], 125, `tileharness: unknown command 'frobnicate'\n${top}`],
    [['--bogus'], 125, `tileharness: unknown option --bogus\n${top}`],
    [['help', 'frobnicate'], 125, `tileharness help: unknown command 'frobnicate'\n${top}`],
    [['help', 'run', 'bench'], 125, `tileharness help: extra operand 'bench'\n${top}`],
    [['run', '--bogus', 'true'], 125, "tileharness run: unknown option --bogus\nTry 'tileharness run --help' for more information.\n"],
    [['bench', '-x'], 125, "tileharness bench: unknown option -x\nTry 'tileharness bench --help' for more information.\n"],
    // compile's usage status is the Program's configuration status.
    [['compile', '--bogus'], 2, "tileharness compile: unknown option --bogus\nTry 'tileharness compile --help' for more information.\n"],
    [['compile', '--bogus', '--help'], 2, "tileharness compile: unknown option --bogus\nTry 'tileharness compile --help' for more information.\n"],
  ]
  for (const [args, code, err] of rows) {
    t.same(cli(args), { code, out: '', err }, `tileharness ${args.join(' ')}`)
  }
})

t.test('a command is loaded only when it runs: without a loadable addon, the top level still answers', async t => {
  // TILEHARNESS_ADDON names the addon file to load; a missing one fails every command that spawns.
  // Without NODE_OPTIONS: under check:asan it carries a preload that would put the addon back.
  const { NODE_OPTIONS: _, ...env } = process.env
  const broken = (args: string[]) => {
    const r = spawnChildSync({ file: process.execPath, args: [MAIN, ...args], env: { ...env, TILEHARNESS_ADDON: '/nonexistent/tileharness.node' }, timeout: 60000 })
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  t.same(broken(['--version']), { code: 0, out: `tileharness ${pkg.version}\n`, err: '' }, '--version')
  t.same(broken(['--help']), cli(['--help']), '--help')
  t.same(broken(['frobnicate']).code, 125, 'a usage error at the top level')
  // The command itself says, in one line, that it cannot start, with its own failure status.
  const cannot = (name: string) => `tileharness ${name}: cannot load the command: Cannot find module '/nonexistent/tileharness.node'\n`
  t.same(broken(['run', '--', 'true']), { code: 125, out: '', err: cannot('run') }, 'run')
  t.same(broken(['bench', 'true']), { code: 125, out: '', err: cannot('bench') }, 'bench')
  t.same(broken(['compile']), { code: 5, out: '', err: cannot('compile') }, 'compile')
  t.same(broken(['help', 'run']), { code: 125, out: '', err: cannot('run') }, 'help run')
})

// An argument that is not UTF-8: process.argv has it decoded with U+FFFD for the bytes that are
// not, so `-o $'\xff.o'` wrote the file named U+FFFD.o (replacing another file that has that name),
// `$'\xfe.ptx'` was "no such file", and `run -- echo $'\xfe'` passed on other bytes. Such an argument
// is now refused, shown as a shell quotes it; a name that really holds U+FFFD is used as given.
// (The bytes go through sh's printf: this harness's own argv is strings.)
t.test('an argument that is not UTF-8: refused as a usage error, naming it; a real U+FFFD is kept', async t => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-main-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const other = path.join(dir, '\uFFFD.o')
  fs.writeFileSync(other, 'mine\n')
  const viaShell = (command: string) => {
    const r = spawnChildSync({ file: 'sh', args: ['-c', command, 'sh', process.execPath, MAIN], cwd: dir, timeout: 60000 })
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
  }
  for (const [command, name, status, shown] of [
    [`"$1" "$2" compile -o "$(printf 'a\\377.o')"`, 'compile', 2, "$'a\\xff.o'"],
    [`"$1" "$2" run -- echo "$(printf "x\\376'")"`, 'run', 125, "$'x\\xfe\\x27'"],
  ] as const) {
    t.same(viaShell(command), {
      code: status, out: '',
      err: `tileharness ${name}: argument ${shown} is not valid UTF-8: it cannot be used unchanged (as a file name, or passed on to a program)\nTry 'tileharness ${name} --help' for more information.\n`,
    }, `${name}: refused, status ${status}`)
  }
  t.equal(fs.readFileSync(other, 'utf8'), 'mine\n', 'the file whose name is U+FFFD.o is kept')
  t.same(viaShell(`"$1" "$2" run -- echo "$(printf '\\357\\277\\275')"`), { code: 0, out: '\uFFFD\n', err: '' }, 'a real U+FFFD (its UTF-8 bytes) is an argument like any other')
})
