// What `compile` and `bench` refuse before they spend any work, found by a hostile round: each of
// these had destroyed a file, lost the output, hung, or crashed the command.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { CLI_MAIN as MAIN, tempDir } from '../helpers.js'
import { MINIMAL_PTX, skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

const run = (cwd: string, args: string[], extra: Partial<ChildSpec> = {}) => {
  const r = spawnChildSync({ file: process.execPath, args: [MAIN, ...args], cwd, timeout: 120000, ...extra })
  return { ...r, out: r.stdout.toString(), err: r.stderr.toString() }
}

t.test("compile: '-' as the output is the same file as an input when standard output is that file", async t => {
  const dir = tempDir(t)
  const source = path.join(dir, 'a.ptx')
  for (const [label, args, extra] of [
    ['compile a.ptx -o - >> a.ptx', ['compile', 'a.ptx', '-o', '-'], {}],
    ['compile - -o - < a.ptx >> a.ptx', ['compile', '-', '-o', '-'], { stdin: { path: source } }],
  ] as const) {
    fs.writeFileSync(source, MINIMAL_PTX)
    const r = run(dir, [...args], { ...extra, stdout: { path: source, append: true } })
    t.equal(r.exitCode, 2, `${label}: refused`)
    t.match(r.err, /^tileharness compile: input file '(a\.ptx|-)' is the same as output file '-'\n/, `${label}: says why`)
    t.equal(fs.readFileSync(source, 'utf8'), MINIMAL_PTX, `${label}: the source is untouched`)
  }
})

t.test('compile -o /dev/fd/N: a descriptor that is the process\'s own plumbing is refused, not written', skipWithoutPtxas, async t => {
  // None of 3..24 is given to the command: each is either not open or Node's and libuv's own (the
  // event loop's epoll set and eventfds, libuv's signal and wake-up pipes), which had taken the
  // object (lost), hung on a full pipe, or crashed the process (SIGSEGV), depending on N.
  const dir = tempDir(t)
  for (let fd = 3; fd <= 24; fd++) {
    const r = run(dir, ['compile', '--example', 'vadd', '-o', `/dev/fd/${fd}`], { timeout: 60000 })
    t.same([r.exitCode, r.signal, r.timedOut], [2, null, false], `/dev/fd/${fd}: refused (${r.err.trim()})`)
    t.match(r.err, new RegExp(`^tileharness compile: cannot write '/dev/fd/${fd}': `), `/dev/fd/${fd}: says why`)
  }
  // One that was given is written: fd 5 on a file.
  const given = path.join(dir, 'given.o')
  const r = run(dir, ['compile', '--example', 'vadd', '-o', '/dev/fd/5'], { fds: { 5: fs.openSync(given, 'w') } })
  t.equal(r.exitCode, 0, `a given /dev/fd/5 is written (${r.err.trim()})`)
  t.ok(fs.statSync(given).size > 0, 'the object is in the file given as fd 5')
  // And a pipe given with both its ends (Python's pass_fds=(r, w)), whose giver reads it.
  const piped = spawnChildSync({
    file: 'python3',
    args: ['-c', `import os, subprocess, sys
r, w = os.pipe()
p = subprocess.Popen([sys.argv[1], sys.argv[2], 'compile', '--example', 'vadd', '-o', '/dev/fd/%d' % w], pass_fds=(r, w), stdout=subprocess.DEVNULL)
os.close(w)
got = b''
while True:
    chunk = os.read(r, 65536)
    if not chunk: break
    got += chunk
print(p.wait(), len(got))`, process.execPath, MAIN],
    cwd: dir,
    timeout: 120000,
  })
  if (piped.spawnError?.code === 'ENOENT') t.skip('python3 is not installed: no pipe given with both ends')
  else t.equal(piped.stdout.toString().trim(), `0 ${fs.statSync(given).size}`, `a pipe given with both ends is written, and its giver reads the object (${piped.stderr.toString().trim()})`)
})

t.test('compile -o - onto /dev/null opened read-write (stdio: ignore, subprocess.DEVNULL, 1<>/dev/null) is written', skipWithoutPtxas, async t => {
  const dir = tempDir(t)
  const r = spawnChildSync({ file: 'sh', args: ['-c', 'exec "$0" "$1" compile --example vadd -o - 1<>/dev/null', process.execPath, MAIN], cwd: dir, timeout: 120000 })
  t.equal(r.exitCode, 0, `not refused as if it had been closed (${r.stderr.toString().trim()})`)
})

t.test('compile: an input that never ends is refused past 1 GiB', async t => {
  const dir = tempDir(t)
  const sparse = path.join(dir, 'huge.ptx')
  fs.writeFileSync(sparse, '')
  fs.truncateSync(sparse, 2 ** 30 + 1)
  for (const input of [sparse, '/dev/zero']) {
    const r = run(dir, ['compile', input, '-o', 'z.o'])
    t.equal(r.exitCode, 2, `${input}: refused`)
    t.equal(r.err, `tileharness compile: cannot read '${input}': it is over 1 GiB, more than any PTX module\n`, `${input}: says why`)
  }
  t.notOk(fs.existsSync(path.join(dir, 'z.o')), 'no output')
})

t.test('bench: the --compare baseline is replaced by --json alone', async t => {
  const dir = tempDir(t)
  const base = path.join(dir, 'base.json')
  const made = run(dir, ['bench', '-n', '3', '--warmup', '0', '--json', base, 'true'])
  t.equal(made.exitCode, 0, `a baseline (${made.err.trim()})`)
  const baseline = fs.readFileSync(base, 'utf8')
  for (const option of ['--output', '--markdown', '--csv']) {
    const r = run(dir, ['bench', '-n', '3', '--warmup', '0', '--compare', base, option, base, 'echo hi'])
    t.equal(r.exitCode, 125, `--compare F ${option} F: refused`)
    t.match(r.err, new RegExp(`^tileharness bench: --compare '${base}' and ${option} '${base}' are the same file \\(only --json may replace the baseline\\)\n`), `${option}: says why`)
    t.equal(fs.readFileSync(base, 'utf8'), baseline, `${option}: the baseline is untouched`)
  }
  const r = run(dir, ['bench', '-n', '3', '--warmup', '0', '--compare', base, '--json', base, 'true'])
  t.equal(r.exitCode, 0, '--compare F --json F: the new report replaces the baseline')
  t.not(fs.readFileSync(base, 'utf8'), baseline, 'it did')
})

t.test("bench: a --json '-' that is the --input file is refused", async t => {
  const dir = tempDir(t)
  const input = path.join(dir, 'input.txt')
  fs.writeFileSync(input, 'data\n')
  const r = run(dir, ['bench', '-n', '2', '--warmup', '0', '--input', input, '--json', '-', 'cat'], { stdout: { path: input, append: true } })
  t.equal(r.exitCode, 125, 'refused')
  t.match(r.err, /are the same file/, 'says why')
  t.equal(fs.readFileSync(input, 'utf8'), 'data\n', 'the input is untouched')
})

t.test('bench: a FIFO as --output or --input is not opened by the checks', async t => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'p')
  const made = spawnChildSync({ file: 'mkfifo', args: [fifo] })
  t.equal(made.exitCode, 0, 'mkfifo')
  // A reader that reads two runs' output, opening the FIFO again until it has both lines: the
  // checks' own open and close had been its first input (empty), and the second run then waited
  // for ever for a reader. (Two opens, `cat; cat`, raced: when the second run opened the FIFO
  // before the first cat saw EOF, that cat read both lines, and the second cat waited on in open
  // after its shell's timeout, a reader the next test's writer then paired with.)
  // An open that gives nothing (the checks') ends it, as it ended `cat`.
  const reader = startChild({ file: 'sh', args: ['-c', 'n=0; while [ $n -lt 2 ]; do m=$n; while read -r l; do echo "$l"; n=$((n+1)); done < "$0"; [ $n -gt $m ] || exit 3; done', fifo], timeout: 60000 })
  const r = run(dir, ['bench', '-n', '2', '--warmup', '0', '--output', fifo, 'echo hi'], { timeout: 60000 })
  t.same([r.exitCode, r.timedOut], [0, false], `--output FIFO: both runs wrote to it (${r.err.trim()})`)
  t.equal((await reader.result).stdout.toString(), 'hi\nhi\n', 'the reader got each run\'s output')
  // A writer waiting to give the run its input: the checks' open had paired with it and closed,
  // so the data went nowhere (the writer's EPIPE) and the run then waited for ever for a writer.
  const writer = startChild({ file: 'sh', args: ['-c', 'echo data > "$0"', fifo], timeout: 60000 })
  const out = path.join(dir, 'out.txt')
  const w = run(dir, ['bench', '-n', '1', '--warmup', '0', '--input', fifo, '--output', out, 'cat'], { timeout: 60000 })
  t.same([w.exitCode, w.timedOut], [0, false], `--input FIFO: the run read from it (${w.err.trim()})`)
  t.equal((await writer.result).exitCode, 0, 'the writer wrote')
  t.equal(fs.readFileSync(out, 'utf8'), 'data\n', 'and the run got what it wrote')
})

t.test('compile -o into an append-only directory gives the rename\'s reason', skipWithoutPtxas, async t => {
  const dir = tempDir(t)
  const sub = path.join(dir, 'append-only')
  fs.mkdirSync(sub)
  fs.writeFileSync(path.join(sub, 'x.o'), 'previous build')
  const chattr = spawnChildSync({ file: 'chattr', args: ['+a', sub] })
  if (chattr.exitCode !== 0) return t.skip(`chattr +a is not available here (${chattr.spawnError?.message ?? chattr.stderr.toString().trim()})`)
  t.teardown(() => { spawnChildSync({ file: 'chattr', args: ['-a', sub] }) })
  const r = run(dir, ['compile', '--example', 'vadd', '-o', 'append-only/x.o'])
  spawnChildSync({ file: 'chattr', args: ['-a', sub] })
  t.equal(r.exitCode, 5, 'the write failed')
  t.match(r.err, /^tileharness compile: cannot write 'append-only\/x\.o': operation not permitted \(EPERM\)\n/, "the rename's own reason, not the cleanup's")
  t.equal(fs.readFileSync(path.join(sub, 'x.o'), 'utf8'), 'previous build', 'the file is untouched')
})
