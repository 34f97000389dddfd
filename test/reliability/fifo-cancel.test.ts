// Giving up on a { path } stdio target whose open is pending (a FIFO nobody has opened): the
// deadline came first. The open runs on a thread of its own; giving up releases it by opening the
// FIFO's other end. A preloaded shim (test/fixtures/hold-open.c) holds chosen opens at the moment
// they are about to begin, until the test lets them go, to take two windows every time:
// - the release's own open held (as a path on a hung mount holds it): it was made on the caller's
//   thread, and the sync call, or the whole event loop, waited on it. Here the shim lets it go
//   only once the result is in, so the old code waited for the shim's 20 s fail-safe.
// - only the opening thread's open held, until after the release: the other end was opened and
//   closed at once, before that open began, which then waited for good: a thread and its fds
//   leaked at every such deadline. Now the other end is held until the pending open returns.
// Both: the result says the open timed out, and once the holds are let go the process has the
// threads and fds it had before.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { tempDir } from '../helpers.js'
import { buildFixtureLibrary, nodeChildEnv, PACKAGE, runNodeScript } from './helpers.js'

const CASES = ['sync stdin', 'sync stdout', 'async stdin', 'async stdout']

const script = (dir: string) => `
  const fs = require('node:fs')
  const path = require('node:path')
  const { spawnChild, spawnChildSync } = require(${PACKAGE})
  const tasks = () => fs.readdirSync('/proc/self/task').length
  const fds = () => fs.readdirSync('/proc/self/fd').length
  const waitFor = async (pred) => {
    for (let i = 0; i < 1000 && !pred(); i++) await new Promise(r => setTimeout(r, 10))
    return pred()
  }
  ;(async () => {
    spawnChildSync({ file: 'true' })  // warm up
    const rows = {}
    for (const label of ${JSON.stringify(CASES)}) {
      const [api, stream] = label.split(' ')
      const fifo = path.join(${JSON.stringify(dir)}, label.replace(' ', '-') + '.held')
      const before = [tasks(), fds()]
      const spec = { file: 'true', [stream]: { path: fifo }, timeout: 50 }
      const r = api === 'sync' ? spawnChildSync(spec) : await spawnChild(spec)
      fs.writeFileSync(fifo + '.go', '')
      const settled = await waitFor(() => tasks() === before[0] && fds() === before[1])
      rows[label] = { timedOut: r.timedOut, spawnError: r.spawnError && r.spawnError.code, settled, before, after: [tasks(), fds()] }
    }
    console.log(JSON.stringify(rows))
  })()
`

for (const [variant, holdNonblock] of [['the release held, as on a hung mount', true], ['only the pending open held, past the release', false]] as const) {
  t.test(`a FIFO open given up on: ${variant}`, async t => {
    const dir = tempDir(t)
    const made = spawnSync('mkfifo', CASES.map(c => path.join(dir, c.replace(' ', '-') + '.held')))
    if (made.error || made.status !== 0) return t.skip(`mkfifo cannot make FIFOs here: ${made.error?.message ?? String(made.stderr)}`)
    const shim = buildFixtureLibrary(dir, 'hold-open', ['-ldl'])
    const log = path.join(dir, 'held.log')
    const env = nodeChildEnv()
    env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${shim}` : shim
    env.HOLD_OPEN_LOG = log
    if (holdNonblock) env.HOLD_OPEN_NONBLOCK = '1'
    const rows = runNodeScript<Record<string, { timedOut: boolean; spawnError: string | null; settled: boolean; before: number[]; after: number[] }>>(script(dir), { env, timeout: 300000 })
    for (const label of CASES) {
      const row = rows[label]!
      t.same([row.timedOut, row.spawnError], [true, 'ETIMEDOUT'], `${label}: the open timed out, and the result says so`)
      t.ok(row.settled, `${label}: once let go, no thread or fd is left (tasks, fds: ${row.before} before, ${row.after} after)`)
    }
    const held = (await import('node:fs')).readFileSync(log, 'utf8').split('\n').filter(Boolean)
    t.ok(held.length >= CASES.length * (holdNonblock ? 2 : 1), `the shim held the opens (${held.length})`)
    t.same(held.filter(l => l !== 'go'), [], 'each was let go by the test, none by the shim\'s 20 s fail-safe')
  })
}
