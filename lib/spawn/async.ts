// The async API: the same ChildSpec and ChildResult as spawnChildSync, run on the event loop
// (native/async.cc watches the child's pidfd and pipes with uv_poll; no threadpool).
import { Readable } from 'node:stream'
import { native, type NativeBuffers, type NativeChildHandle } from './native.js'
import { normalizeSignal, normalizeSpec, type NormalizedSpec } from './normalize.js'
import { buildResult } from './result.js'
import type { ChildResult, ChildSpec } from './types.js'

export interface ChildProcess {
  /** 0 when the launch failed (the result says why). */
  pid: number
  result: Promise<ChildResult>
  /** Sends `signal` (default: the spec's killSignal, SIGKILL) to the child, or its whole group with
   * setsid; SIGKILL follows after forceKillAfterDelay when the signal is gentler. False once it has ended. */
  kill(signal?: string | number): boolean
  /** The captured output as it arrives; the result still carries the whole buffers. */
  stdout: Readable
  stderr: Readable
}

// Children to kill when the process exits (killOnExit).
const running = new Set<NativeChildHandle>()
let exitHookInstalled = false
function killAllOnExit() {
  for (const handle of running) handle.kill(9)
}

// `live`: feed the stdout/stderr streams as output arrives. spawnChild has no streams to show, so
// it asks for none: each chunk would otherwise be copied into a Readable nobody reads, doubling
// the memory a capture takes until the result is collected.
function start(spec: ChildSpec, live: boolean): ChildProcess {
  const normalized: NormalizedSpec = normalizeSpec(spec, 'async')
  const stdout = new Readable({ read() {} })
  const stderr = new Readable({ read() {} })
  let aborted = false
  let resolve!: (r: ChildResult) => void
  const result = new Promise<ChildResult>(r => { resolve = r })

  const onData = (stream: 1 | 2, chunk: Buffer) => { (stream === 1 ? stdout : stderr).push(chunk) }
  let handle: NativeChildHandle | null = null
  const finish = (numbers: Float64Array, buffers: NativeBuffers) => {
    if (handle) running.delete(handle)
    normalized.signal?.removeEventListener('abort', onAbort)
    stdout.push(null)
    stderr.push(null)
    resolve(buildResult(numbers, buffers, normalized, aborted))
  }
  const killSignal = normalized.native.killSignal
  const onAbort = () => {
    if (handle?.kill(killSignal)) aborted = true
  }

  const outcome = native.spawnAsync(normalized.native, normalized.input, finish, live ? onData : null)
  if ('numbers' in outcome) {
    finish(outcome.numbers, outcome.buffers)
    return { pid: 0, result, kill: () => false, stdout, stderr }
  }
  handle = outcome.handle
  if (normalized.killOnExit) {
    running.add(handle)
    if (!exitHookInstalled) {
      exitHookInstalled = true
      process.on('exit', killAllOnExit)
    }
  }
  if (normalized.signal) {
    if (normalized.signal.aborted) onAbort()
    else normalized.signal.addEventListener('abort', onAbort, { once: true })
  }
  const h = handle
  return {
    pid: outcome.pid,
    result,
    kill: (signal?: string | number) => h.kill(signal === undefined ? killSignal : normalizeSignal('signal', signal, killSignal)),
    stdout,
    stderr,
  }
}

/** Starts a child and returns a handle: pid, result promise, kill(), and live output streams. */
export function startChild(spec: ChildSpec): ChildProcess {
  return start(spec, true)
}

/** Runs a child to completion without blocking the event loop. */
export async function spawnChild(spec: ChildSpec): Promise<ChildResult> {
  return start(spec, false).result
}
