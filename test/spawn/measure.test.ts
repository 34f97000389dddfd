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

t.test('a SIGKILLed helper takes its target with it', async t => {
  for (const [api, run] of APIS) {
    // SIGKILL at the deadline cannot be forwarded: the target dies by PR_SET_PDEATHSIG.
    const r = await run({ file: 'sh', args: ['-c', 'echo $$; exec sleep 100'], timeout: 200, measure: true })
    t.equal(r.timedOut, true)
    const target = Number(r.stdout.toString().trim())
    t.ok(target > 0 && target !== r.pid, `${api}: the target ${target} is not the helper ${r.pid}`)
    t.ok(await eventually(() => processState(target) !== 'alive'), `${api}: the target died with the helper`)
    const grouped = await run({ file: 'sh', args: ['-c', 'sleep 100 & echo $!; wait'], timeout: 200, measure: true, setsid: true })
    const pid = Number(grouped.stdout.toString().trim())
    t.ok(await eventually(() => processState(pid) !== 'alive'), `${api}: with setsid the whole group goes`)
  }
})
