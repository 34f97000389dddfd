// Status decoding: the raw decoder's table, and real signals through every path (API × launcher ×
// measure).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { decodeWaitStatus, signalDescription, signalName, signalNumber, startChild } from '../../lib/index.js'
import { eachPath, tempDir } from '../helpers.js'

t.test('decodeWaitStatus table', async t => {
  const rows: Array<[number, unknown]> = [
    [0, { kind: 'exited', exitCode: 0 }],
    [0x0100, { kind: 'exited', exitCode: 1 }],
    [0x7f00, { kind: 'exited', exitCode: 127 }],
    [0xff00, { kind: 'exited', exitCode: 255 }],
    [9, { kind: 'signaled', signal: 'SIGKILL', signalNumber: 9, coreDumped: false }],
    [0x8b, { kind: 'signaled', signal: 'SIGSEGV', signalNumber: 11, coreDumped: true }],
    [0x86, { kind: 'signaled', signal: 'SIGABRT', signalNumber: 6, coreDumped: true }],
    [15, { kind: 'signaled', signal: 'SIGTERM', signalNumber: 15, coreDumped: false }],
    [0x137f, { kind: 'stopped', signal: 'SIGSTOP', signalNumber: 19 }],
    [0xffff, { kind: 'continued' }],
  ]
  for (const [status, want] of rows) t.same(decodeWaitStatus(status), want, `0x${status.toString(16)}`)
})

t.test('decodeWaitStatus rejects what is not a status', async t => {
  const bad: Array<[unknown, string, string]> = [
    [-1, 'RangeError', 'ERR_OUT_OF_RANGE'],
    [1.5, 'RangeError', 'ERR_OUT_OF_RANGE'],
    [NaN, 'RangeError', 'ERR_OUT_OF_RANGE'],
    [2 ** 33, 'RangeError', 'ERR_OUT_OF_RANGE'],
    ['0', 'TypeError', 'ERR_INVALID_ARG_TYPE'],
    [null, 'TypeError', 'ERR_INVALID_ARG_TYPE'],
  ]
  for (const [value, name, code] of bad) {
    t.throws(() => decodeWaitStatus(value as number), { name, code, message: /status/ }, String(value))
  }
})

t.test('signal table', async t => {
  t.equal(signalName(11), 'SIGSEGV')
  t.equal(signalNumber('SIGTERM'), 15)
  t.equal(signalNumber('TERM'), 15)
  t.equal(signalNumber('SIGNOPE'), undefined)
  t.match(signalName(34), /^SIGRT/)
})

