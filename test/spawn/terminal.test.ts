// terminal: a new pseudo-terminal as the child's controlling terminal on fds 0-2, through every
// path that takes it ('auto' and 'fork', sync, async and startChild, measured and not; a forced
// 'posix_spawn' is refused). What the child writes is result.stdout as a terminal shows it (\r\n
// line ends); startChild's terminal stream and resize() are the interactive side. Every wait is
// on an event (a line the child printed, a result), never on a sleep.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChild, spawnChildSync, startChild, type ChildProcess, type ChildSpec } from '../../lib/index.js'
import { childPids, eachPath, eventually, MEASURE, openFds, processState, script, tempDir, withRoomToStart } from '../helpers.js'

const TERMINAL_LAUNCHERS = ['auto', 'fork'] as const

/** Lines of a terminal's output, its \r\n line ends undone. */
function lines(out: Buffer | string): string[] {
  return out.toString().split('\r\n').filter(line => line !== '')
}

/** Everything startChild's terminal stream gives, and a way to wait for a pattern in it. */
function watch(child: ChildProcess): { text(): string; until(pattern: RegExp): Promise<boolean> } {
  let seen = ''
  child.terminal!.on('data', (chunk: Buffer) => { seen += chunk.toString() })
  return { text: () => seen, until: pattern => eventually(() => pattern.test(seen), 20000) }
}

