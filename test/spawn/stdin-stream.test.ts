// startChild's stdin: 'pipe': a Writable the caller writes to while the child runs, with
// backpressure, end() for EOF, EPIPE handed to the write that met it, and the pipe released when
// the child is gone. Every row runs through both launch paths, measured and not.
import fs from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import t from 'tap'
import { spawnChild, spawnChildSync, startChild } from '../../lib/index.js'
import { baseline } from '../reliability/helpers.js'
import { LAUNCHERS, MEASURE, eventually, tempDir } from '../helpers.js'

const STARTS = LAUNCHERS.flatMap(launcher => MEASURE.map(measure => ({ launcher, measure, label: `${launcher}${measure ? ' measured' : ''}` })))

/** The next `n` characters the stream gives (left flowing, so it can be read again). */
function readChars(stream: NodeJS.ReadableStream, n: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = ''
    const onData = (chunk: string | Buffer) => {
      got += chunk.toString()
      if (got.length < n) return
      stream.off('data', onData)
      stream.off('end', onEnd)
      resolve(got)
    }
    const onEnd = () => reject(new Error(`the stream ended after ${JSON.stringify(got)}`))
    stream.on('data', onData)
    stream.once('end', onEnd)
  })
}

/** What a write to a child that has stopped reading or has gone is told. */
const TOLD = new Set(['EPIPE', 'ECANCELED', 'ERR_STREAM_DESTROYED'])

