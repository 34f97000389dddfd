// Stand-in for the harness's spawnChildSync (lib/spawn) while it is being written: the same
// ChildSpec in, the ChildResult fields the tests read out, built on node:child_process.
import { spawnSync } from 'node:child_process'
import type { ChildSpec } from '../../lib/spawn/types.js'
import type { RunResult } from './run.js'

export function nodeSpawnChildSync(spec: ChildSpec): RunResult {
  const result = spawnSync(spec.file, spec.args ?? [], {
    cwd: spec.cwd,
    env: spec.env,
    input: spec.input,
    stdio: [spec.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  })
  if (result.error !== undefined) throw result.error
  return {
    exitCode: result.status,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
  }
}
