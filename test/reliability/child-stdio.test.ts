// Faults a child brings to its pipes: it closes its stdout (or both outputs, or its stdin with
// megabytes still to write) early and goes on running. The harness keeps waiting for the exit, not
// for EOF, takes EPIPE rather than SIGPIPE, and reports the status. Every path (API × launcher ×
// measure); afterwards no fd or child is left.
import t from 'tap'
import { eachPath } from '../helpers.js'
import { baseline } from './helpers.js'

t.test('a child that closes its stdout or stdin early', t => eachPath(t, '', async (t, { run }) => {
  const before = baseline()
  for (const timeout of [0, 10000]) {
    const label = timeout ? 'with a deadline' : 'no deadline'
    const out = await run({ file: 'sh', args: ['-c', 'echo first; exec >&-; sleep 0.2; echo late >&2; exit 3'], timeout })
    t.same([out.exitCode, out.stdout.toString(), out.stderr.toString(), out.timedOut], [3, 'first\n', 'late\n', false], `${label}: stdout closed, the wait goes on to the exit`)
    const both = await run({ file: 'sh', args: ['-c', 'exec >&- 2>&-; sleep 0.2; exit 4'], timeout })
    t.same([both.exitCode, both.stdout.length, both.stderr.length], [4, 0, 0], `${label}: stdout and stderr closed, still reaped with its status`)
    const input = Buffer.alloc(4 << 20, 0x61)
    const stdin = await run({ file: 'sh', args: ['-c', 'exec <&-; sleep 0.1; echo done'], input, timeout })
    t.same([stdin.exitCode, stdin.stdout.toString(), stdin.signal], [0, 'done\n', null], `${label}: stdin closed with 4 MiB still to write (EPIPE, not SIGPIPE)`)
    const head = await run({ file: 'head', args: ['-c', '10'], input, timeout })
    t.same([head.exitCode, head.stdout.length], [0, 10], `${label}: a reader that stops after 10 bytes`)
  }
  await before.check(t)
}))