t.test('the child\'s fds 0-2 are a new terminal, its controlling one, in a session it leads', t => eachPath(t, '', async (t, { run }) => {
  // fields 5 and 6 of /proc/$$/stat: the shell's process group and session.
  const r = await run({ file: 'sh', args: ['-c', 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-terminals; : > /dev/tty && echo controlling; echo $$ $(cut -d" " -f5,6 /proc/$$/stat)'], terminal: true })
  t.equal(r.exitCode, 0, r.diagnostic)
  const [tty, all, controlling, ids] = lines(r.stdout)
  t.match(tty, /^\/dev\/pts\/\d+$/, 'tty prints a /dev/pts path')
  t.equal(all, 'all-terminals', 'test -t 0, 1 and 2')
  t.equal(controlling, 'controlling', '/dev/tty opens: the terminal is the controlling one')
  t.same(ids?.split(' ').map(Number), [r.pid, r.pid, r.pid], 'the child is the program itself, and leads its group and session')
  t.equal(r.stderr.length, 0, 'stderr is empty: it went to the terminal')
  t.equal(r.launcher, 'fork')
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('stty size prints the size asked for', t => eachPath(t, '', async (t, { run }) => {
  const rows: Array<[ChildSpec['terminal'], string]> = [[true, '24 80'], [{ columns: 132, rows: 50 }, '50 132'], [{ columns: 1, rows: 65535 }, '65535 1']]
  for (const [terminal, size] of rows) {
    const r = await run({ file: 'stty', args: ['size'], terminal })
    t.same(lines(r.stdout), [size], `terminal ${JSON.stringify(terminal)}`)
  }
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('a program that asks isatty colours its output on a terminal, and not without one', t => {
  const dir = tempDir(t)
  script(dir, 'runme', '#!/bin/sh\n')
  return eachPath(t, '', async (t, { run }) => {
    const coloured = await run({ file: 'ls', args: ['--color=auto', dir], terminal: true })
    t.match(coloured.stdout.toString(), /\x1b\[[0-9;]*m/, 'ls --color=auto: an ESC[ sequence on a terminal')
    t.match(coloured.stdout.toString(), /runme/)
    const plain = await run({ file: 'ls', args: ['--color=auto', dir] })
    t.equal(plain.stdout.toString(), 'runme\n', 'no ESC[ sequence without one')
  }, { launchers: [...TERMINAL_LAUNCHERS] })
})

t.test('the exact exit status and signal of the child itself', t => eachPath(t, '', async (t, { run }) => {
  const exited = await run({ file: 'sh', args: ['-c', 'echo $$; exit 7'], terminal: true })
  t.same([exited.exitCode, exited.signal], [7, null])
  t.same(lines(exited.stdout), [String(exited.pid)], 'the pid reported is the program\'s, not a wrapper\'s')
  const signaled = await run({ file: 'sh', args: ['-c', 'kill -SEGV $$'], terminal: true, rlimits: { core: 0 } })
  t.same([signaled.exitCode, signaled.signal, signaled.spawnError], [null, 'SIGSEGV', null])
  t.equal(signaled.rusageSource, exited.rusageSource, 'rusage as for any child')
  t.ok(signaled.durationMs >= 0 && exited.rusage.maxRSS > 0, 'durationMs and rusage are there')
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('a child that closes its terminal fds before it exits is not hung up', t => eachPath(t, '', async (t, { run }) => {
  // The master reads EIO once the fds are closed; closing the master then would hang the terminal
  // up and SIGHUP the child, still running. The child's own sleep holds the window open.
  // The exit status is 3 plus echo's own: 4 would say sh's write of "bye" to the terminal failed;
  // 3 without "bye" that the terminal took it and the harness lost it.
  for (const input of [undefined, 'typed\n']) {
    const r = await run({ file: 'sh', args: ['-c', 'echo bye; s=$?; exec 0<&- 1>&- 2>&-; sleep 0.3; exit $((3 + s))'], terminal: true, input })
    const seen = { stdout: r.stdout.toString(), exitCode: r.exitCode, pid: r.pid, durationMs: r.durationMs }
    t.same([r.exitCode, r.signal], [3, null], `input ${JSON.stringify(input)}: the child's own exit status, no SIGHUP`, seen)
    t.match(r.stdout.toString(), /bye\r\n/, 'what the child wrote', seen)
    // Typed before or after the child closed its fds (a race), the input is echoed: the master is
    // read to the end after the exit, not given up at the first EIO.
    if (input) t.match(r.stdout.toString(), /typed\r\n/, 'the terminal\'s echo of the input', seen)
  }
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('a deadline kills the child and its whole group', t => eachPath(t, '', async (t, { run }) => {
  // The grandchild ignores SIGHUP (inherited from the trap): the hangup its session leader's death
  // sends would otherwise end it, and the group kill would not be what is tested.
  const r = await withRoomToStart(run, { file: 'sh', args: ['-c', 'trap "" HUP; sleep 100 & echo $!; wait'], terminal: true, timeout: 300 })
  t.same([r.timedOut, r.signal], [true, 'SIGKILL'])
  const grandchild = Number(lines(r.stdout)[0])
  t.ok(grandchild > 0, 'the grandchild started before the deadline')
  t.ok(await eventually(() => processState(grandchild) !== 'alive'), `grandchild ${grandchild} is gone`)
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('input is typed into the terminal, then ^D', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'cat', input: 'hello\nno newline', terminal: true, timeout: 20000 })
  t.same([r.exitCode, r.timedOut], [0, false], 'cat read EOF from the ^D')
  // The terminal's echo and cat's copy are the same text, interleaved as the line discipline and
  // cat happen to run (the echo is flushed after cat may have been woken): each twice, in all.
  const out = r.stdout.toString()
  t.same([out.match(/hello\r\n/g)?.length, out.match(/no newline/g)?.length, out.length], [2, 2, 2 * 'hello\r\nno newline'.length], 'the echo and what cat wrote back', { out })
}, { launchers: [...TERMINAL_LAUNCHERS] }))

t.test('spawnChildSync reads the terminal while it waits: a child writing a lot never blocks', async t => {
  for (const measure of MEASURE) {
    const r = spawnChildSync({ file: 'head', args: ['-c', '3000000', '/dev/zero'], terminal: true, measure, timeout: 60000 })
    t.same([r.exitCode, r.timedOut, r.stdout.length], [0, false, 3000000], `measure ${measure}`)
    const cut = spawnChildSync({ file: 'head', args: ['-c', '3000000', '/dev/zero'], terminal: true, measure, maxBuffer: 1000, timeout: 60000 })
    t.same([cut.exitCode, cut.stdout.length, cut.stdoutTruncated], [0, 1000, true], `measure ${measure}: maxBuffer`)
  }
})

// startChild: the terminal stream and resize(), per launcher and measured or not.
const startPaths = TERMINAL_LAUNCHERS.flatMap(launcher => MEASURE.map(measure => ({ launcher, measure, label: `${launcher}${measure ? ' measured' : ''}` })))

t.test('startChild: a cat echo round trip through the terminal stream; end() is ^D', async t => {
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'cat', terminal: true, launcher, measure })
    t.equal(child.stdin, null, `${label}: no stdin stream`)
    const out = watch(child)
    child.terminal!.write('ping\n')
    t.ok(await out.until(/ping\r\nping\r\n/), `${label}: the echo and cat's copy came back`, { seen: out.text() })
    child.terminal!.end()
    const r = await child.result
    t.same([r.exitCode, r.signal], [0, null], `${label}: cat read EOF from end()'s ^D`)
    t.equal(r.stdout.toString(), out.text(), `${label}: the result holds what the stream gave`)
    let stdout = ''
    child.stdout.on('data', chunk => { stdout += chunk })
    await new Promise(resolve => child.stdout.once('end', resolve))
    t.equal(stdout, '', `${label}: the stdout stream stays empty`)
  }
})

t.test('startChild: what is typed after the child closed its terminal fds is still echoed into the result', async t => {
  // The master reads EIO once the child's fds are closed; the harness reads it on, to the end, at
  // the exit. The child exits on a ^C typed after the input: the line discipline acts on it only
  // after echoing what came before, so the echo is at the master by the exit. (Input typed into a
  // terminal nobody holds is echoed by the kernel on its own time: a child that exited on another
  // event could be gone first.) noflsh: the ^C must not discard the echo not yet read.
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'sh', args: ['-c', "trap 'exit 3' INT; stty noflsh; echo ready; exec 0<&- 1>&- 2>&-; while :; do sleep 10; done"], terminal: true, launcher, measure })
    const out = watch(child)
    t.ok(await out.until(/ready\r\n/), `${label}: the child started`)
    t.ok(await eventually(() => !fs.existsSync(`/proc/${child.pid}/fd/1`)), `${label}: the child closed its fds`)
    await new Promise(resolve => setImmediate(resolve))  // a loop turn: the harness has seen the EIO
    await new Promise<void>(resolve => child.terminal!.write('late\n', () => resolve()))
    child.terminal!.write('\x03')
    const r = await child.result
    t.same([r.exitCode, r.signal], [3, null], `${label}: the child's own exit, on the ^C`)
    t.match(r.stdout.toString(), /ready\r\n[^]*late\r\n/, `${label}: the echo of the late input is in the result`, { stdout: r.stdout.toString() })
    t.equal(out.text(), r.stdout.toString(), `${label}: and in the terminal stream`)
  }
})

t.test('startChild: with input, the input is typed first (then ^D), and the stream\'s writes follow it', async t => {
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'sh', args: ['-c', 'while read line; do echo "got $line"; done; echo eof; read more; echo "then $more"'], terminal: true, input: 'one\ntwo\n', launcher, measure })
    const out = watch(child)
    child.terminal!.write('three\n')
    t.ok(await out.until(/then three\r\n/), `${label}: the input, its ^D, then the write`, { seen: out.text() })
    t.match(out.text(), /got one\r\n[^]*got two\r\n[^]*eof\r\n/, label)
    t.equal((await child.result).exitCode, 0, label)
  }
})

t.test('startChild: a write whose buffer is detached before it reaches the terminal is dropped, and nothing breaks', async t => {
  for (const { launcher, measure, label } of startPaths) {
    for (const typing of [false, true]) {
      // typing: the write waits behind `input` being typed (the addon keeps it); else it goes at once.
      const child = startChild({ file: 'sh', args: ['-c', 'while read line; do echo "got $line"; done; echo eof; read more; echo "then $more"'], terminal: true, input: typing ? 'one\n' : undefined, launcher, measure })
      const out = watch(child)
      const lost = Buffer.alloc(5, 'lost\n') // its own ArrayBuffer (not the shared pool's), so it can be detached
      child.terminal!.cork()
      child.terminal!.write(lost)
      structuredClone(lost.buffer, { transfer: [lost.buffer] }) // detached while the write is queued
      t.equal(lost.length, 0, `${label}${typing ? ', typing' : ''}: precondition, the buffer is detached`)
      child.terminal!.uncork()
      if (!typing) child.terminal!.write('\x04')
      child.terminal!.write('kept\n')
      t.ok(await out.until(/then kept\r\n/), `${label}${typing ? ', typing' : ''}: the next write still arrives`, { seen: out.text() })
      t.notMatch(out.text(), /lost/, `${label}${typing ? ', typing' : ''}: nothing of the detached write was typed`)
      t.equal((await child.result).exitCode, 0, label)
    }
  }
})

t.test('startChild: resize() delivers SIGWINCH and the new size', async t => {
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'sh', args: ['-c', 'trap "stty size" WINCH; echo ready; while :; do sleep 1 & wait $!; done'], terminal: { columns: 80, rows: 24 }, launcher, measure })
    const out = watch(child)
    t.ok(await out.until(/ready\r\n/), `${label}: the trap is set`)
    t.equal(child.resize(120, 40), true, `${label}: resize`)
    t.ok(await out.until(/40 120\r\n/), `${label}: the trap printed the new size`, { seen: out.text() })
    t.equal(child.resize(100, 30), true)
    t.ok(await out.until(/30 100\r\n/), `${label}: and again`, { seen: out.text() })
    child.kill()
    const r = await child.result
    t.equal(r.signal, 'SIGKILL')
    t.equal(child.resize(90, 20), false, `${label}: false once the child has exited`)
  }
  const plain = startChild({ file: 'true' })
  t.equal(plain.resize(80, 24), false, 'false without a terminal')
  t.equal(plain.terminal, null)
  await plain.result
})

t.test('startChild: kill() reaches a grandchild in the child\'s group', async t => {
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'sh', args: ['-c', 'trap "" HUP; sleep 100 & echo grandchild $!; wait'], terminal: true, launcher, measure })
    const out = watch(child)
    t.ok(await out.until(/grandchild \d+\r\n/), `${label}: the grandchild started`)
    const grandchild = Number(/grandchild (\d+)/.exec(out.text())![1])
    t.equal(child.kill('SIGTERM'), true)
    t.equal((await child.result).signal, 'SIGTERM', label)
    t.ok(await eventually(() => processState(grandchild) !== 'alive'), `${label}: grandchild ${grandchild} is gone`)
  }
})

