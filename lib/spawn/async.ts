// The async API: the same ChildSpec and ChildResult as spawnChildSync, run on the event loop
// (native/async.cc watches the child's pidfd and pipes with uv_poll; no threadpool).
import { closeSync } from 'node:fs'
import { Socket } from 'node:net'
import { constants } from 'node:os'
import { Duplex, Readable, Writable } from 'node:stream'
import { StdioKind, native, specNumbers, type NativeBuffers, type NativeChildHandle } from './native.js'
import { everyStep, isAborted, whenAborted } from '../abort.js'
import { normalizeSignal, normalizeSpec, terminalSide, type NormalizedSpec } from './normalize.js'
import { buildResult } from './result.js'
import type { ChildResult, ChildSpec } from './types.js'

export interface ChildProcess {
  /** 0 when the launch failed (the result says why), and while { path } targets are still being opened. */
  readonly pid: number
  result: Promise<ChildResult>
  /** Sends `signal` (default: the spec's killSignal, SIGKILL) to the child, or its whole group with
   * setsid; SIGKILL follows after forceKillAfterDelay when the signal is gentler. False once it has ended.
   * 0 sends nothing: true while the child runs, as child_process's kill(0). */
  kill(signal?: string | number): boolean
  /**
   * `stdin: 'pipe'` (and no `input`): the child's stdin, written as it runs, with backpressure
   * (write() returns false until 'drain') and end() for EOF. A child that stopped reading: the
   * write's callback gets EPIPE and the stream closes; no 'error' event is thrown from nowhere.
   * Closed when the child has been reaped. null otherwise.
   */
  stdin: Writable | null
  /** The captured output as it arrives; the result still carries the whole buffers. */
  stdout: Readable
  stderr: Readable
  /**
   * `terminal`: the terminal's master. Read: what the child writes to it (also in
   * `result.stdout`; `stdout` and `stderr` stay empty), with backpressure. Write: the child's
   * input, as typed; write() returns false until the terminal has taken it ('drain'). end()
   * types ^D (VEOF: end of file at the start of a line). With `input`, that is typed first (then
   * ^D) and writes follow it. Ends when the child's last hold on the terminal closes; writes after
   * the child has gone are dropped. null without a terminal.
   */
  terminal: Duplex | null
  /** `terminal`: a new size, and SIGWINCH to the child's foreground group. False once the child
   * has exited, and without a terminal. */
  resize(columns: number, rows: number): boolean
}

/**
 * startChild's stdin: a Writable in front of the pipe's write end, which the addon hands over once
 * the child runs (after its { path } targets are opened, so possibly later than startChild's
 * return); writes made before then wait for it. The pipe itself is a net.Socket: libuv writes it
 * without blocking and says when it drained, which is the backpressure.
 */
class ChildStdin extends Writable {
  #pipe: Socket | null = null
  /** A write or the end made before the child exists: resumed once it does, cancelled if it never does. */
  #waiting: { resume: () => void; callback: (error?: Error | null) => void } | null = null
  /** The write the pipe holds now, until its callback: a destroy cancels it (_destroy). */
  #inFlight: ((error?: Error | null) => void) | null = null

