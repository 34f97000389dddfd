// measure: true — the child's own maxRSS, not the spawner's; a SIGKILL at the deadline reaches the target.
// That a measured child is otherwise the same child is the behaviour tables' to show: every one of
// them runs through MEASURE (test/helpers.ts).
import t from 'tap'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { eachPath, eventually, processState } from '../helpers.js'

// The rows: what ends the child. maxRSS is the spawner's RSS unmeasured, and the child's own
// measured.
const endings: Array<[string, Partial<ChildSpec>]> = [
  ['exits by itself', { file: '/bin/true' }],
  ['killed at its deadline with SIGTERM', { file: 'sleep', args: ['10'], timeout: 100, killSignal: 'SIGTERM' }],
  ['killed at its deadline with SIGKILL', { file: 'sleep', args: ['10'], timeout: 100 }],
]

t.test("maxRSS is the child's own, even from a 2 GiB parent", async t => {
  const hold: Buffer[] = []
  for (let i = 0; i < 16; i++) hold.push(Buffer.alloc(128 * 1024 * 1024, 1))
  const rssKiB = process.memoryUsage().rss / 1024
  t.ok(rssKiB > 2 * 1024 * 1024, `precondition: parent RSS ${(rssKiB / 1048576).toFixed(2)} GiB`)
  // The reference: /usr/bin/time run from a shell, so /bin/true's pre-exec image is small.
  const ref = spawnChildSync({ file: 'sh', args: ['-c', '/usr/bin/time -f %M /bin/true'], env: { PATH: '/usr/bin:/bin' } })
  const reference = Number(ref.stderr.toString().trim())
  t.ok(reference > 0, `time(1) reports ${reference} KiB`)
  for (const [name, spec] of endings) await eachPath(t, name, async (t, { run, measure }) => {
    const r = await run({ file: '/bin/true', ...spec })
    const { maxRSS } = r.rusage
    if (!measure) t.ok(maxRSS > 2 * 1024 * 1024, `unmeasured: ${maxRSS} KiB (the spawner's RSS)`)
    else t.ok(Math.abs(maxRSS - reference) <= 2048, `measured: ${maxRSS} KiB, within 2 MiB of time(1)'s ${reference} KiB`)
  })
  hold.length = 0
})

t.test('a SIGKILL at the deadline reaches the target itself, whose rusage is still its own', t => eachPath(t, '', async (t, { run }) => {
  // The helper reports the target's pid when it starts it, and the harness signals the target
  // directly: SIGKILL included, which no helper could forward. The helper then reaps and reports.
  const r = await run({ file: 'sh', args: ['-c', 'echo $$; exec sleep 100'], timeout: 200 })
  t.equal(r.timedOut, true)
  t.equal(r.signal, 'SIGKILL', "the target was killed by the deadline's SIGKILL")
  const target = Number(r.stdout.toString().trim())
  t.equal(r.pid, target, "the result's pid is the target's")
  t.equal(r.rusageSource, 'helper', "the rusage is the target's, from the helper's report")
  t.ok(r.rusage.maxRSS > 0 && r.rusage.maxRSS < 20 * 1024, `the target's own max RSS (${r.rusage.maxRSS} KiB), not this process's`)
  t.ok(await eventually(() => processState(target) !== 'alive'), 'the target is gone')
  const grouped = await run({ file: 'sh', args: ['-c', 'sleep 100 & echo $!; wait'], timeout: 200, setsid: true })
  const pid = Number(grouped.stdout.toString().trim())
  t.ok(await eventually(() => processState(pid) !== 'alive'), 'with setsid the whole group goes')
}, { measure: [true] }))