t.test('the signal helpers refuse a wrong kind of argument, naming it', async t => {
  const bad: Array<[string, () => unknown, string, string, RegExp]> = [
    ['signalNumber(Symbol())', () => signalNumber(Symbol('SIGTERM') as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^name must be a string \(received symbol Symbol\(SIGTERM\)\)/],
    ['signalNumber(15)', () => signalNumber(15 as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^name must be a string \(received number 15\)/],
    ["signalName('x')", () => signalName('x' as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^signal must be a number \(received string "x"\)/],
    ['signalName(1.5)', () => signalName(1.5), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be a non-negative integer \(received number 1.5\)/],
    ['signalName(-1)', () => signalName(-1), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be a non-negative integer/],
    ['signalDescription({})', () => signalDescription({} as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^signal must be a number \(received an object\)/],
    ["signalDescription('11')", () => signalDescription('11' as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^signal must be a number/],
    ['signalDescription(NaN)', () => signalDescription(NaN), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be a non-negative integer/],
    // Past INT_MAX (kill and strsignal take an int) no platform has a signal: 'SIG1e+21' named none.
    ['signalName(1e21)', () => signalName(1e21), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be at most 2147483647 \(received number 1e\+21\)/],
    ['signalDescription(1e21)', () => signalDescription(1e21), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be at most 2147483647/],
    ['signalName(2 ** 31)', () => signalName(2 ** 31), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be/],
    ['signalDescription(Number.MAX_SAFE_INTEGER)', () => signalDescription(Number.MAX_SAFE_INTEGER), 'RangeError', 'ERR_OUT_OF_RANGE', /^signal must be/],
  ]
  for (const [name, call, type, code, message] of bad) t.throws(call, { name: type, code, message }, name)
  // Well typed but no signal: what each gives for a name or number the table does not have.
  t.equal(signalNumber('SIGNOPE'), undefined, 'an unknown name: undefined')
  t.equal(signalName(32), 'SIG32', 'a number with no name: SIG<n>')
  t.equal(signalDescription(99), 'Unknown signal 99', "a number with no signal: strsignal's text")
  t.equal(signalName(2 ** 31 - 1), 'SIG2147483647', 'the largest int: still SIG<n>')
  t.equal(signalDescription(2 ** 31 - 1), 'Unknown signal 2147483647', 'the largest int: still Unknown signal <n>')
})

t.test('real-time signals by their offset from either end', async t => {
  const min = signalNumber('SIGRTMIN')!
  const max = signalNumber('SIGRTMAX')!
  t.ok(min > 0 && max > min, `SIGRTMIN ${min}, SIGRTMAX ${max}`)
  for (let n = 0; n <= max - min; n++) {
    t.equal(signalNumber(`SIGRTMAX-${n}`), max - n, `SIGRTMAX-${n}`)
    t.equal(signalNumber(`RTMAX-${n}`), max - n, `RTMAX-${n}`)
    t.equal(signalNumber(`SIGRTMIN+${n}`), min + n, `SIGRTMIN+${n}`)
    // Named one way, the C library's: SIGRTMIN+n, and SIGRTMAX; the name reads back as the number.
    const name = signalName(min + n)
    t.equal(name, n === 0 ? 'SIGRTMIN' : n === max - min ? 'SIGRTMAX' : `SIGRTMIN+${n}`, `signalName(${min + n})`)
    t.equal(signalNumber(name), min + n, `${name} reads back`)
  }
  // Past the range from either end, and the forms that are no offset: no signal.
  for (const name of [`SIGRTMAX-${max - min + 1}`, `SIGRTMIN+${max - min + 1}`, 'SIGRTMIN-1', 'SIGRTMAX+1', 'SIGRTMAX-', 'SIGRTMAX-x']) {
    t.equal(signalNumber(name), undefined, name)
  }
})

t.test('kill and killSignal take SIGRTMAX-n', async t => {
  const want = signalName(signalNumber('SIGRTMAX')! - 1)
  const c = startChild({ file: 'sleep', args: ['30'] })
  t.equal(c.kill('SIGRTMAX-1'), true, 'kill sent it')
  t.equal((await c.result).signal, want, `the child died of ${want}`)
  const d = startChild({ file: 'sleep', args: ['30'], killSignal: 'RTMAX-2' })
  d.kill()
  t.equal((await d.result).signal, signalName(signalNumber('SIGRTMAX')! - 2), 'killSignal RTMAX-2 is the default kill')
  const e = startChild({ file: 'sleep', args: ['30'] })
  t.throws(() => e.kill('SIGRTMAX-31'), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^signal must be SIGRTMIN\+n or SIGRTMAX-n with n from 0 to 30/ }, 'an offset past SIGRTMIN')
  e.kill('SIGKILL')
  t.equal((await e.result).signal, 'SIGKILL')
})

const signalRows: Array<[string, string, string]> = [
  ['TERM', 'SIGTERM', 'Terminated'],
  ['KILL', 'SIGKILL', 'Killed'],
  ['INT', 'SIGINT', 'Interrupt'],
  ['USR1', 'SIGUSR1', 'User defined signal 1'],
  ['PIPE', 'SIGPIPE', 'Broken pipe'],
]

for (const [sig, name, text] of signalRows) t.test(`kill -${sig}: the signal, strsignal's text`, t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', `kill -${sig} $$`] })
  t.equal(r.exitCode, null, 'exitCode null')
  t.equal(r.signal, name, 'signal')
  t.equal(r.coreDumped, false, 'no core')
  t.equal(r.diagnostic, text, "diagnostic is strsignal's text")
  t.equal(r.spawnError, null)
  t.equal(r.timedOut, false)
}))

t.test('core dumps', t => eachPath(t, '', async (t, { run, launcher }) => {
  const dir = tempDir(t)
  const pattern = fs.readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim()
  // posix_spawn cannot set rlimits, so there the child raises its own soft limit.
  const dumped = launcher === 'fork'
    ? await run({ file: 'sh', args: ['-c', 'kill -SEGV $$'], cwd: dir, rlimits: { core: 'unlimited' } })
    : await run({ file: 'sh', args: ['-c', 'ulimit -c unlimited; kill -SEGV $$'], cwd: dir })
  t.equal(dumped.signal, 'SIGSEGV')
  t.equal(dumped.coreDumped, true, `core written (core_pattern ${JSON.stringify(pattern)})`)
  t.equal(dumped.diagnostic, 'Segmentation fault (core dumped)')
  const none = await run({ file: 'sh', args: ['-c', 'ulimit -c 0; kill -SEGV $$'], cwd: dir })
  t.equal(none.signal, 'SIGSEGV')
  t.equal(none.exitCode, null)
  t.equal(none.coreDumped, false)
  t.equal(none.diagnostic, 'Segmentation fault')
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { force: true })
}))
