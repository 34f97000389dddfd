// The signal the harness takes to interrupt an open it has given up on (native/interrupt.h),
// SIGRTMAX - 1: installed only when first needed, and never changing what that signal does to the
// process otherwise. Each case is a node child of its own:
// - before any give-up the signal is not caught; after one it is, and the same signal sent by
//   kill(2) still ends the process, by that signal, as the default does;
// - a handler installed before the harness's (a library's; the preloaded shim's here) still gets
//   every kill(2) of that signal, and none of the harness's own interrupts, which still end the
//   opens given up on.
import path from 'node:path'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { signalName, signalNumber, spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, tempDir } from '../helpers.js'
import { buildFixtureLibrary, nodeChildEnv, PACKAGE } from './helpers.js'

const SIGNAL = signalNumber('SIGRTMAX-1')!

const script = (dir: string) => `
  const fs = require('node:fs')
  const path = require('node:path')
  const { execFileSync } = require('node:child_process')
  const { spawnChild, spawnChildSync } = require(${PACKAGE})
  const SIGNAL = ${SIGNAL}
  const caught = () => (BigInt('0x' + /SigCgt:\\s*([0-9a-f]+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) >> BigInt(SIGNAL - 1)) & 1n ? true : false
  const openers = () => fs.readdirSync('/proc/self/task').filter(t => { try { return /^tileharness-(opn|rel)$/.test(fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()) } catch { return false } }).length
  const waitFor = async (pred) => {
    for (let i = 0; i < 1000 && !pred(); i++) await new Promise(r => setTimeout(r, 10))
    return pred()
  }
  const log = process.env.HOLD_OPEN_LOG
  const foreign = () => fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\\n').filter(l => l === 'foreign').length : 0
  ;(async () => {
    const row = {}
    const opened = spawnChildSync({ file: 'true', stdout: { path: path.join(${JSON.stringify(dir)}, 'file') } })
    row.opened = opened.exitCode
    row.caughtBefore = caught()
    for (const [i, api] of ['sync', 'async'].entries()) {
      const fifo = path.join(${JSON.stringify(dir)}, 'fifo' + i)
      execFileSync('mkfifo', [fifo])
      const spec = { file: 'true', stdout: { path: fifo }, timeout: 50 }
      const r = api === 'sync' ? spawnChildSync(spec) : await spawnChild(spec)
      row[api] = r.spawnError && r.spawnError.code
    }
    row.settled = await waitFor(() => openers() === 0)
    row.caughtAfter = caught()
    row.foreignBeforeKill = foreign()
    if (process.env.HOLD_OPEN_FOREIGN) {
      process.kill(process.pid, SIGNAL)
      row.foreignAfterKill = await waitFor(() => foreign() === 1) && foreign()
      console.log(JSON.stringify(row))
      if (process.env.HOLD_OPEN_FOREIGN !== 'oneshot') return
      // SA_RESETHAND: that handler once, then the default, which ends the process.
      setInterval(() => {}, 1000)
      process.kill(process.pid, SIGNAL)
      return
    }
    console.log(JSON.stringify(row))
    // The default ends the process; the parent sees how. Kept alive until then.
    setInterval(() => {}, 1000)
    if (process.env.QUEUE_SIGNAL) {
      require('node:child_process').execFileSync(process.env.QUEUE_SIGNAL, [String(process.pid), String(SIGNAL)])
    } else {
      process.kill(process.pid, SIGNAL)
    }
  })()
`

t.test('after a give-up, the signal caught, and kill(2) of it still ends the process', async t => {
  const dir = tempDir(t)
  const r = spawnChildSync({ file: process.execPath, args: ['-e', script(dir).replaceAll(PACKAGE, JSON.stringify(REPO_ROOT))], env: nodeChildEnv(), timeout: 60000 })
  const row = JSON.parse(r.stdout.toString().trim().split('\n').pop() ?? 'null')
  t.same(row, { opened: 0, caughtBefore: false, sync: 'ETIMEDOUT', async: 'ETIMEDOUT', settled: true, caughtAfter: true, foreignBeforeKill: 0 },
    'not caught before a give-up; both opens interrupted; caught after', { stderr: r.stderr.toString() })
  t.same([r.exitCode, r.signal, r.timedOut], [null, signalName(SIGNAL), false], 'the kill ended the process by that signal, as the default does')
})

