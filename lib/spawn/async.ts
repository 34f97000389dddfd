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

interface Started {
  pid: number
  result: Promise<ChildResult>
  kill(signal?: string | number): boolean
}

interface Streams {
  stdout: Readable
  stderr: Readable
}

// `streams`: fed as output arrives (startChild). spawnChild has none to show and passes null: each
// chunk would otherwise be copied into a Readable nobody reads, doubling the memory a capture
// takes until the result is collected.
function start(spec: ChildSpec, streams: Streams | null): Started {
  const normalized: NormalizedSpec = normalizeSpec(spec, 'async')
  let aborted = false
  let resolve!: (r: ChildResult) => void
  const result = new Promise<ChildResult>(r => { resolve = r })

  const onData = streams && ((stream: 1 | 2, chunk: Buffer) => { (stream === 1 ? streams.stdout : streams.stderr).push(chunk) })
  let handle: NativeChildHandle | null = null
  const finish = (numbers: Float64Array, buffers: NativeBuffers) => {
    if (handle) running.delete(handle)
    normalized.signal?.removeEventListener('abort', onAbort)
    streams?.stdout.push(null)
    streams?.stderr.push(null)
    resolve(buildResult(numbers, buffers, normalized, aborted))
  }
  const killSignal = normalized.native.killSignal
  const onAbort = () => {
    if (handle?.kill(killSignal)) aborted = true
  }

  const outcome = native.spawnAsync(normalized.native, normalized.input, finish, onData)
  if ('numbers' in outcome) {
    finish(outcome.numbers, outcome.buffers)
    return { pid: 0, result, kill: () => false }
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
  }
}

/** Starts a child and returns a handle: pid, result promise, kill(), and live output streams. */
export function startChild(spec: ChildSpec): ChildProcess {
  const streams: Streams = { stdout: new Readable({ read() {} }), stderr: new Readable({ read() {} }) }
  return { ...start(spec, streams), ...streams }
}

/** Runs a child to completion without blocking the event loop. */
export async function spawnChild(spec: ChildSpec): Promise<ChildResult> {
  return start(spec, null).result
}