  /**
   * The pipe's write end, from the addon. take() is the addon's own record that this stream owns
   * the fd from now on (and closes it): called before anything else can happen, so that whatever
   * follows (a nextTick callback that throws on the call's way out, a worker terminated meanwhile)
   * cannot leave the fd both the addon's to close and this stream's. Not taken (false): the
   * addon closes it.
   */
  attach(fd: number, take: () => boolean): boolean {
    if (this.destroyed || !take()) return false
    let pipe: Socket
    try {
      pipe = new Socket({ fd, readable: false, writable: true })
    } catch (err) {
      closeSync(fd)
      throw err
    }
    // Errors come back through the writes' callbacks (below); this listener only keeps an error
    // with no write waiting on it from being thrown as an uncaught 'error'.
    pipe.on('error', () => {})
    this.#pipe = pipe
    const waiting = this.#waiting
    this.#waiting = null
    waiting?.resume()
    return true
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const pipe = this.#pipe
    if (!pipe) {
      this.#waiting = { resume: () => this._write(chunk, encoding, callback), callback }
      return
    }
    this.#inFlight = callback
    pipe.write(chunk, error => {
      if (this.#inFlight !== callback) return  // answered already: cancelled by a destroy
      this.#inFlight = null
      if (error && (error as NodeJS.ErrnoException).code === 'EPIPE') {
        // The child closed its stdin (or exited): what it will not read is dropped, as by a shell.
        // Destroyed first, so the callback gets EPIPE and no 'error' event follows.
        this.destroy()
      }
      callback(error)
    })
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.#pipe) {
      this.#waiting = { resume: () => this._final(callback), callback }
      return
    }
    this.#pipe.end(() => callback())
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const pipe = this.#pipe
    // The write the pipe holds, if not all of it is out: a destroyed socket would answer it with
    // success (Node's rule for a destroyed stream), bytes lost or not. It is told ECANCELED, as
    // the writes behind it are told ERR_STREAM_DESTROYED by the stream itself.
    // One all out has its own callback still to come, with success (the bytes are in the pipe).
    const inFlight = this.#inFlight
    const unsent = pipe !== null && ((pipe as unknown as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? pipe.writableLength) > 0
    if (inFlight && unsent) this.#inFlight = null
    // What waits for a child that never came (the launch given up) is cancelled the same way:
    // left waiting, its callback, and every write and end() queued behind it, were never called.
    const waiting = this.#waiting
    this.#waiting = null
    pipe?.destroy()
    this.#pipe = null
    if (inFlight && unsent) inFlight(cancelled())
    waiting?.callback(cancelled())
    callback(error)
  }
}

/** A write given up on: the child is gone (reaped), or was never started. */
function cancelled(): NodeJS.ErrnoException {
  return Object.assign(new Error('write ECANCELED'), { code: 'ECANCELED', errno: -constants.errno.ECANCELED, syscall: 'write' })
}

/**
 * startChild's terminal: a Duplex over the master. The readable side is fed by the addon (the
 * master is read as stream 1, with the same backpressure as a pipe); the writable side writes
 * through the handle, natively (a tty.WriteStream would make the master's writes blocking, so a
 * child that stops reading would stop the event loop): a write the terminal cannot take at once
 * keeps its callback until the addon says the rest went out (onWritable).
 */
class ChildTerminal extends Duplex {
  #handle: NativeChildHandle | null = null
  #waiting: (() => void) | null = null
  #gone = false
  /** Set once the child is running: read() calls it. */
  readMore: (() => void) | null = null

  attach(handle: NativeChildHandle): void {
    this.#handle = handle
  }

  /** A write that returned 0 is all out. */
  drained(): void {
    const callback = this.#waiting
    this.#waiting = null
    callback?.()
  }

  /** The child is reaped and the master closed: the readable side ends, a waiting write is done. */
  gone(): void {
    this.#gone = true
    this.drained()
    this.push(null)
  }

  /** A chunk the child wrote; true: keep reading. Destroyed, the stream takes no more, and the
   * master is read on (into the result) so that the child never blocks on a terminal nobody reads. */
  feed(chunk: Buffer): boolean {
    return this.destroyed ? true : this.push(chunk)
  }

