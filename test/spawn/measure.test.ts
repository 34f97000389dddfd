// measure: true — the child's own maxRSS, not the spawner's; and otherwise the same child.
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { APIS, LAUNCHERS, eventually, processState, tempDir, script } from '../helpers.js'

t.test('maxRSS is the child\'s own, even from a 2 GiB parent', async t => {
  const hold: Buffer[] = []
  for (let i = 0; i < 16; i++) hold.push(Buffer.alloc(128 * 1024 * 1024, 1))
  const rssKiB = process.memoryUsage().rss / 1024
  t.ok(rssKiB > 2 * 1024 * 1024, `precondition: parent RSS ${(rssKiB / 1048576).toFixed(2)} GiB`)
  // The reference: /usr/bin/time run from a shell, so /bin/true's pre-exec image is small.
  const ref = spawnChildSync({ file: 'sh', args: ['-c', '/usr/bin/time -f %M /bin/true'], env: { PATH: '/usr/bin:/bin' } })
  const reference = Number(ref.stderr.toString().trim())
  t.ok(reference > 0, `time(1) reports ${reference} KiB`)
  for (const [api, run] of APIS) {
    for (const launcher of LAUNCHERS) {
      const inflated = await run({ file: '/bin/true', launcher })
      t.ok(inflated.rusage.maxRSS > 2 * 1024 * 1024, `${api} ${launcher} unmeasured: ${inflated.rusage.maxRSS} KiB (the spawner's RSS)`)
      const honest = await run({ file: '/bin/true', launcher, measure: true })
      t.ok(Math.abs(honest.rusage.maxRSS - reference) <= 2048,
        `${api} ${launcher} measured: ${honest.rusage.maxRSS} KiB, within 2 MiB of time(1)'s ${reference} KiB`)
    }
  }
  hold.length = 0
})

t.test('a measured child behaves as an unmeasured one', async t => {
  const dir = tempDir(t)
  const noX = script(dir, 'no-x', '#!/bin/sh\n', 0o644)
  for (const [api, run] of APIS) {
    for (const launcher of LAUNCHERS) {
      const m = { measure: true, launcher } as const
      const label = `${api} ${launcher}`
      const out = await run({ file: 'sh', args: ['-c', 'cat; echo err >&2; exit 3'], input: 'in\n', ...m })
      t.same([out.exitCode, out.stdout.toString(), out.stderr.toString(), out.spawnError], [3, 'in\n', 'err\n', null], `${label}: exit code and pipes`)
      const sig = await run({ file: 'sh', args: ['-c', 'kill -SEGV $$'], ...m })
      t.same([sig.signal, sig.exitCode, sig.diagnostic], ['SIGSEGV', null, 'Segmentation fault'], `${label}: signal`)
      const missing = await run({ file: 'th-no-such-program', ...m })
      t.same([missing.exitCode, missing.spawnError?.code, missing.spawnError?.stage, missing.diagnostic], [127, 'ENOENT', 'exec', 'No such file or directory'], `${label}: not found`)
      const denied = await run({ file: noX, ...m })
      t.same([denied.exitCode, denied.spawnError?.code, denied.diagnostic], [126, 'EACCES', 'Program could not be executed'], `${label}: not executable`)
      const own127 = await run({ file: 'sh', args: ['-c', 'exit 127'], ...m })
      t.same([own127.exitCode, own127.spawnError], [127, null], `${label}: a child exiting 127 itself`)
      const slow = await run({ file: 'sleep', args: ['10'], timeout: 100, ...m })
      t.same([slow.timedOut, slow.diagnostic], [true, 'Child timed out'], `${label}: timeout`)
      const term = await run({ file: 'sleep', args: ['10'], timeout: 100, killSignal: 'SIGTERM', ...m })
      t.equal(term.signal, 'SIGTERM', `${label}: killSignal reaches the target through the helper`)
      const fds = await run({ file: 'sh', args: ['-c', 'ls /proc/$$/fd; true'], ...m })
      t.same(fds.stdout.toString().trim().split('\n'), ['0', '1', '2'], `${label}: the target sees only 0-2 (no report fd)`)
      const limits = await run({ file: 'sh', args: ['-c', 'ulimit -n'], rlimits: { nofile: 77 }, measure: true })
      t.equal(limits.stdout.toString().trim(), '77', `${label}: rlimits reach the target`)
    }
  }
})

t.test('a SIGKILL at the deadline reaches the target itself, whose rusage is still its own', async t => {
  for (const [api, run] of APIS) {
    // The helper reports the target's pid when it starts it, and the harness signals the target
    // directly: SIGKILL included, which no helper could forward. The helper then reaps and reports.
    const r = await run({ file: 'sh', args: ['-c', 'echo $$; exec sleep 100'], timeout: 200, measure: true })
    t.equal(r.timedOut, true)
    t.equal(r.signal, 'SIGKILL', `${api}: the target was killed by the deadline's SIGKILL`)
    const target = Number(r.stdout.toString().trim())
    t.equal(r.pid, target, `${api}: the result's pid is the target's`)
    t.equal(r.rusageSource, 'helper', `${api}: the rusage is the target's, from the helper's report`)
    t.ok(r.rusage.maxRSS > 0 && r.rusage.maxRSS < 20 * 1024, `${api}: the target's own max RSS (${r.rusage.maxRSS} KiB), not this process's`)
    t.ok(await eventually(() => processState(target) !== 'alive'), `${api}: the target is gone`)
    const grouped = await run({ file: 'sh', args: ['-c', 'sleep 100 & echo $!; wait'], timeout: 200, measure: true, setsid: true })
    const pid = Number(grouped.stdout.toString().trim())
    t.ok(await eventually(() => processState(pid) !== 'alive'), `${api}: with setsid the whole group goes`)
  }
})
