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

t.test("a worker's teardown does not wait for a tracer to let its child go", { skip }, async t => {
  const r = await runFixture('traced-child.mjs', ['worker'], { timeoutMs: 60000 })
  const j = assertHealthy(t, r)
  if (!j) return
  if (j.refused) return t.skip(`ptrace refused here (${j.refused}): a traced child cannot be made`)
  t.equal(j.heldAtTerminate, true, 'terminate() resolved while the tracer still held the child')
  t.equal(j.stateAtTerminate, 'zombie', 'the teardown killed it')
  t.equal(j.letGo, 'eof', 'the tracer was let go by the test (not by its own 20 s fail-safe)')
  t.equal(j.reaped, true, 'the reaper thread reaped it once the tracer was gone')
  t.same(j.leftChildren, [], 'no child left')
  t.equal(j.after, 7, 'the main thread still spawns afterwards')
})

t.test("a worker torn down while its loop waits to reap a traced child's zombie", { skip }, async t => {
  const r = await runFixture('traced-child.mjs', ['worker-exited'], { timeoutMs: 60000 })
  const j = assertHealthy(t, r)
  if (!j) return
  if (j.refused) return t.skip(`ptrace refused here (${j.refused}): a traced child cannot be made`)
  t.equal(j.settled, false, 'no result was given while the zombie could not be reaped')
  t.equal(j.heldAtTerminate, true, 'terminate() resolved while the tracer still held the zombie')
  t.equal(j.stateAtTerminate, 'zombie', 'it was still a zombie then')
  t.equal(j.letGo, 'eof', 'the tracer was let go by the test (not by its own 20 s fail-safe)')
  t.equal(j.reaped, true, 'the reaper thread reaped it once the tracer was gone')
  t.same(j.leftChildren, [], 'no child left')
  t.equal(j.after, 7, 'the main thread still spawns afterwards')
})
