// Pipes and stdio targets through every path (API × launcher × measure): real pipes drained while
// the child runs, input fed through a pipe, maxBuffer, the stderr merge, and every
// stdin/stdout/stderr target.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { eachPath, paths, processState, REPO_ROOT, tempDir } from '../helpers.js'
import { childPaths, nodeChildEnv, PACKAGE, runNodeScript } from '../reliability/helpers.js'

const MB = 1024 * 1024

t.test('pipes', t => eachPath(t, '', async (t, { run }) => {
  const big = await run({ file: 'head', args: ['-c', String(10 * MB), '/dev/zero'] })
  t.equal(big.stdout.length, 10 * MB, 'output far beyond the pipe buffer, no deadlock')
  t.equal(big.stdoutTruncated, false)

  const both = await run({
    file: 'sh', args: ['-c', `head -c ${4 * MB} /dev/zero; head -c ${4 * MB} /dev/zero >&2; echo tail`],
  })
  t.equal(both.stdout.length, 4 * MB + 5, 'stdout complete while stderr also fills')
  t.equal(both.stderr.length, 4 * MB, 'stderr complete')

  const input = Buffer.alloc(6 * MB, 'abcdefgh')
  const echoed = await run({ file: 'cat', input })
  t.ok(echoed.stdout.equals(input), 'input written and output read at the same time')

  const str = await run({ file: 'cat', input: 'héllo' })
  t.equal(str.stdout.toString(), 'héllo', 'string input is UTF-8')

  const ignored = await run({ file: 'true', input })
  t.equal(ignored.exitCode, 0, 'a child that never reads its input: no hang, no SIGPIPE in the parent')

  const empty = await run({ file: 'cat', input: '' })
  t.equal(empty.stdout.length, 0, 'empty input gives EOF at once')

  const out = await run({ file: 'sh', args: ['-c', 'cat; echo err >&2; exit 3'], input: 'in\n' })
  t.same([out.exitCode, out.stdout.toString(), out.stderr.toString(), out.spawnError], [3, 'in\n', 'err\n', null], 'input in, stdout and stderr out, the exit code')
}))

t.test('a grandchild holding the pipe never hangs the call', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', 'sleep 30 & echo $!; echo hi >&2'] })
  t.equal(r.exitCode, 0)
  t.equal(r.stderr.toString(), 'hi\n')
  const grandchild = Number(r.stdout.toString().trim())
  t.equal(processState(grandchild), 'alive', 'the grandchild still holds the pipe')
  t.ok(r.durationMs < 25000, 'returned when the child exited, not when the pipe closed')
  process.kill(grandchild, 'SIGKILL')
}))

t.test('maxBuffer truncates and flags, never kills', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', 'head -c 100000 /dev/zero; head -c 50 /dev/zero >&2; exit 3'], maxBuffer: 1000 })
  t.equal(r.stdout.length, 1000)
  t.equal(r.stdoutTruncated, true)
  t.equal(r.stderr.length, 50)
  t.equal(r.stderrTruncated, false)
  t.equal(r.exitCode, 3, 'the child ran to its own end')
  t.equal(r.signal, null)
  const zero = await run({ file: 'echo', args: ['x'], maxBuffer: 0 })
  t.equal(zero.stdout.length, 0)
  t.equal(zero.stdoutTruncated, true)
  const exact = await run({ file: 'head', args: ['-c', '1000', '/dev/zero'], maxBuffer: 1000 })
  t.equal(exact.stdoutTruncated, false, 'exactly maxBuffer bytes is not truncation')
}))