/** Lets libuv write whatever the pipe will take now: a few turns of the loop. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise(resolve => setImmediate(resolve))
}

t.test('an echo round trip through cat: write, read the echo, write again, end', async t => {
  for (const { launcher, measure, label } of STARTS) {
    const child = startChild({ file: 'cat', stdin: 'pipe', launcher, measure })
    t.ok(child.stdin, `${label}: a stdin stream`)
    const stdout = child.stdout.setEncoding('utf8')
    child.stdin!.write('hello\n')
    t.equal(await readChars(stdout, 6), 'hello\n', `${label}: the first line came back`)
    child.stdin!.write('world\n')
    t.equal(await readChars(stdout, 6), 'world\n', `${label}: and the second, after it`)
    child.stdin!.end()
    const r = await child.result
    t.equal(r.exitCode, 0, `${label}: cat saw EOF and exited 0`)
    t.equal(r.stdout.toString(), 'hello\nworld\n', `${label}: the result carries both`)
    t.ok(child.stdin!.destroyed, `${label}: stdin released with the child`)
  }
})

t.test('backpressure: a child that does not read holds the writes back in this process', async t => {
  for (const { launcher, measure, label } of STARTS) {
    const child = startChild({ file: 'sleep', args: ['100'], stdin: 'pipe', launcher, measure })
    const chunk = Buffer.alloc(64 * 1024, 7)
    let accepted = true
    let written = 0
    const errors: string[] = []
    for (let i = 0; i < 32; i++) {
      accepted = child.stdin!.write(chunk, error => {
        if (error) errors.push((error as NodeJS.ErrnoException).code ?? error.message)
        else written += chunk.length
      }) && accepted
    }
    await turns()
    t.equal(accepted, false, `${label}: write() said to wait`)
    // The pipe takes what its buffer holds (64 KiB by default, at most 1 MiB); the rest waits here.
    t.ok(written <= 1024 * 1024, `${label}: ${written} bytes reached the pipe, no more than it holds`)
    t.ok(child.stdin!.writableLength >= 32 * chunk.length - 1024 * 1024, `${label}: ${child.stdin!.writableLength} bytes wait in the stream`)
    t.ok(child.kill(), `${label}: killed`)
    const r = await child.result
    t.equal(r.signal, 'SIGKILL', `${label}: the child died of the kill, not of its input`)
    await turns()
    t.ok(child.stdin!.destroyed, `${label}: the waiting writes were dropped with the stream`)
  }
})

t.test("'drain' comes as the child reads: 16 MiB through cat to /dev/null", async t => {
  for (const { launcher, measure, label } of STARTS) {
    const child = startChild({ file: 'cat', stdin: 'pipe', stdout: 'ignore', launcher, measure })
    const chunk = Buffer.alloc(256 * 1024, 1)
    let drains = 0
    for (let i = 0; i < 64; i++) {
      if (!child.stdin!.write(chunk)) {
        await once(child.stdin!, 'drain')
        drains++
      }
    }
    child.stdin!.end()
    const r = await child.result
    t.equal(r.exitCode, 0, `${label}: cat read it all`)
    t.ok(drains > 0, `${label}: waited for 'drain' ${drains} times`)
  }
})

t.test('a child that stops reading: EPIPE goes to the writes, no error is thrown', async t => {
  let uncaught: unknown = null
  const onUncaught = (error: unknown) => { uncaught = error }
  process.on('uncaughtException', onUncaught)
  t.teardown(() => { process.off('uncaughtException', onUncaught) })
  for (const { launcher, measure, label } of STARTS) {
    const child = startChild({ file: 'head', args: ['-c', '10'], stdin: 'pipe', stdout: 'ignore', launcher, measure })
    const codes: string[] = []
    const big = Buffer.alloc(1024 * 1024, 2)
    for (let i = 0; i < 64; i++) child.stdin!.write(big, error => { codes.push((error as NodeJS.ErrnoException | null)?.code ?? 'ok') })
    const r = await child.result
    await turns()
    t.equal(r.exitCode, 0, `${label}: head exited 0 after its 10 bytes`)
    t.equal(codes.length, 64, `${label}: every write was answered`)
    // The first MiB may fit in the pipe (grown to 1 MiB) before head exits. Of the rest, which
    // comes first is the kernel's: the pipe losing its reader (EPIPE, handed on to the writes
    // queued behind), or the child's exit, which closes the pipe under the writes still queued
    // (ECANCELED for the one libuv holds, ERR_STREAM_DESTROYED for the ones the stream holds).
    t.ok(codes.slice(1).every(code => TOLD.has(code)), `${label}: the writes past the pipe's size were told (${[...new Set(codes)].join(', ')})`)
    t.ok(child.stdin!.destroyed, `${label}: stdin closed`)
  }
  t.equal(uncaught, null, 'nothing was thrown from nowhere')
})

t.test('a grandchild holding stdin open does not hold the writes: the child\'s exit cancels them', async t => {
  const before = baseline()
  for (const { launcher, measure, label } of STARTS) {
    // The shell leaves a sleep behind with its stdin (the pipe: given explicitly, since a
    // background job's stdin is otherwise /dev/null) and exits without reading: the pipe keeps a
    // reader that never reads, so no write can fail with EPIPE.
    const child = startChild({
      file: 'sh', args: ['-c', 'exec 3<&0; sleep 100 <&3 3<&- >/dev/null 2>&1 & echo $!'], stdin: 'pipe', stdout: 'pipe', launcher, measure,
    })
    const codes: string[] = []
    const big = Buffer.alloc(1024 * 1024, 3)
    for (let i = 0; i < 8; i++) child.stdin!.write(big, error => { codes.push((error as NodeJS.ErrnoException | null)?.code ?? 'ok') })
    const r = await child.result
    const sleeper = Number(r.stdout.toString().trim())
    t.teardown(() => { try { process.kill(sleeper, 'SIGKILL') } catch {} })
    await turns()
    t.equal(r.exitCode, 0, `${label}: the shell exited`)
    t.equal(codes.length, 8, `${label}: every write was answered`)
    t.ok(codes.slice(1).every(code => code === 'ECANCELED' || code === 'ERR_STREAM_DESTROYED'),
      `${label}: what the pipe could not take was cancelled when the child was reaped (${[...new Set(codes)].join(', ')})`)
    t.ok(child.stdin!.destroyed, `${label}: stdin closed`)
    t.doesNotThrow(() => process.kill(sleeper, 0), `${label}: while the grandchild still holds the pipe`)
    process.kill(sleeper, 'SIGKILL')
  }
  await before.check(t)
})

// The write the pipe holds when the child is reaped, bigger than the pipe: most of it never went
// out, and it was told success (a destroyed socket answers its pending write with no error). The
// ones behind it were told, and so was it only when it had not yet been passed to the pipe.
t.test('a write only part of which the pipe took when the child is reaped: ECANCELED, not success', async t => {
  for (const { launcher, measure, label } of STARTS) {
    const child = startChild({
      file: 'sh', args: ['-c', 'exec 3<&0; sleep 100 <&3 3<&- >/dev/null 2>&1 & echo $!'], stdin: 'pipe', stdout: 'pipe', launcher, measure,
    })
    const codes: string[] = []
    for (let i = 0; i < 2; i++) child.stdin!.write(Buffer.alloc(8 << 20, 4), error => { codes.push((error as NodeJS.ErrnoException | null)?.code ?? 'ok') })
    const r = await child.result
    const sleeper = Number(r.stdout.toString().trim())
    t.teardown(() => { try { process.kill(sleeper, 'SIGKILL') } catch {} })
    await turns()
    t.same(codes, ['ECANCELED', 'ECANCELED'], `${label}: 8 MiB into a pipe of at most 1 MiB that nobody reads: neither write went out whole`)
  }
})

// Writes and end() made while a { path } target is still being opened wait for the child. When the
// launch is given up (the deadline, kill()), the child never comes: their callbacks were never
// called, so whatever awaited them waited for ever.
t.test('writes and end() waiting for a child whose launch is given up: each is told', async t => {
  const dir = tempDir(t)
  for (const [how, extra] of [['deadline', { timeout: 100 }], ['kill()', {}]] as const) {
    const fifo = path.join(dir, `never-${how === 'kill()' ? 'kill' : how}`)
    t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
    const child = startChild({ file: 'cat', stdin: 'pipe', stdout: { path: fifo }, ...extra })
    const told: string[] = []
    const answer = (what: string) => (error?: Error | null) => { told.push(`${what}: ${(error as NodeJS.ErrnoException | null)?.code ?? 'ok'}`) }
    child.stdin!.write('a', answer('write a'))
    child.stdin!.write('b', answer('write b'))
    child.stdin!.end(answer('end'))
    if (how === 'kill()') child.kill()
    const r = await child.result
    t.equal(r.spawnError?.stage, 'open', `${how}: the launch was given up while opening`)
    t.ok(await eventually(() => told.length === 3, 5000), `${how}: every callback was called (${told.join('; ') || 'none'})`)
    t.ok(told.every(line => /: (ECANCELED|ERR_STREAM_DESTROYED)$/.test(line)), `${how}: each with an error (${told.join('; ')})`)
  }
})

t.test('writes made before the child exists wait for it (stdout to a FIFO being opened)', async t => {
  const dir = tempDir(t)
  for (const { launcher, measure, label } of STARTS) {
    const fifo = path.join(dir, `out-${label.replace(/ /g, '-')}`)
    t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
    // The child is started only once its stdout FIFO is open, i.e. once a reader opens the other end.
    const child = startChild({ file: 'cat', stdin: 'pipe', stdout: { path: fifo }, launcher, measure })
    t.equal(child.pid, 0, `${label}: not started yet`)
    child.stdin!.end('early\n')
    const reader = fs.createReadStream(fifo, { encoding: 'utf8' })
    let text = ''
    for await (const chunk of reader) text += chunk
    const r = await child.result
    t.equal(text, 'early\n', `${label}: the early write reached the child`)
    t.equal(r.exitCode, 0, `${label}: exit 0`)
  }
})

t.test("stdin: 'pipe' elsewhere: no stream, and the child reads EOF", async t => {
  const sync = spawnChildSync({ file: 'cat', stdin: 'pipe' })
  t.same([sync.exitCode, sync.stdout.toString()], [0, ''], 'spawnChildSync: EOF at once')
  const async = await spawnChild({ file: 'cat', stdin: 'pipe' })
  t.same([async.exitCode, async.stdout.toString()], [0, ''], 'spawnChild: EOF at once')
  const withInput = startChild({ file: 'cat', input: 'given' })
  t.equal(withInput.stdin, null, 'startChild with input: the input is the stdin, no stream')
  t.equal((await withInput.result).stdout.toString(), 'given')
  const ignored = startChild({ file: 'true' })
  t.equal(ignored.stdin, null, 'startChild without a stdin pipe: no stream')
  await ignored.result
  t.throws(() => startChild({ file: 'cat', stdin: 'pipe', input: 'x' }), { code: 'ERR_INCOMPATIBLE_OPTION_PAIR' }, 'input and stdin: the same refusal as before')
})

t.test('no fd is left behind by 300 children with a stdin stream, ended or not', async t => {
  const before = baseline()
  const runs: Array<Promise<unknown>> = []
  for (let i = 0; i < 300; i++) {
    const child = startChild({ file: 'cat', stdin: 'pipe', stdout: 'ignore', launcher: i % 2 ? 'fork' : 'posix_spawn' })
    if (i % 3 === 0) child.stdin!.end('x')
    else if (i % 3 === 1) child.stdin!.write('y')
    if (i % 3 !== 0) child.kill()
    runs.push(child.result)
  }
  await Promise.all(runs)
  await before.check(t)
})
