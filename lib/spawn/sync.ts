import { native, rawNumbers, specNumbers } from './native.js'
import { normalizeSpec } from './normalize.js'
import { buildResult } from './result.js'
import type { ChildResult, ChildSpec } from './types.js'

/**
 * Runs a child to completion on the calling thread: launch (posix_spawn or the fork path), drain
 * its pipes, enforce the timeout with a thread-directed SIGALRM, reap it with wait4.
 */
export function spawnChildSync(spec: ChildSpec): ChildResult {
  const normalized = normalizeSpec(spec)
  const numbers = rawNumbers()
  const buffers = native.spawnSync(normalized.native, specNumbers(normalized.native), normalized.input, numbers)
  return buildResult(numbers, buffers, normalized)
}
