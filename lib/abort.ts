// AbortSignals, as every API of this package takes them: checked by their brand, read by
// AbortSignal's own getter, and listened to once per signal however many children or compiles
// one signal cancels. (everyStep, at the end, is how the abort's callbacks run, and a child's end
// in lib/spawn/async.ts.)
import { addAbortListener } from 'node:events'
import { types } from 'node:util'

// The real thing, not whatever the object has under those names: a look-alike
// (Object.create(AbortSignal.prototype)), a Proxy or an object with a throwing or lying `aborted`
// getter is refused before anything starts, and later code can rely on AbortSignal's behaviour.
const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!
const reasonGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'reason')!.get!
const addListener = EventTarget.prototype.addEventListener
const removeListener = EventTarget.prototype.removeEventListener

// The listener option under which no earlier listener's stopImmediatePropagation() keeps ours
// from running. A signal is shared (a daemon's shutdown signal), and a listener of someone else's
// that stops the event there would leave every child on it running and every compile waiting.
// Node's events.addAbortListener listens that way, under an option keyed by a symbol of its own
// that it does not export; it is learned here by asking addAbortListener to listen on an object
// that keeps the options it is given. We add the listener ourselves, with AbortSignal's own
// method: addAbortListener would call whatever the signal object has as addEventListener.
// Should a Node ever pass no such option, listeners are added as before, with no option.
const resistStopPropagation: Record<symbol, unknown> = (() => {
  const options: Record<symbol, unknown> = {}
  const probe = {
    aborted: false,
    addEventListener(_type: string, _listener: unknown, given: unknown): void {
      if (given === null || typeof given !== 'object') return
      for (const key of Object.getOwnPropertySymbols(given)) options[key] = (given as Record<symbol, unknown>)[key]
    },
    removeEventListener(): void {},
  }
  try {
    addAbortListener(probe as unknown as AbortSignal, () => {})
  } catch {
    // A Node whose addAbortListener checks the brand: nothing learned.
  }
  return options
})()

/** Whether `value` is an AbortSignal by its brand (AbortSignal's own getter accepts it). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value === null || typeof value !== 'object' || types.isProxy(value)) return false
  try {
    abortedGetter.call(value)
    return true
  } catch {
    return false
  }
}

/** Whether a signal that passed the brand check is aborted, by AbortSignal's own getter: an own
 * `aborted` property on the object (a getter that lies or throws) is never consulted. */
export function isAborted(signal: AbortSignal): boolean {
  return abortedGetter.call(signal) as boolean
}

/** An aborted signal's reason, by AbortSignal's own getter: an own `reason` on the object (a getter
 * that throws, in the abort's listener, was an uncaught exception) is never consulted. */
export function abortReason(signal: AbortSignal): unknown {
  return reasonGetter.call(signal)
}

interface Watch {
  readonly callbacks: Set<() => void>
  readonly listener: () => void
}

const watches = new WeakMap<AbortSignal, Watch>()

/**
 * Calls `callback` once, when `signal` aborts; the function returned stops that (and is a no-op
 * once it has run). For a signal that is not aborted yet: the caller checks isAborted first.
 *
 * A signal has one 'abort' listener of ours however many wait on it. A listener for each child
 * made Node print MaxListenersExceededWarning ("Possible EventTarget memory leak detected")
 * once eleven children shared one signal (a daemon's shutdown signal, say), and cost each an
 * addEventListener and a removeEventListener. The listener goes once nothing waits on the
 * signal: Node keeps an AbortSignal.timeout() that has an abort listener alive until it fires.
 * An 'abort' event dispatched by hand on a signal that is not aborted is not an abort: nothing
 * is called, and the listener stays. Another listener's stopImmediatePropagation() does not keep
 * this one from running (resistStopPropagation, above).
 *
 * The callbacks run in the order they were registered; each runs whatever the one before it
 * threw, and the first throw is then the listener's (an uncaught exception, as EventTarget
 * reports a throwing listener).
 */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let watch = watches.get(signal)
  if (watch === undefined) {
    const callbacks = new Set<() => void>()
    const listener = (): void => {
      if (!isAborted(signal)) return
      removeListener.call(signal, 'abort', listener)
      watches.delete(signal)
      const waiting = [...callbacks]
      callbacks.clear()
      everyStep(waiting)
    }
    watch = { callbacks, listener }
    addListener.call(signal, 'abort', listener, resistStopPropagation)
    watches.set(signal, watch)
  }
  // A registration of its own: the same callback registered twice is called twice, and stopping
  // one leaves the other.
  const entry = (): void => callback()
  const { callbacks, listener } = watch
  callbacks.add(entry)
  return () => {
    if (!callbacks.delete(entry) || callbacks.size > 0) return
    removeListener.call(signal, 'abort', listener)
    watches.delete(signal)
  }
}

/** Runs every step, whichever throws; then throws the first error, if one did. */
export function everyStep(steps: ReadonlyArray<() => unknown>): void {
  let failed = false
  let first: unknown
  for (const step of steps) {
    try {
      step()
    } catch (err) {
      if (!failed) first = err
      failed = true
    }
  }
  if (failed) throw first
}