t.test('stderr merge', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', 'echo 1; echo 2 >&2; echo 3'], stderr: 'stdout' })
  t.equal(r.stdout.toString(), '1\n2\n3\n', 'one stream, in order')
  t.equal(r.stderr.length, 0)
  // Merged by dup2, not by opening the file twice: two opens with O_TRUNC would have separate
  // offsets and the second write would overwrite the first.
  const dir = tempDir(t)
  const file = path.join(dir, 'merged')
  await run({ file: 'sh', args: ['-c', 'echo aaaa; echo b >&2'], stdout: { path: file }, stderr: 'stdout' })
  t.equal(fs.readFileSync(file, 'utf8'), 'aaaa\nb\n')
  const fdLinks = await run({ file: 'sh', args: ['-c', 'readlink /proc/$$/fd/1 /proc/$$/fd/2'], stderr: 'stdout' })
  const [one, two] = fdLinks.stdout.toString().trim().split('\n')
  t.equal(one, two, 'fd 1 and fd 2 are the same pipe')
}))

t.test('stdin targets', t => eachPath(t, '', async (t, { run }) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'in.txt')
  fs.writeFileSync(file, 'from a file\n')
  const link0 = async (stdin: ChildSpec['stdin']) =>
    (await run({ file: 'sh', args: ['-c', 'readlink /proc/$$/fd/0 || echo closed'], stdin })).stdout.toString().trim()
  t.equal(await link0(undefined), '/dev/null', "default 'ignore' is /dev/null")
  t.equal(await link0('ignore'), '/dev/null')
  t.equal(await link0('closed'), 'closed', "'closed' leaves fd 0 closed")
  t.equal(await link0('inherit'), fs.readlinkSync('/proc/self/fd/0'), "'inherit' is the parent's fd 0")
  t.equal(await link0({ path: file }), file)
  t.equal((await run({ file: 'cat', stdin: { path: file } })).stdout.toString(), 'from a file\n')
  const fd = fs.openSync(file, 'r')
  t.teardown(() => fs.closeSync(fd))
  t.equal((await run({ file: 'cat', stdin: fd })).stdout.toString(), 'from a file\n', 'an fd number')
  t.equal((await run({ file: 'cat', stdin: 'ignore' })).stdout.length, 0, 'EOF from /dev/null')
}))

// durationMs is the child's lifetime, from its launch: a { path } target's open comes before it (a
// FIFO's open waits for a reader), and it counted, unmeasured, on both APIs: a `true` whose FIFO's
// reader came a second later lived 1,002 ms. The reader, a process of its own (the sync API holds
// this one), notes the monotonic time before it opens the FIFO; the launch can only follow that.
t.test('durationMs does not count the opening of a { path } target', t => eachPath(t, '', async (t, { run }) => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'fifo')
  const stamp = path.join(dir, 'stamp')
  t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
  const reader = startChild({
    file: process.execPath,
    args: ['-e', `const fs = require('fs'); setTimeout(() => { fs.writeFileSync(${JSON.stringify(stamp)}, String(process.hrtime.bigint())); const fd = fs.openSync(${JSON.stringify(fifo)}, 'r'); while (fs.readSync(fd, Buffer.alloc(64)) > 0); }, 300)`],
  })
  const r = await run({ file: 'true', stdout: { path: fifo } })
  const end = process.hrtime.bigint()
  t.equal((await reader.result).exitCode, 0, 'the reader opened the FIFO and read it to its end')
  t.equal(r.exitCode, 0)
  const sinceOpen = Number(end - BigInt(fs.readFileSync(stamp, 'utf8'))) / 1e6
  t.ok(r.durationMs <= sinceOpen, `durationMs ${r.durationMs.toFixed(1)} ms, within the ${sinceOpen.toFixed(1)} ms since the reader opened the FIFO`)
}))

