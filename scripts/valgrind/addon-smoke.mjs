// The addon from Node under valgrind memcheck (scripts/check-valgrind.sh): every option through
// the N-API surface (the spec parser, the launch on both paths, the result numbers and buffers),
// sync and async. Only the shape of each outcome is checked, because under valgrind 3.19 a launch
// that needs a pidfd (pipes or a deadline, and every async one) stops at pidfd_open, which valgrind
// fails with ENOSYS: the harness then kills and reaps the child and reports stage 'spawn'. Sync
// spawns with nothing to capture and no deadline wait in wait4 and run for real. The wait loop
// itself runs under memcheck in scripts/valgrind/native-driver.cc.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnChild, spawnChildSync } from '../../dist/index.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-valgrind-'))
const file = path.join(dir, 'out')
const noExec = path.join(dir, 'no-exec')
fs.writeFileSync(noExec, '#!/bin/sh\n', { mode: 0o644 })

const shapes = [
  { file: '/bin/true' },
  { file: 'sh', args: ['-c', 'exit 3'], stdout: 'ignore', stderr: 'ignore' },
  { file: 'sh', args: ['-c', 'kill -TERM $$'], stdout: 'ignore', stderr: 'ignore' },
  { file: 'sh', args: ['-c', 'echo hi'], stdout: { path: file }, stderr: 'stdout' },
  { file: 'sh', args: ['-c', 'echo more'], stdout: { path: file, append: true }, stderr: 'ignore', stdin: { path: file } },
  { file: 'true', argv0: 'renamed', env: { PATH: '/usr/bin:/bin', A: 'b' }, cwd: dir, stdout: 'ignore', stderr: 'ignore' },
  { file: 'true', stdout: 'ignore', stderr: 'ignore', setsid: true, rlimits: { core: 0, cpu: { soft: 10, hard: 20 } } },
  { file: 'true', stdout: 'ignore', stderr: 'ignore', stdin: 'closed', measure: true },
  { file: '/nonexistent/x', stdout: 'ignore', stderr: 'ignore' },
  { file: noExec, stdout: 'ignore', stderr: 'ignore' },
  { file: 'true', cwd: '/nonexistent', stdout: 'ignore', stderr: 'ignore' },
  { file: 'cat', input: 'x'.repeat(70000) },
  { file: 'sleep', args: ['5'], timeout: 20, killSignal: 'SIGTERM', forceKillAfterDelay: 10, graceTimeout: 100 },
  { file: 'sh', args: ['-c', 'echo out; echo err >&2'], maxBuffer: 2 },
  { file: 'true', stdout: 'closed', stderr: 'stdout' },
  { file: 'true', env: { A: 'x\0' } },
  { file: 'true', rlimits: { bogus: 1 } },
]

const outcomes = new Map()
const count = key => outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
function record(r) {
  const fields = ['pid', 'exitCode', 'signal', 'timedOut', 'spawnError', 'diagnostic', 'stdout', 'stderr', 'rusage', 'durationMs']
  if (!fields.every(f => f in r) || !Buffer.isBuffer(r.stdout)) throw new Error(`malformed result ${JSON.stringify(r)}`)
  count(r.spawnError ? `${r.spawnError.stage} ${r.spawnError.code}` : r.signal ?? `exit ${r.exitCode}`)
}
function typed(e) {
  if (!(e instanceof TypeError || e instanceof RangeError) || typeof e.code !== 'string') throw e
  count(`threw ${e.code}`)
}

for (const launcher of ['posix_spawn', 'fork']) {
  for (const shape of shapes) {
    const spec = { ...shape, ...(shape.rlimits && launcher === 'posix_spawn' ? { launcher: 'fork' } : { launcher }) }
    try { record(spawnChildSync(spec)) } catch (e) { typed(e) }
    try { record(await spawnChild(spec)) } catch (e) { typed(e) }
  }
}
fs.rmSync(dir, { recursive: true, force: true })
console.log(`addon-smoke: ${[...outcomes].map(([k, n]) => `${n} ${k}`).join(', ')}`)
