// Fault: RLIMIT_NOFILE lowered under a sync wait. The waiter polls a handful of fds at once (the
// pidfd, the pipes, the deadline's); the kernel refuses a poll of more fds than RLIMIT_NOFILE
// (EINVAL), and another process (prlimit, here the child itself) can lower that limit while the
// call waits. The wait then goes on one fd at a time: the child runs to its own end and all its
// output arrives. Only where not even one fd can be polled (the limit lowered to 0) does the
// harness end the child, and the result says so (spawnError 'spawn', EINVAL), rather than reading
// like a SIGKILL from anybody.
import t from 'tap'
import { PACKAGE, runNodeScript } from './helpers.js'

interface Row {
  limit: number
  deadline: boolean
  exitCode: number | null
  signal: string | null
  stage: string | null
  code: string | null
  stdoutLength: number
  stderr: string
  /** 1 while the child's pid is still there (running or a zombie), 0 once reaped: kill(pid, 0), which needs no fd. */
  children: number
}

const OUTPUT = 300_000  // several pipe-fulls: the pipe is polled again and again

const script = (limit: number, deadline: boolean) => `
  const fs = require('fs')
  const { spawnChildSync } = require(${PACKAGE})
  const r = spawnChildSync({
    file: '/bin/sh',
    args: ['-c', 'prlimit --pid $PPID --nofile=${limit}:${limit} || exit 9; head -c ${OUTPUT} /dev/zero; echo done >&2'],
    ${deadline ? 'timeout: 60000,' : ''}
  })
  fs.writeSync(1, JSON.stringify({
    limit: ${limit}, deadline: ${deadline}, exitCode: r.exitCode, signal: r.signal,
    stage: r.spawnError && r.spawnError.stage, code: r.spawnError && r.spawnError.code,
    stdoutLength: r.stdout.length, stderr: r.stderr.toString(), children: (() => { try { process.kill(r.pid, 0); return 1 } catch (e) { return e.code === 'ESRCH' ? 0 : 1 } })(),
  }) + '\\n')
`

const prlimit = runNodeScript<{ ok: boolean }>(`
  const r = require(${PACKAGE}).spawnChildSync({ file: 'prlimit', args: ['--version'] })
  console.log(JSON.stringify({ ok: r.exitCode === 0 }))
`)

t.test('RLIMIT_NOFILE lowered under a sync wait', { skip: prlimit.ok ? false : 'prlimit (util-linux) is not installed' }, async t => {
  for (const deadline of [false, true]) {
    for (const limit of [3, 1]) {
      const row = runNodeScript<Row>(script(limit, deadline))
      t.same(
        { exitCode: row.exitCode, signal: row.signal, stage: row.stage, stdoutLength: row.stdoutLength, stderr: row.stderr, children: row.children },
        { exitCode: 0, signal: null, stage: null, stdoutLength: OUTPUT, stderr: 'done\n', children: 0 },
        `limit ${limit}${deadline ? ', with a deadline' : ''}: the child runs to its end, all its output read one fd at a time`,
      )
    }
    const row = runNodeScript<Row>(script(0, deadline))
    t.same({ stage: row.stage, code: row.code, children: row.children }, { stage: 'spawn', code: 'EINVAL', children: 0 },
      `limit 0${deadline ? ', with a deadline' : ''}: not even one fd can be polled; the result says why the child was ended`)
  }
})