t.test('startChild: a child that stops reading: writes wait (backpressure), and nothing breaks', async t => {
  for (const { launcher, measure, label } of startPaths) {
    const child = startChild({ file: 'sh', args: ['-c', 'echo ready; exec sleep 100'], terminal: true, launcher, measure })
    const out = watch(child)
    t.ok(await out.until(/ready/), `${label}: started`)
    const line = Buffer.alloc(1000, 'x')
    line[999] = 0x0a
    let written = 0
    let full = false
    // The terminal's buffers are bounded: write() says false long before 64 MiB.
    while (written < 64 * 1024 * 1024) {
      written += line.length
      if (!child.terminal!.write(line)) { full = true; break }
    }
    t.ok(full, `${label}: write() returned false after ${written} bytes`)
    let drained = false
    child.terminal!.once('drain', () => { drained = true })
    const finished = new Promise(resolve => child.terminal!.write('late\n', resolve))
    child.kill()
    const r = await child.result
    t.equal(r.signal, 'SIGKILL', `${label}: the result settles`)
    await finished
    t.pass(`${label}: the waiting write's callback ran (drained: ${drained})`)
  }
})

t.test('no fd left open and no zombie after 1,000 terminals', async t => {
  const isTerminal = (fd: string) => {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`)
      return target === '/dev/ptmx' || target.startsWith('/dev/pts/')
    } catch { return false }
  }
  const before = openFds()
  const terminalsBefore = before.filter(isTerminal)
  const ways: Array<() => Promise<unknown>> = [
    async () => spawnChildSync({ file: 'true', terminal: true }),
    () => spawnChild({ file: 'sh', args: ['-c', 'echo hi'], terminal: true }),
    () => spawnChild({ file: 'true', terminal: true, measure: true }),
    async () => {
      const child = startChild({ file: 'sh', args: ['-c', 'echo hi'], terminal: true })
      child.terminal!.resume()
      return child.result
    },
    async () => {
      // Destroyed at once, before the child exits.
      const child = startChild({ file: 'sh', args: ['-c', 'echo hi'], terminal: true })
      child.terminal!.destroy()
      return child.result
    },
    async () => {
      const child = startChild({ file: 'cat', terminal: true })
      child.terminal!.end('x\n')
      child.terminal!.resume()
      return child.result
    },
    async () => {
      const child = startChild({ file: 'sleep', args: ['100'], terminal: true })
      child.kill()
      return child.result
    },
    async () => spawnChildSync({ file: 'sleep', args: ['100'], terminal: true, timeout: 1 }),
  ]
  for (let i = 0; i < 1000; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, k) => ways[(i + k) % ways.length]!()))
  }
  t.same(openFds(), before, 'the same fds as before')
  t.same(openFds().filter(isTerminal), terminalsBefore, 'no fd on /dev/ptmx or /dev/pts/*')
  t.ok(await eventually(() => childPids().every(pid => processState(pid) !== 'zombie')), 'no zombie')
})

t.test('a bad terminal value, or one with what it decides itself, is a typed error naming the field', async t => {
  const rows: Array<[string, ChildSpec, 'TypeError' | 'RangeError', string, string]> = [
    ['a string', { file: 'true', terminal: 'yes' as never }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'terminal'],
    ['a number', { file: 'true', terminal: 1 as never }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'terminal'],
    ['an array', { file: 'true', terminal: [80, 24] as never }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'terminal'],
    ['no rows', { file: 'true', terminal: { columns: 80 } as never }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'terminal.rows'],
    ['columns a string', { file: 'true', terminal: { columns: '80', rows: 24 } as never }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'terminal.columns'],
    ['columns 0', { file: 'true', terminal: { columns: 0, rows: 24 } }, 'RangeError', 'ERR_OUT_OF_RANGE', 'terminal.columns'],
    ['rows 65536', { file: 'true', terminal: { columns: 80, rows: 65536 } }, 'RangeError', 'ERR_OUT_OF_RANGE', 'terminal.rows'],
    ['columns 1.5', { file: 'true', terminal: { columns: 1.5, rows: 24 } }, 'RangeError', 'ERR_OUT_OF_RANGE', 'terminal.columns'],
    ['rows NaN', { file: 'true', terminal: { columns: 80, rows: NaN } }, 'RangeError', 'ERR_OUT_OF_RANGE', 'terminal.rows'],
    ['an unknown key', { file: 'true', terminal: { columns: 80, rows: 24, cols: 1 } as never }, 'TypeError', 'ERR_INVALID_ARG_VALUE', 'terminal.cols'],
    ['with stdin', { file: 'true', terminal: true, stdin: 'inherit' }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', 'terminal'],
    ['with stdout', { file: 'true', terminal: true, stdout: 'ignore' }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', 'terminal'],
    ['with stderr', { file: 'true', terminal: true, stderr: 'stdout' }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', 'terminal'],
    ['with setsid: false', { file: 'true', terminal: true, setsid: false }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', 'terminal'],
    ['with processGroup', { file: 'true', terminal: true, processGroup: true }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', 'terminal'],
    ["with launcher 'posix_spawn'", { file: 'true', terminal: true, launcher: 'posix_spawn' }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', "launcher 'posix_spawn'"],
    ["with launcher 'posix_spawn', measured", { file: 'true', terminal: true, launcher: 'posix_spawn', measure: true }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', "launcher 'posix_spawn'"],
  ]
  for (const [name, spec, kind, code, field] of rows) {
    const expected = { name: kind, code, field }
    t.throws(() => spawnChildSync(spec), expected, `${name}: spawnChildSync`)
    await t.rejects(spawnChild(spec), expected, `${name}: spawnChild`)
    t.throws(() => startChild(spec), expected, `${name}: startChild`)
  }
  // The defaults themselves, and "no terminal", are fine.
  const fine = spawnChildSync({ file: 'true', terminal: true, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', setsid: true, processGroup: false })
  t.equal(fine.exitCode, 0, 'the stdio defaults and setsid: true go with a terminal')
  t.equal(spawnChildSync({ file: 'true', terminal: false }).exitCode, 0, 'terminal: false is none')
  t.equal(spawnChildSync({ file: 'true', terminal: null }).exitCode, 0, 'terminal: null is none')

  const child = startChild({ file: 'sleep', args: ['100'], terminal: true })
  t.throws(() => child.resize(0, 24), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'columns' }, 'resize(0, 24)')
  t.throws(() => child.resize(80, 70000), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'rows' }, 'resize(80, 70000)')
  t.throws(() => child.resize('80' as never, 24), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'columns' }, "resize('80', 24)")
  child.kill()
  await child.result
})

t.test('an exec failure with a terminal is reported as without one', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: path.join(tempDir(t), 'missing'), terminal: true })
  t.same([r.exitCode, r.spawnError?.stage, r.spawnError?.code], [127, 'exec', 'ENOENT'])
}, { launchers: [...TERMINAL_LAUNCHERS] }))
