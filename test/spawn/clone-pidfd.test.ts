// The fork path takes the child's pidfd from the clone itself (CLONE_PIDFD). On a kernel that
// refuses the flag (before Linux 5.2) the launch clones without it and opens the pidfd afterwards,
// once it has learnt that: simulated here by a preloaded clone() that refuses the flag
// (test/fixtures/no-clone-pidfd.c), in a node child.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { tempDir } from '../helpers.js'
import { PACKAGE, buildFixtureLibrary, nodeChildEnv, runNodeScript } from '../reliability/helpers.js'

const dir = tempDir(t)
const so = buildFixtureLibrary(dir, 'no-clone-pidfd', ['-ldl'])

// Every fork-path use of the pidfd: waiting for the exit (async), signalling through it (kill),
// a deadline, a launch that fails before exec and one that fails in exec, and the sync wait.
const SCRIPT = `
  const th = require(${PACKAGE})
  ;(async () => {
    const out = {}
    const exited = await th.spawnChild({ file: 'sh', args: ['-c', 'exit 7'], launcher: 'fork' })
    out.exited = { exitCode: exited.exitCode, pid: exited.pid > 0, launcher: exited.launcher }
    const child = th.startChild({ file: 'sleep', args: ['30'], launcher: 'fork' })
    out.killed = child.kill('SIGTERM')
    out.signal = (await child.result).signal
    const late = await th.spawnChild({ file: 'sleep', args: ['30'], launcher: 'fork', timeout: 100 })
    out.timedOut = { timedOut: late.timedOut, signal: late.signal }
    const chdir = await th.spawnChild({ file: 'true', cwd: '/nonexistent', launcher: 'fork' })
    out.chdir = chdir.spawnError && [chdir.spawnError.stage, chdir.spawnError.code]
    const missing = await th.spawnChild({ file: '/nonexistent/program', launcher: 'fork' })
    out.missing = [missing.exitCode, missing.spawnError && missing.spawnError.code]
    const sync = th.spawnChildSync({ file: 'sh', args: ['-c', 'exit 5'], launcher: 'fork', timeout: 10000 })
    out.sync = sync.exitCode
    console.log(JSON.stringify(out))
  })()
`

const EXPECTED = {
  exited: { exitCode: 7, pid: true, launcher: 'fork' },
  killed: true,
  signal: 'SIGTERM',
  timedOut: { timedOut: true, signal: 'SIGKILL' },
  chdir: ['chdir', 'ENOENT'],
  missing: [127, 'ENOENT'],
  sync: 5,
}

t.test('a kernel without CLONE_PIDFD: the pidfd is opened after the clone, and nothing else changes', t => {
  const log = path.join(dir, 'refused.log')
  const env = nodeChildEnv()
  env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${so}` : so
  env.NO_CLONE_PIDFD_LOG = log
  const out = runNodeScript<Record<string, unknown>>(SCRIPT, { env })
  t.same(out, EXPECTED)
  // Refused once: the launch remembers, and does not ask again for every child.
  t.equal(fs.readFileSync(log, 'utf8'), 'refused\n', 'CLONE_PIDFD was asked for once, and refused')
  t.end()
})

t.test('the same script without the shim: the same results', t => {
  const out = runNodeScript<Record<string, unknown>>(SCRIPT)
  t.same(out, EXPECTED)
  t.end()
})