t.test('stdout and stderr targets', t => eachPath(t, '', async (t, { run }) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'out.txt')
  await run({ file: 'echo', args: ['first'], stdout: { path: file } })
  await run({ file: 'echo', args: ['second'], stdout: { path: file, append: true } })
  t.equal(fs.readFileSync(file, 'utf8'), 'first\nsecond\n', 'path, then append')
  await run({ file: 'echo', args: ['third'], stdout: { path: file } })
  t.equal(fs.readFileSync(file, 'utf8'), 'third\n', 'path without append truncates')

  const errFile = path.join(dir, 'err.txt')
  await run({ file: 'sh', args: ['-c', 'echo oops >&2'], stderr: { path: errFile } })
  t.equal(fs.readFileSync(errFile, 'utf8'), 'oops\n')

  const fdFile = path.join(dir, 'fd.txt')
  const fd = fs.openSync(fdFile, 'w')
  await run({ file: 'sh', args: ['-c', 'echo to-fd; echo err-to-fd >&2'], stdout: fd, stderr: fd })
  fs.closeSync(fd)
  t.equal(fs.readFileSync(fdFile, 'utf8'), 'to-fd\nerr-to-fd\n', 'fd numbers for both')

  // The child reports where its fds 1 and 2 point through a file, since both are redirected.
  const report = path.join(dir, 'report')
  const ignoredOut = await run({
    file: 'sh', args: ['-c', `x=$(readlink /proc/$$/fd/1 /proc/$$/fd/2); echo "$x" > ${report}`], stdout: 'ignore', stderr: 'ignore',
  })
  t.equal(ignoredOut.exitCode, 0)
  t.same(fs.readFileSync(report, 'utf8').trim().split('\n'), ['/dev/null', '/dev/null'], "'ignore' is /dev/null")
  const inherited = await run({
    file: 'sh', args: ['-c', `x=$(readlink /proc/$$/fd/1 /proc/$$/fd/2); echo "$x" > ${report}`], stdout: 'inherit', stderr: 'inherit',
  })
  t.equal(inherited.exitCode, 0)
  t.same(fs.readFileSync(report, 'utf8').trim().split('\n'),
    [fs.readlinkSync('/proc/self/fd/1'), fs.readlinkSync('/proc/self/fd/2')], "'inherit' is the parent's fds")
  // Swapped fds: the fd shuffle must not clobber a source before it is used.
  const a = path.join(dir, 'a'), b = path.join(dir, 'b')
  const fa = fs.openSync(a, 'w'), fb = fs.openSync(b, 'w')
  await run({ file: 'sh', args: ['-c', 'echo A; echo B >&2'], stdout: fa, stderr: fb })
  await run({ file: 'sh', args: ['-c', 'echo C; echo D >&2'], stdout: fb, stderr: fa })
  fs.closeSync(fa); fs.closeSync(fb)
  t.equal(fs.readFileSync(a, 'utf8'), 'A\nD\n')
  t.equal(fs.readFileSync(b, 'utf8'), 'B\nC\n')
}))

t.test('a capture pipe grows to 1 MiB once its child has written 1 MiB, and not before', t => eachPath(t, '', async (t, { run }) => {
  // F_GETPIPE_SZ (1032) on the child's own stdout, after it wrote `bytes` through it.
  const pipeSize = (bytes: number) => run({
    file: 'python3',
    args: ['-c', `import fcntl, sys; sys.stdout.buffer.write(b"x" * ${bytes}); sys.stdout.flush(); print(fcntl.fcntl(1, 1032), file=sys.stderr)`],
  })
  const small = await pipeSize(1024)
  t.same([small.exitCode, small.stdout.length, small.stderr.toString().trim()], [0, 1024, '65536'], 'a small output keeps the default 64 KiB pipe (the user\'s pipe budget is not spent on it)')
  const large = await pipeSize(3 * MB)
  t.same([large.exitCode, large.stdout.length, large.stderr.toString().trim()], [0, 3 * MB, String(MB)], 'a large one gets a 1 MiB pipe: fewer wake-ups per byte')
}))

