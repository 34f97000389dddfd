// Giving up on a { path } stdio target whose open is pending (a FIFO nobody has opened): the
// deadline came first. The open runs on a thread of its own; giving up interrupts it with a signal
// (native/interrupt.h), or, where the signal's handler is no longer the harness's, releases it by
// opening the FIFO's other end. A preloaded shim (test/fixtures/hold-open.c) holds chosen opens at
// the moment they are about to begin, until the test lets them go, to take these windows:
// - only the opening thread's open held, until after the give-up: the interrupt comes before the
//   open has begun, interrupts nothing, and must be sent again once the open has begun (with the
//   other end opened and closed at once, as an older release did, that open waited for good: a
//   thread and its fds leaked at every such deadline).
// - the signal's handler taken over by another (the shim installs its own over the harness's, as
//   a library might), so the release falls back to the FIFO's other end, and that open held too, as a path
//   on a hung mount holds it: made on the caller's thread, the sync call, or the whole event loop,
//   waited on it. The shim lets it go only once the result is in.
// Both: the result says the open timed out, and once the holds are let go the process has the
// threads and fds it had before.
//
// And what giving up must not do: another process waiting on the same FIFO (a writer waiting for
// its reader, or a reader for its writer) waits on, and gets its real partner's data. Opening the
// other end let it through at once, to a partner that closed at once: its data was lost, and a
// writer was killed by SIGPIPE.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { tempDir } from '../helpers.js'
import { buildFixtureLibrary, nodeChildEnv, PACKAGE, runNodeScript } from './helpers.js'

const CASES = ['sync stdin', 'sync stdout', 'async stdin', 'async stdout']

const script = (dir: string, stolen: boolean) => `
  const fs = require('node:fs')
  const path = require('node:path')
  const { spawnChild, spawnChildSync } = require(${PACKAGE})
  const tasks = () => fs.readdirSync('/proc/self/task').length
  const openers = () => fs.readdirSync('/proc/self/task').filter(t => { try { return /^tileharness-(opn|rel)$/.test(fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()) } catch { return false } }).length
  const fds = () => fs.readdirSync('/proc/self/fd').length
  const waitFor = async (pred) => {
    for (let i = 0; i < 1000 && !pred(); i++) await new Promise(r => setTimeout(r, 10))
    return pred()
  }
  ;(async () => {
    spawnChildSync({ file: 'true' })  // warm up
    if (${stolen}) {
      // An open given up on (not held): the harness's handler is installed. Then the shim's
      // over it.
      const fifo = path.join(${JSON.stringify(dir)}, 'first.fifo')
      require('node:child_process').execFileSync('mkfifo', [fifo])
      spawnChildSync({ file: 'true', stdout: { path: fifo }, timeout: 50 })
      await waitFor(() => openers() === 0)
      fs.closeSync(fs.openSync(path.join(${JSON.stringify(dir)}, 'handler.steal'), 'w'))
    }
    const rows = {}
    for (const label of ${JSON.stringify(CASES)}) {
      const [api, stream] = label.split(' ')
      const fifo = path.join(${JSON.stringify(dir)}, label.replace(' ', '-') + '.held')
      const before = [tasks(), fds()]
      const spec = { file: 'true', [stream]: { path: fifo }, timeout: 50 }
      const r = api === 'sync' ? spawnChildSync(spec) : await spawnChild(spec)
      fs.writeFileSync(fifo + '.go', '')
      const settled = await waitFor(() => openers() === 0 && fds() === before[1])
      rows[label] = { timedOut: r.timedOut, spawnError: r.spawnError && r.spawnError.code, settled, before, after: [tasks(), fds()] }
    }
    console.log(JSON.stringify(rows))
  })()
`