  override _read(): void {
    this.readMore?.()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // -1: the terminal is gone (the child exited): dropped, as keys typed after a program ends.
    if (this.#gone || !this.#handle || this.#handle.write(chunk) !== 0) callback()
    else this.#waiting = callback
  }

  override _final(callback: (error?: Error | null) => void): void {
    this._write(Buffer.from([0x04]), 'binary', callback)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#waiting = null
    this.readMore?.()  // read on: feed() drops what comes
    callback(error)
  }
}

interface Started {
  readonly pid: number
  result: Promise<ChildResult>
  kill(signal?: string | number): boolean
  resize(columns: number, rows: number): boolean
}

interface Streams {
  stdin: ChildStdin | null
  terminal: ChildTerminal | null
  stdout: Readable
  stderr: Readable
  /** Set once the child is running: the Readables' read() calls it. */
  resume?: (stream: 1 | 2) => void
}

// `streams`: fed as output arrives (startChild). spawnChild has none to show and passes null: each
// chunk would otherwise be copied into a Readable nobody reads, doubling the memory a capture
// takes until the result is collected.
/**
 * With { path } targets the launch waits for their opens, and a launch may go to a launcher thread
 * (`offLoop`: a child nothing can reach before its result, native/launch-thread.h); the caller's
 * code runs on meanwhile, and a process.chdir() then moved every relative name (the cwd, the
 * targets still to be opened, a program named by a relative path) to wherever this process had
 * gone by the time the child was started. They are the caller's as of the call: made absolute
 * against the working directory of the moment, as text (no normalisation: `a/..` still walks
 * through `a`, as the kernel does). (A launch with no cwd that does leave the loop is given the
 * directory of the call by the addon, which alone knows that it leaves.)
 */
function pinRelativeNames(normalized: NormalizedSpec, offLoop: boolean): void {
  const n = normalized.native
  if (!n.stdio.some(s => s.kind === StdioKind.path)) {
    // Nothing relative (the usual spec): the working directory is not even asked for.
    if (!offLoop || (n.cwd === null ? !n.file.includes('/') || n.file.startsWith('/') : n.cwd.startsWith('/'))) return
  }
  const here = process.cwd()
  const pin = (name: string) => (name.startsWith('/') ? name : `${here}/${name}`)
  for (const s of n.stdio) if (s.kind === StdioKind.path) s.path = pin(s.path!)
  if (n.cwd !== null) {
    n.cwd = pin(n.cwd)
    return  // a relative program is found from the child's own cwd, which is now absolute
  }
  // A program named by a path with a slash runs from this directory (one without is searched for
  // on PATH): the measuring helper gets it as its first argument after '--'.
  if (n.measure) {
    const at = n.argv.indexOf('--') + 1
    if (at > 0 && n.argv[at]!.includes('/')) n.argv[at] = pin(n.argv[at]!)
  } else if (n.file.includes('/')) {
    n.file = pin(n.file)
  }
}

function start(spec: ChildSpec, streams: Streams | null): Started {
  const normalized: NormalizedSpec = normalizeSpec(spec, 'async')
  // The addon may launch this child off the loop (native/async.cc, LaunchOffLoopIfBusy).
  pinRelativeNames(normalized, streams === null && normalized.signal === null && !normalized.native.measure && !normalized.terminal)
  const signal = normalized.signal
  // A stdin pipe with nothing to feed it: startChild's to write.
  if (streams && normalized.native.stdio[0].kind === StdioKind.pipe && normalized.input === null) streams.stdin = new ChildStdin()
  const terminal = streams && normalized.terminal ? (streams.terminal = new ChildTerminal()) : null
  let aborted = false
  let resolve!: (r: ChildResult) => void
  let reject!: (e: unknown) => void
  const result = new Promise<ChildResult>((res, rej) => { resolve = res; reject = rej })

  // push()'s answer is the backpressure: false, and the addon stops reading that pipe until the
  // Readable asks for more (its read(), wired to handle.resume in startChild).
  // With a terminal, stream 1 is its master.
  const onData = streams && (terminal
    ? (_stream: 1 | 2, chunk: Buffer) => terminal.feed(chunk)
    : (stream: 1 | 2, chunk: Buffer) => {
      const readable = stream === 1 ? streams.stdout : streams.stderr
      return readable.destroyed ? true : readable.push(chunk)
    })
  let handle: NativeChildHandle | null = null
  const killSignal = normalized.native.killSignal
  // Set before the kill: a child still opening its { path } targets settles inside kill().
  const onAbort = () => {
    aborted = true
    if (!handle?.kill(killSignal)) aborted = false
  }
  // Called by the addon once, when the child has been reaped (or never started). Whatever throws
  // here rejects this child's promise; a throwing stream listener is the caller's uncaught
  // exception (the addon raises it), and the result still arrives.
  const finish = (numbers: Float64Array, buffers: NativeBuffers) => {
    try {
      stopWatching?.()
      resolve(buildResult(numbers, buffers, normalized, aborted))
    } catch (err) {
      reject(err)
    }
    // startChild's streams end. Each step runs whatever the one before it threw: push(null) can
    // run a 'readable' or 'end' listener synchronously, and a throw there had left stderr unended,
    // stdin's pipe open (its fd leaked) and the terminal never gone. The first throw is still the
    // caller's uncaught exception, once all have run. (spawnChild has no streams: nothing to end.)
    if (streams === null) return
    everyStep([
      () => streams.stdout.push(null),
      () => streams.stderr.push(null),
      // The child is gone: its fd is released, and writes still queued are told ECANCELED, even
      // if a grandchild holds the pipe open (it could hold the writes for ever).
      () => streams.stdin?.destroy(),
      () => terminal?.gone(),
    ])
  }

  // Everything that can throw is done before the child exists.
  const alreadyAborted = signal !== null && isAborted(signal)
  // One listener on the signal for all its children (lib/abort.ts).
  const stopWatching = signal && !alreadyAborted ? whenAborted(signal, onAbort) : null
  // The handle serves kill(), the streams and pid: spawnChild without a signal uses none of them.
  const wantHandle = streams !== null || signal !== null
  let outcome
  try {
    const stdin = streams?.stdin
    outcome = native.spawnAsync(normalized.native, specNumbers(normalized.native), normalized.input, finish, onData, stdin ? (fd, take) => stdin.attach(fd, take) : null,
      terminal && (() => terminal.drained()), wantHandle)
  } catch (err) {
    stopWatching?.()
    throw err
  }
  // Settled at once (the launch failed), or running without a handle (wantHandle false: spawnChild
  // reads nothing but the result): nothing to kill or resize.
  if (outcome === null || 'numbers' in outcome) {
    if (outcome) finish(outcome.numbers, outcome.buffers)
    return { pid: 0, result, kill: () => false, resize: () => false }
  }
  // killOnExit is the addon's (native/async.cc): an atexit handler, which no 'exit' listener can
  // get in the way of.
  const h = (handle = outcome.handle)
  if (streams) streams.resume = (stream: 1 | 2) => h.resume(stream)
  if (terminal) {
    terminal.attach(h)
    terminal.readMore = () => h.resume(1)
  }
  if (alreadyAborted) onAbort()
  return {
    get pid() { return h.pid },
    result,
    // 0 sends nothing: true while the child runs (as child_process's kill(0)).
    kill: (sig?: string | number) => h.kill(sig === undefined ? killSignal : sig === 0 ? 0 : normalizeSignal('signal', sig, killSignal)),
    resize: (columns: number, rows: number) => {
      terminalSide('columns', columns)
      terminalSide('rows', rows)
      return terminal !== null && h.resize(columns, rows)
    },
  }
}

/**
 * startChild's stdout or stderr. Its read() asks the addon for more (`readMore`): push() returning
 * false is the backpressure. Destroyed, it asks once more and takes no more chunks (onData then
 * answers true), so the pipe is read on into the result and the child never blocks on a stream
 * nobody reads any longer.
 */
function outputStream(readMore: () => void): Readable {
  return new Readable({
    read: readMore,
    destroy(error, callback) {
      readMore()
      callback(error)
    },
  })
}

/** Starts a child and returns a handle: pid, result promise, kill(), and live output streams. */
export function startChild(spec: ChildSpec): ChildProcess {
  const streams: Streams = {
    stdin: null,
    terminal: null,
    stdout: outputStream(() => streams.resume?.(1)),
    stderr: outputStream(() => streams.resume?.(2)),
  }
  const started = start(spec, streams)
  return {
    get pid() { return started.pid },
    result: started.result,
    kill: started.kill,
    stdin: streams.stdin,
    stdout: streams.stdout,
    stderr: streams.stderr,
    terminal: streams.terminal,
    resize: started.resize,
  }
}

/** Runs a child to completion without blocking the event loop. */
export function spawnChild(spec: ChildSpec): Promise<ChildResult> {
  // Not an async function: that would wrap the result's promise in a second one, settled two
  // microtasks later. A spec that is refused still rejects rather than throws.
  try {
    return start(spec, null).result
  } catch (err) {
    return Promise.reject(err)
  }
}
