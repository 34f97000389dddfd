// A child that another process traces (a debugger, `strace -p`) and that exits meanwhile is a
// zombie only its tracer can wait for until it lets go; a blocking wait4 in its parent waits
// that long. On the event loop that froze the whole process (every timer, every stream: here the
// very stream that would have let the tracer go, so for as long as the tracer liked), and a
// worker's teardown hung in terminate(). Now the loop asks again on a timer and takes the exact
// status once it can, and a teardown hands such a child to the reaper thread.
import t from 'tap'
import { assertFreshBuild, assertHealthy, haveCommand, runFixture } from './helpers.js'

assertFreshBuild(t)

const skip = haveCommand('python3') ? false : 'python3 (the tracer, through ctypes) is not installed'

t.test('a traced child that exits does not hold the event loop', { skip }, async t => {
  const r = await runFixture('traced-child.mjs', ['loop'], { timeoutMs: 60000 })
  const j = assertHealthy(t, r)
  if (!j) return
  if (j.refused) return t.skip(`ptrace refused here (${j.refused}): a traced child cannot be made`)
  t.equal(j.letGo, 'eof', 'the tracer was let go from the event loop (not by its own 20 s fail-safe)')
  t.equal(j.resultAt, 'after the timer', 'a timer set once the child had exited fired before the result came')
  t.same([j.exitCode, j.signal, j.rusageSource], [3, null, 'wait4'], "the result is the child's own: exit 3, reaped with wait4")
  t.ok(j.maxRSS > 0, `with its rusage (maxRSS ${j.maxRSS} KiB)`)
  t.same(j.leftChildren, [], 'no child left')
})

// The worker is terminated while its child runs (worker: the teardown kills it), or once the child
// has exited and the worker's loop is asking again to reap its zombie (worker-exited).
const WORKER_CASES = [
  { mode: 'worker', name: "a worker's teardown does not wait for a tracer to let its child go", held: 'the child', state: 'the teardown killed it' },
  { mode: 'worker-exited', name: "a worker torn down while its loop waits to reap a traced child's zombie", held: 'the zombie', state: 'it was still a zombie then' },
]
for (const c of WORKER_CASES) {
  t.test(c.name, { skip }, async t => {
    const r = await runFixture('traced-child.mjs', [c.mode], { timeoutMs: 60000 })
    const j = assertHealthy(t, r)
    if (!j) return
    if (j.refused) return t.skip(`ptrace refused here (${j.refused}): a traced child cannot be made`)
    if (c.mode === 'worker-exited') t.equal(j.settled, false, 'no result was given while the zombie could not be reaped')
    t.equal(j.heldAtTerminate, true, `terminate() resolved while the tracer still held ${c.held}`)
    t.equal(j.stateAtTerminate, 'zombie', c.state)
    t.equal(j.letGo, 'eof', 'the tracer was let go by the test (not by its own 20 s fail-safe)')
    t.equal(j.reaped, true, 'the reaper thread reaped it once the tracer was gone')
    t.same(j.leftChildren, [], 'no child left')
    t.equal(j.after, 7, 'the main thread still spawns afterwards')
  })
}