// A daemon often closes its fds 0-2. The posix_spawn path then opened the cwd's directory fd as 0
// (or 2), which the child's stdio dup2s overwrote before its fchdir: exec ENOTDIR, exit 126, the
// program never run, where the fork path ran it.
t.test('cwd from a process whose fds 0 and 2 are closed: every path runs the child there', async (t) => {
  const runs = runNodeScript<Array<{ label: string; exitCode: number | null; spawnError: unknown; stdout: string }>>(`
    ${childPaths()}
    const fs = require('node:fs')
    fs.closeSync(0)
    fs.closeSync(2)
    ;(async () => {
      const runs = []
      for (const path of PATHS) {
        const r = await runPath(path, { file: 'sh', args: ['-c', 'pwd; [ -e /proc/$$/fd/3 ] && echo fd 3 open || echo only 0-2'], cwd: '/tmp', stdin: 'ignore', stderr: 'ignore' })
        runs.push({ label: path.label, exitCode: r.exitCode, spawnError: r.spawnError && r.spawnError.stage + '/' + r.spawnError.code, stdout: r.stdout.toString() })
      }
      console.log(JSON.stringify(runs))
    })()
  `)
  t.equal(runs.length, paths().length)
  for (const r of runs) t.same([r.exitCode, r.spawnError, r.stdout], [0, null, '/tmp\nonly 0-2\n'], r.label)
})

// Node makes its stdio pipes non-blocking (process.stdout touched is enough), and O_NONBLOCK lives
// on the description a child inheriting the fd shares: a child writing more than the pipe holds
// failed with EAGAIN ("head: error writing 'standard output': Resource temporarily
// unavailable"). Cleared for the child, as libuv clears it in child_process's children.
t.test("an inherited or given stdio fd is blocking in the child, though Node made it non-blocking", async (t) => {
  const script = `
    ${childPaths()}
    process.stdout; process.stderr  // libuv sets O_NONBLOCK on both pipes
    const fs = require('node:fs')
    const nonblock = (fd) => (parseInt(fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8').match(/flags:\\s*([0-7]+)/)[1], 8) & 0o4000) !== 0
    ;(async () => {
      const runs = []
      for (const path of PATHS) for (const [how, spec] of [['inherit', { stdout: 'inherit', stderr: 'inherit' }], ['fd', { stdout: 1, stderr: 2 }]]) {
        const before = [nonblock(1), nonblock(2)]
        const r = await runPath(path, { file: 'sh', args: ['-c', 'grep flags /proc/$$/fdinfo/1 >&2; grep flags /proc/$$/fdinfo/2 >&2; head -c 300000 /dev/zero'], stdin: 'ignore', ...spec })
        runs.push({ label: path.label + ' ' + how, before, exitCode: r.exitCode })
      }
      fs.writeSync(3, JSON.stringify(runs))
    })()
  `
  const dir = tempDir(t)
  const report = path.join(dir, 'report.json')
  const fd = fs.openSync(report, 'w')
  // The node child's stdout a pipe read slowly: all 300,000 bytes must arrive; its stderr carries
  // the children's flags lines.
  const r = spawnChildSync({
    file: process.execPath, args: ['-e', script.replaceAll(PACKAGE, JSON.stringify(REPO_ROOT))],
    env: nodeChildEnv(), stdout: 'pipe', stderr: 'pipe', fds: { 3: fd }, timeout: 120000,
  })
  fs.closeSync(fd)
  t.equal(r.exitCode, 0, r.stderr.toString())
  const runs = JSON.parse(fs.readFileSync(report, 'utf8')) as Array<{ label: string; before: boolean[]; exitCode: number }>
  t.equal(runs.length, paths().length * 2)
  t.same(runs[0].before, [true, true], "Node's stdio pipes were non-blocking before the first spawn")
  for (const run of runs) t.equal(run.exitCode, 0, `${run.label}: head wrote all it had`)
  t.equal(r.stdout.length, 300000 * runs.length, 'every byte arrived')
  const flags = r.stderr.toString().match(/flags:\s*[0-7]+/g) ?? []
  t.equal(flags.length, runs.length * 2)
  t.same(flags.filter((line) => (parseInt(line.split(/\s+/)[1], 8) & 0o4000) !== 0), [], "no child's fd 1 or 2 was non-blocking")
})
