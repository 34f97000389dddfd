// Large captures (the buffer backed ahead of its reads, past 1 MiB) and measured async starts
// (the helper's report taken from the event loop), treated badly: a throwing data listener, a
// reader that takes one chunk per loop turn, a worker terminated mid-capture, a deadline racing
// a measured child's exit. Nothing crashes; every byte still arrives where it belongs.
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture } from './helpers.js'

assertFreshBuild(t)

const CASES = ['throwing-large', 'trickle-large', 'worker-large', 'worker-large-measured', 'deadline-race-measured']
const MiB = 1 << 20

t.test('large captures and measured starts treated badly', async t => {
  const runs = await runAll(CASES.map(which => () => runFixture('capture-start.mjs', [which], { timeoutMs: 60000 })))
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.equal(j.uncaughtOther, 0, 'no uncaught exception but the listener\'s own')
      switch (j.which) {
        case 'throwing-large':
          t.same([j.exitCode, j.length, j.wrongByte], [0, 8 * MiB, -1], 'the result has all 8 MiB, every byte in place')
          t.ok(j.sentinelSeen >= 1, 'the listener\'s throw reached uncaughtException')
          break
        case 'trickle-large':
          t.same([j.exitCode, j.length, j.wrongByte], [0, 8 * MiB, -1], 'the result has all 8 MiB, every byte in place')
          t.same([j.streamed, j.streamedWrong], [8 * MiB, -1], 'and so has the stream, read a chunk per loop turn')
          break
        case 'worker-large':
        case 'worker-large-measured':
          t.same([j.deep, j.terminated, j.childrenAfter], [true, true, []], 'terminated 4 MiB into the capture: no child left, running or a zombie')
          break
        case 'deadline-race-measured':
          t.ok(j.outcomes.length > 0 && j.outcomes.every((o: string) => o === 'exit 0' || o === 'timedOut SIGKILL'),
            `each run exited or was killed at its deadline, nothing else: ${j.outcomes.join(', ')}`)
          break
      }
    })
  }
})