const VARIANTS = [
  ['only the pending open held, past the give-up: the interrupt is sent again', false],
  ['the signal taken over by another handler: released by the other end, that open held as on a hung mount', true],
] as const
for (const [variant, stolen] of VARIANTS) {
  t.test(`a FIFO open given up on: ${variant}`, async t => {
    const dir = tempDir(t)
    const made = spawnSync('mkfifo', CASES.map(c => path.join(dir, c.replace(' ', '-') + '.held')))
    if (made.error || made.status !== 0) return t.skip(`mkfifo cannot make FIFOs here: ${made.error?.message ?? String(made.stderr)}`)
    const shim = buildFixtureLibrary(dir, 'hold-open', ['-ldl'])
    const log = path.join(dir, 'held.log')
    const env = nodeChildEnv()
    env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${shim}` : shim
    env.HOLD_OPEN_LOG = log
    if (stolen) env.HOLD_OPEN_NONBLOCK = '1'
    const rows = runNodeScript<Record<string, { timedOut: boolean; spawnError: string | null; settled: boolean; before: number[]; after: number[] }>>(script(dir, stolen), { env, timeout: 300000 })
    for (const label of CASES) {
      const row = rows[label]!
      t.same([row.timedOut, row.spawnError], [true, 'ETIMEDOUT'], `${label}: the open timed out, and the result says so`)
      t.ok(row.settled, `${label}: once let go, no thread or fd is left (tasks, fds: ${row.before} before, ${row.after} after)`)
    }
    const held = (await import('node:fs')).readFileSync(log, 'utf8').split('\n').filter(Boolean)
    const lets = held.filter(l => l !== 'stolen')
    t.ok(lets.length >= CASES.length * (stolen ? 2 : 1), `the shim held the opens (${lets.length})`)
    t.same(lets.filter(l => l !== 'go'), [], 'each was let go by the test, none by the shim\'s 20 s fail-safe')
    t.equal(held.filter(l => l === 'stolen').length, stolen ? 1 : 0, stolen ? "the shim took the signal over, once the harness's handler was there" : 'the signal left alone')
  })
}

const othersScript = (dir: string) => `
  const fs = require('node:fs')
  const path = require('node:path')
  const { spawn, execFileSync } = require('node:child_process')
  const { spawnChild, spawnChildSync } = require(${PACKAGE})
  const openers = () => fs.readdirSync('/proc/self/task').filter(t => { try { return /^tileharness-(opn|rel)$/.test(fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()) } catch { return false } }).length
  const wchan = (pid) => { try { return fs.readFileSync('/proc/' + pid + '/wchan', 'utf8') } catch { return '' } }
  const waitFor = async (pred) => {
    for (let i = 0; i < 1000 && !pred(); i++) await new Promise(r => setTimeout(r, 10))
    return pred()
  }
  ;(async () => {
    spawnChildSync({ file: 'true' })  // warm up
    const rows = {}
    for (const label of ${JSON.stringify(CASES)}) {
      const [api, stream] = label.split(' ')
      const fifo = path.join(${JSON.stringify(dir)}, label.replace(' ', '-') + '.fifo')
      execFileSync('mkfifo', [fifo])
      // Another process opening the same end of the FIFO as the harness: a writer when the
      // harness writes (stdout), a reader when it reads (stdin).
      const script = stream === 'stdout' ? 'printf important > "$0"; echo wrote' : 'exec cat "$0"'
      const other = spawn('sh', ['-c', script, fifo], { stdio: ['ignore', 'pipe', 'ignore'] })
      let printed = ''
      other.stdout.on('data', d => { printed += d })
      const ended = new Promise(resolve => other.on('close', (code, signal) => resolve({ code, signal })))
      const waiting = () => wchan(other.pid) === 'wait_for_partner'
      const otherWaited = await waitFor(waiting)
      const spec = { file: 'true', [stream]: { path: fifo }, timeout: 50 }
      const r = api === 'sync' ? spawnChildSync(spec) : await spawnChild(spec)
      const settled = await waitFor(() => openers() === 0)  // the open, and its give-up, are done
      const otherStillWaiting = waiting()
      // Now its real partner.
      const partner = stream === 'stdout'
        ? await spawnChild({ file: 'cat', args: [fifo], timeout: 20000 })
        : await spawnChild({ file: 'sh', args: ['-c', 'printf important > "$0"', fifo], timeout: 20000 })
      if (partner.timedOut) other.kill('SIGKILL')
      const otherEnd = await ended
      rows[label] = {
        spawnError: r.spawnError && r.spawnError.code, otherWaited, settled, otherStillWaiting,
        partnerTimedOut: partner.timedOut, partnerGot: stream === 'stdout' ? partner.stdout.toString() : null,
        otherPrinted: printed, otherEnd,
      }
    }
    console.log(JSON.stringify(rows))
  })()
`

t.test("a FIFO open given up on leaves another process's open of it waiting for its real partner", async t => {
  const dir = tempDir(t)
  const rows = runNodeScript<Record<string, { spawnError: string | null; otherWaited: boolean; settled: boolean; otherStillWaiting: boolean; partnerTimedOut: boolean; partnerGot: string | null; otherPrinted: string; otherEnd: { code: number | null; signal: string | null } }>>(othersScript(dir), { timeout: 300000 })
  for (const label of CASES) {
    const row = rows[label]!
    const stdout = label.endsWith('stdout')
    t.ok(row.otherWaited, `${label}: the other ${stdout ? 'writer' : 'reader'} was waiting in its open`)
    t.equal(row.spawnError, 'ETIMEDOUT', `${label}: the harness's open timed out`)
    t.ok(row.settled, `${label}: the harness's opening thread is gone`)
    t.ok(row.otherStillWaiting, `${label}: the other ${stdout ? 'writer' : 'reader'} still waits for its partner`)
    t.equal(row.partnerTimedOut, false, `${label}: its real partner met it`)
    if (stdout) {
      t.equal(row.partnerGot, 'important', `${label}: the reader got the writer's data`)
      t.same([row.otherPrinted, row.otherEnd], ['wrote\n', { code: 0, signal: null }], `${label}: the writer wrote it and ended well (no SIGPIPE)`)
    } else {
      t.same([row.otherPrinted, row.otherEnd], ['important', { code: 0, signal: null }], `${label}: the reader got the writer's data`)
    }
  }
})
