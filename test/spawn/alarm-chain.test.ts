// The harness's SIGALRM handler coexists with the process's own: a process.on('SIGALRM')
// listener keeps working and never sees the harness's alarms.
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, eachPath, eventually } from '../helpers.js'

const settle = () => new Promise(r => setTimeout(r, 100))

t.test('listener sees external SIGALRMs only', async t => {
  let seen = 0
  const listener = () => { seen++ }
  process.on('SIGALRM', listener)
  t.teardown(() => { process.off('SIGALRM', listener) })

  await eachPath(t, 'a timeout', async (t, { api, run }) => {
    const r = await run({ file: 'sleep', args: ['5'], timeout: 50 })
    t.equal(r.timedOut, true, api === 'sync' ? 'timed out' : 'async timeouts use uv timers, no SIGALRM at all')
  })
  await settle()
  t.equal(seen, 0, "the harness's alarms are not delivered to the listener")

  process.kill(process.pid, 'SIGALRM')
  t.ok(await eventually(() => seen === 1), 'an external SIGALRM still reaches the listener')

  // An external SIGALRM that arrives during a timed wait is chained to the listener and does
  // not end the wait early.
  const r = spawnChildSync({ file: 'sh', args: ['-c', `kill -ALRM ${process.pid}; sleep 0.2; echo finished`], timeout: 10000 })
  t.equal(r.timedOut, false, 'not mistaken for the harness alarm')
  t.equal(r.stdout.toString(), 'finished\n')
  t.ok(await eventually(() => seen === 2), 'the listener got the alarm sent during the wait')
  await settle()
  t.equal(seen, 2, 'and only that one')
})

t.test('with no handler, an external SIGALRM keeps its default action', async t => {
  // Run in a fresh node: SIGALRM's default ends the process, and chaining must preserve that.
  const code = `
    const { spawnChildSync } = require('tileharness')
    spawnChildSync({ file: 'sh', args: ['-c', 'kill -ALRM $PPID; sleep 2'], timeout: 10000 })
    console.log('survived')
  `
  const r = spawnChildSync({ file: process.execPath, args: ['-e', code], cwd: REPO_ROOT, env: { PATH: process.env.PATH }, timeout: 30000 })
  t.equal(r.signal, 'SIGALRM', 'node died of SIGALRM as it would without the harness')
  t.equal(r.stdout.toString(), '')
})

t.test('the previous handler is restored after a timed wait', async t => {
  const code = `
    const { spawnChildSync } = require('tileharness')
    spawnChildSync({ file: 'true', timeout: 1000 })
    const status = require('fs').readFileSync('/proc/self/status', 'utf8')
    console.log(/SigCgt:\\s*([0-9a-f]+)/.exec(status)[1])
  `
  const r = spawnChildSync({ file: process.execPath, args: ['-e', code], cwd: REPO_ROOT, env: { PATH: process.env.PATH }, timeout: 30000 })
  t.equal(r.exitCode, 0, r.stderr.toString())
  const caught = BigInt('0x' + r.stdout.toString().trim())
  t.equal(caught & (1n << 13n), 0n, 'SIGALRM (14) is no longer caught once no wait needs it')
})
