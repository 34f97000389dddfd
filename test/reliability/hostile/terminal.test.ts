// startChild's terminal under hostile use (fixtures/terminal.mjs): a throwing 'data' listener, the
// stream destroyed while the child writes, writes after the child exited, a worker with running
// terminals terminated, the process exiting with one running; a throwing listener and a worker
// terminated while the terminal is hung up (the child closed its fds and runs on). No crash,
// every result settles, no terminal fd left open, no process left behind.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

const CASES = ['throwing-data', 'destroyed-early', 'write-after-exit', 'worker-terminated', 'exit-while-running', 'hung-up-throwing', 'hung-up-worker-terminated'] as const

t.test('a terminal treated badly', async t => {
  const runs = await runAll(CASES.map(which => () => runFixture('terminal.mjs', [which], { timeoutMs: 30000 })))
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      if (j.which === 'exit-while-running') {
        t.equal(j.terminalFds, 2, 'the running child\'s master (and its copy for writes) were open until the exit')
        t.same(j.uncaught, [])
        return
      }
      t.equal(j.closed, true, 'no fd on /dev/ptmx or /dev/pts/* is left open')
      t.equal(j.after, '24 80\r\n', 'the harness still gives terminals afterwards')
      switch (j.which) {
        case 'throwing-data':
          t.ok(j.sentinelSeen >= 1, 'the throw reached uncaughtException')
          t.equal(j.uncaught.length, j.sentinelSeen, 'nothing else was thrown', { uncaught: j.uncaught })
          t.same([j.exitCode, j.signal], [0, null], 'the result settled with exit code 0')
          t.equal(j.output, 'hi\r\nbye\r\n', 'and the whole output')
          break
        case 'destroyed-early':
          t.same(j.uncaught, [])
          t.same([j.exitCode, j.signal, j.timedOut], [0, null, false], 'the child did not block on the destroyed stream')
          t.ok(j.length >= 500000, `the result still has everything (${j.length} bytes)`)
          t.equal(j.ending, 'done\r\n')
          break
        case 'write-after-exit':
          t.same(j.uncaught, [])
          t.equal(j.exitCode, 0)
          t.same(j.callbacks, [null], 'the late write\'s callback ran: dropped, no error')
          t.same([j.resized, j.killed], [false, false], 'resize() and kill() are false after the exit')
          break
        case 'worker-terminated':
          t.same(j.uncaught, [])
          t.equal(j.workerTerminated, true)
          break
        case 'hung-up-throwing':
          t.equal(j.hungUp, true, 'the child closed its terminal fds and ran on')
          t.ok(j.sentinelSeen >= 2, `the throws reached uncaughtException (${j.sentinelSeen}), before the hang-up and after`)
          t.equal(j.uncaught.length, j.sentinelSeen, 'nothing else was thrown', { uncaught: j.uncaught })
          t.same([j.exitCode, j.signal, j.timedOut], [3, null, false], 'the child\'s own exit: no SIGHUP, no deadline')
          t.equal(j.output, 'ready\r\nlate\r\n', 'the result: the output, then the echo of what was typed while hung up')
          t.equal(j.streamedSame, true, 'the stream gave the same as the result, its listener throwing all along')
          break
        case 'hung-up-worker-terminated':
          t.same(j.uncaught, [])
          t.equal(j.hungUp, true, 'the worker\'s children had closed their terminal fds')
          t.equal(j.workerTerminated, true)
          t.equal(j.childrenGone, true, 'the teardown ended them (nothing would have)')
          break
      }
    })
  }
})
