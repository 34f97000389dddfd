// A worker terminated while the harness opens a { path } FIFO for its child, its AbortSignal
// aborted just before every other time (fixtures/worker-fifo-open.mjs). The teardown gives the
// open up by interrupting it: no opener thread, fd, child or zombie is left; another process
// waiting to write to the same FIFO waits on, and its reader gets its data afterwards.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runFixture } from './helpers.js'

assertFreshBuild(t)

t.test('workers terminated while a FIFO open is pending', async t => {
  const ROUNDS = 20
  const r = await runFixture('worker-fifo-open.mjs', [String(ROUNDS)], { timeoutMs: 120000 })
  const j = assertHealthy(t, r)
  if (!j) return
  t.equal(j.rounds, ROUNDS, `all ${ROUNDS} rounds ran`)
  t.equal(j.pending, ROUNDS, 'each worker was terminated with its open waiting for the other end')
  t.same(j.errors, [], "no worker reported an 'error'")
  t.same([j.settled, j.openersLeft], [true, 0], 'every opening thread, and every thread that interrupted one, is gone')
  t.equal(j.bystanderWaited, true, 'the other writer still waited for a reader')
  t.same([j.readerGot, j.readerTimedOut, j.bystanderEnd], ['important', false, { code: 0, signal: null }], 'and its reader got its data')
  t.same(j.leftChildren, [], 'no child left: none running, no zombie')
  t.same(j.leftByPpid, [], 'no process has the fixture as its parent')
  t.equal(j.fdsAfter, j.fdsBefore, `no fd left open (${j.fdsBefore} before, ${j.fdsAfter} after)`)
  t.equal(j.afterExitCode, 7, 'the main thread still spawns afterwards')
})