t.test("a sigqueue from another process that writes this process's own pid still ends it", async t => {
  // The harness's own were once told by SI_QUEUE, this pid and a value of its own; another
  // process may write all three (test/fixtures/queue-signal.c), and the process survived a signal
  // that should have ended it. Its own are now tgkill's SI_TKILL, which no other process can send.
  const dir = tempDir(t)
  const queue = path.join(dir, 'queue-signal')
  const built = spawnChildSync({ file: 'cc', args: ['-o', queue, path.join(REPO_ROOT, 'test/fixtures/queue-signal.c')] })
  t.equal(built.exitCode, 0, built.stderr.toString())
  const r = spawnChildSync({ file: process.execPath, args: ['-e', script(dir).replaceAll(PACKAGE, JSON.stringify(REPO_ROOT))], env: { ...nodeChildEnv(), QUEUE_SIGNAL: queue }, timeout: 60000 })
  const row = JSON.parse(r.stdout.toString().trim().split('\n').pop() ?? 'null')
  t.same([row?.caughtAfter, row?.sync, row?.async], [true, 'ETIMEDOUT', 'ETIMEDOUT'], 'the handler installed by two give-ups', { stderr: r.stderr.toString() })
  t.same([r.exitCode, r.signal, r.timedOut], [null, signalName(SIGNAL), false], 'the queued signal ended the process, as the default does')
})

t.test('a handler installed before the harness with SA_RESETHAND: once, then the default', async t => {
  const dir = tempDir(t)
  const shim = buildFixtureLibrary(dir, 'hold-open', ['-ldl'])
  const env = nodeChildEnv()
  env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${shim}` : shim
  env.HOLD_OPEN_LOG = path.join(dir, 'held.log')
  env.HOLD_OPEN_FOREIGN = 'oneshot'
  const r = spawnChildSync({ file: process.execPath, args: ['-e', script(dir).replaceAll(PACKAGE, JSON.stringify(REPO_ROOT))], env, timeout: 60000 })
  const row = JSON.parse(r.stdout.toString().trim().split('\n').pop() ?? 'null')
  t.same([row?.sync, row?.async, row?.foreignAfterKill], ['ETIMEDOUT', 'ETIMEDOUT', 1], 'both opens interrupted; the first kill went to that handler', { stderr: r.stderr.toString() })
  t.same([r.exitCode, r.signal, r.timedOut], [null, signalName(SIGNAL), false], 'the second ended the process (the chained handler was one-shot)')
})

t.test('a handler installed before the harness gets every kill(2), and none of its interrupts', async t => {
  const dir = tempDir(t)
  const shim = buildFixtureLibrary(dir, 'hold-open', ['-ldl'])
  const log = path.join(dir, 'held.log')
  const env = nodeChildEnv()
  env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${shim}` : shim
  env.HOLD_OPEN_LOG = log
  env.HOLD_OPEN_FOREIGN = '1'
  const r = spawnChildSync({ file: process.execPath, args: ['-e', script(dir).replaceAll(PACKAGE, JSON.stringify(REPO_ROOT))], env, timeout: 60000 })
  const row = JSON.parse(r.stdout.toString().trim().split('\n').pop() ?? 'null')
  t.same(row, { opened: 0, caughtBefore: true, sync: 'ETIMEDOUT', async: 'ETIMEDOUT', settled: true, caughtAfter: true, foreignBeforeKill: 0, foreignAfterKill: 1 },
    "both opens interrupted (the harness's signals never reached the other handler); the kill did, once", { stderr: r.stderr.toString() })
  t.same([r.exitCode, r.signal], [0, null], 'the process lived on')
  t.same(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['foreign'], 'the other handler ran once')
})
