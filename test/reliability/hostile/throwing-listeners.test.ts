// Class 1: throwing listeners and callbacks. A 'data' or 'end' listener on startChild's stdout or
// stderr that throws must reach process.on('uncaughtException') (the process is not aborted), and
// `await child.result` still resolves with the child's exit code 0 and its whole output. The CLI
// writing its JSON into a closed pipe must not abort either (exit 0, exit 1, or SIGPIPE are fine).
import t from 'tap'
import { assertFreshBuild, assertHealthy, haveCommand, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

const CASES = ['stdout-data', 'stderr-data', 'stdout-end', 'stderr-end'] as const

t.test('a throwing listener on a child stream', async t => {
  const runs = await runAll(CASES.map(which => () => runFixture('throwing-listeners.mjs', [which], { timeoutMs: 20000 })))
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      const [stream, event] = j.which.split('-')
      if (event === 'data') t.ok(j.sentinelSeen >= 1, `the throw reached uncaughtException (${j.sentinelSeen} times)`, { uncaught: j.uncaught })
      else t.equal(j.sentinelSeen, 1, "the 'end' listener's throw reached uncaughtException once", { uncaught: j.uncaught })
      t.equal(j.uncaught.length, j.sentinelSeen, 'nothing else was thrown', { uncaught: j.uncaught })
      t.same([j.exitCode, j.signal, j.diagnostic], [0, null, ''], 'await child.result resolved with exit code 0')
      t.equal(j.output, 'hi\nbye\n', `the result still carries the whole ${stream}`)
      t.same([j.afterSync, j.afterAsync], ['again\n', 'again\n'], 'the harness still spawns (sync and async) afterwards')
    })
  }
})

t.test('the CLI writing --json into a closed pipe', async t => {
  const MODES: Array<[string, string | false]> = [
    ['closed', false],
    ['pipeline', haveCommand('bash') ? false : 'bash is not installed (the pipeline variant reads ${PIPESTATUS})'],
  ]
  for (const [mode, skip] of MODES) {
    t.test(`cli-epipe.mjs ${mode}`, { skip }, async t => {
      const r = await runFixture('cli-epipe.mjs', [mode], { timeoutMs: 20000 })
      const j = assertHealthy(t, r)
      if (!j) return
      t.notMatch(j.stderr, /terminate called/, "the CLI's stderr has no 'terminate called'", { stderr: j.stderr })
      t.notMatch(j.stderr, /FATAL ERROR/, "the CLI's stderr has no 'FATAL ERROR'", { stderr: j.stderr })
      if (j.mode === 'closed') {
        const fine = (j.signal === null && (j.status === 0 || j.status === 1)) || (j.signal === 'SIGPIPE' && j.status === null)
        t.ok(fine, `the CLI ended with exit 0, exit 1 or SIGPIPE (got ${j.signal ?? `exit ${j.status}`})`, { stderr: j.stderr })
      } else {
        const fine = j.status === 0 || j.status === 1 || j.signalNumber === 13
        t.ok(fine, `the left side of '| true' ended with exit 0, exit 1 or SIGPIPE (got ${j.signalNumber ? `signal ${j.signalNumber}` : `exit ${j.status}`})`, { stderr: j.stderr })
      }
    })
  }
})

// A listener that throws from inside the harness's own ending of the streams (push(null) runs a
// 'readable' listener synchronously): every other stream still ends and stdin's pipe is closed.
// Before, a stream left unended waited for ever ('end', for await), and each child leaked its pipe.
t.test('a listener that throws while the streams are being ended', async t => {
  const runs = await runAll(['pipes', 'terminal'].map(which => () => runFixture('finish-throw.mjs', [which], { timeoutMs: 20000 })))
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.same(j.uncaught.map((e: { message: string }) => e.message), ['thrown by a readable listener at the end'], 'the throw was the uncaught exception, once')
      t.equal(j.exitCode, 0, 'the result arrived')
      if (j.which === 'pipes') {
        t.same([j.stderr, j.stderrEnded, j.stdinDestroyed], ['err\n', true, true], "stderr ended and stdin's pipe was released")
        t.equal(j.fdsAfter, j.fdsBefore, `no fd left open (${j.fdsBefore} before, ${j.fdsAfter} after)`)
      } else {
        t.same([j.stdout, j.terminalEnded], ['hi\r\n', true], "the terminal's stream ended")
      }
    })
  }
})
