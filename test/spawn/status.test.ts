// Status decoding: the raw decoder's table, and real signals through every path (API × launcher ×
// measure).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { decodeWaitStatus, signalName, signalNumber } from '../../lib/index.js'
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
