// The package's one vocabulary of argument errors: every bad argument, in every layer (the
// harness, the CUDA adapters, the Program handle, the PTX emitter, the ELF packager), is built
// here. Each is a TypeError or RangeError with a `code` and the offending argument's path in
// `field`, and its message names that field first:
//
//   <field> must be <expected> (received <describe(value)>)      a wrong type, or out of range
//   <field> <what is wrong with it>                                a right type, an unusable value
//   <field>: <problem>                                             text that cannot be parsed, an fd
//
// with Node's own codes: ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE, ERR_OUT_OF_RANGE,
// ERR_INVALID_FD, ERR_INCOMPATIBLE_OPTION_PAIR. Domain errors stay what they are (ProgramError
// with its status, KnobFileError, CubinError). The PTX emitter and the ELF packager keep the codes
// and the shape callers already match on (ERR_PTX_* / ERR_ELF_*, `<field>: expected <type>, got
// <describe(value)>` and `<field>: <problem>`); those shapes are built here too (fieldTypeError,
// fieldError).

import { fileURLToPath } from 'node:url'
import { getSystemErrorMap, types } from 'node:util'
import { isAbortSignal } from './abort.js'

export type ArgumentErrorCode =
  | 'ERR_INVALID_ARG_TYPE'
  | 'ERR_INVALID_ARG_VALUE'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_INVALID_FD'
  | 'ERR_INCOMPATIBLE_OPTION_PAIR'

/** An argument error: its `code` and the path of the argument it is about. */
export type ArgumentError<E extends Error = TypeError | RangeError, C extends string = ArgumentErrorCode> = E & { code: C; field: string }
export type ArgumentTypeError = ArgumentError<TypeError>
export type ArgumentRangeError = ArgumentError<RangeError>

/** The one constructor: a TypeError or RangeError carrying `code` and `field`. */
export function argumentError<E extends TypeError | RangeError, C extends string>(
  Kind: new (message: string) => E,
  code: C,
  field: string,
  message: string,
): ArgumentError<E, C> {
  return Object.assign(new Kind(message), { code, field })
}

/** A short, safe rendering of a bad value for a message: `string "abc"`, `number 42`, `an array`. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (isRevokedProxy(value)) return 'a revoked Proxy'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(shortened(value))}`
    case 'function':
      return 'a function'
    case 'object':
      return 'an object'
    default:
      return `${typeof value} ${String(value)}`
  }
}

/** At most 40 characters of a caller's text, for a message: a megabyte of it is no help there. */
function shortened(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}...` : text
}

/** `field` has the wrong type. */
export function invalidType(field: string, expected: string, actual: unknown): ArgumentTypeError {
  return argumentError(TypeError, 'ERR_INVALID_ARG_TYPE', field, `${field} must be ${expected} (received ${describe(actual)})`)
}

/**
 * `field` has the right type but a value that cannot be used: `<field> <reason>`, with the value
 * described when it is passed (`reason` is e.g. "must not be empty", "is not a known option").
 */
export function invalidValue(field: string, reason: string, ...actual: [unknown?]): ArgumentTypeError {
  const received = actual.length === 0 ? '' : ` (received ${describe(actual[0])})`
  return argumentError(TypeError, 'ERR_INVALID_ARG_VALUE', field, `${field} ${reason}${received}`)
}

/** Text in `field` that cannot be parsed: `<field>: <problem>`, e.g. an unterminated quote. */
export function unparsable(field: string, problem: string): ArgumentTypeError {
  return argumentError(TypeError, 'ERR_INVALID_ARG_VALUE', field, `${field}: ${problem}`)
}

/** A number outside its range. */
export function outOfRange(field: string, range: string, actual: unknown): ArgumentRangeError {
  return argumentError(RangeError, 'ERR_OUT_OF_RANGE', field, `${field} must be ${range} (received ${describe(actual)})`)
}

/** An fd that is not open in this process. */
export function badFd(field: string, fd: number): ArgumentRangeError {
  return argumentError(RangeError, 'ERR_INVALID_FD', field, `${field}: fd ${fd} is not an open file descriptor`)
}

/** Two options that cannot be given together; `field` is the first. */
export function incompatible(first: string, second: string, reason: string): ArgumentTypeError {
  return argumentError(TypeError, 'ERR_INCOMPATIBLE_OPTION_PAIR', first, `${first} cannot be combined with ${second}: ${reason}`)
}

// The PTX and ELF layers' shapes, each with the layer's own code.

/** `<field>: expected <expected>, got <describe(value)>`. */
export function fieldTypeError<C extends string>(code: C, field: string, expected: string, actual: unknown): ArgumentError<TypeError, C> {
  return argumentError(TypeError, code, field, `${field}: expected ${expected}, got ${describe(actual)}`)
}

/** `<field>: <problem>`, for a value of the right type that the layer cannot take. */
export function fieldError<C extends string>(code: C, field: string, problem: string): ArgumentError<RangeError, C> {
  return argumentError(RangeError, code, field, `${field}: ${problem}`)
}

/**
 * A layer's two argument-error builders under its own codes (the PTX emitter's ERR_PTX_*, the
 * packager's ERR_ELF_*): `<field>: expected <what>, got <value>` and `<field>: <problem>`.
 */
export function layerErrors<TypeCode extends string, RangeCode extends string>(typeCode: TypeCode, rangeCodes: readonly RangeCode[]) {
  return {
    codes: [typeCode, ...rangeCodes] as Array<TypeCode | RangeCode>,
    typeError: (field: string, expected: string, got: unknown): ArgumentError<TypeError, TypeCode> =>
      fieldTypeError(typeCode, field, expected, got),
    rangeError: (code: RangeCode, field: string, message: string): ArgumentError<RangeError, RangeCode> =>
      fieldError(code, field, message),
  }
}

// The checks every layer repeats, built on the errors above.

export function requireString(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidType(field, 'a string', value)
  return value
}

export function requireObject(field: string, value: unknown): void {
  if (!isRecord(value)) throw invalidType(field, 'an object', value)
}

// A revoked Proxy throws V8's uncoded TypeError at nearly anything asked of it (Array.isArray
// included: "Cannot perform 'IsArray' on a proxy that has been revoked"); util.types.isProxy does
// not. Every check of a caller's object or array asks these, never Array.isArray itself, so a
// revoked Proxy is refused naming its field.

/** A Proxy that has been revoked: Array.isArray, which answers any other value, throws for one. */
export function isRevokedProxy(value: unknown): boolean {
  if (!types.isProxy(value)) return false
  try {
    Array.isArray(value)
    return false
  } catch {
    return true
  }
}

/** Array.isArray that cannot throw: a revoked Proxy is no array. */
export function isArray(value: unknown): value is unknown[] {
  return !isRevokedProxy(value) && Array.isArray(value)
}

/** An object whose fields can be read: not null, not an array, not a revoked Proxy. */
export function isRecord(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !isRevokedProxy(value) && !Array.isArray(value)
}

/** argv and file names are C strings: a NUL byte would silently cut them short. */
export function requireNoNul(field: string, value: string): string {
  if (value.includes('\0')) throw invalidValue(field, 'must not contain NUL bytes')
  return value
}

/** An optional AbortSignal, checked by its brand (lib/abort.ts): a look-alike made with
 * Object.create(AbortSignal.prototype) passes instanceof, and failed later with no code. */
export function requireAbortSignal(field: string, value: unknown): AbortSignal | undefined {
  if (value !== undefined && !isAbortSignal(value)) throw invalidType(field, 'an AbortSignal', value)
  return value
}

// URL's own href getter reads the URL's private state: it answers for a real URL and throws for
// anything else, a look-alike made with Object.create(URL.prototype) and a Proxy around a URL
// included (both pass instanceof URL, and URL's getters then threw V8's uncoded "Cannot read
// private member"). What it returns is the URL's, whatever getters a subclass defines.
const urlHref = Object.getOwnPropertyDescriptor(URL.prototype, 'href')!.get!

/** A URL's href, read by URL's own getter; undefined for anything that is not a URL by its brand. */
function hrefOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined
  try {
    return urlHref.call(value) as string
  } catch {
    return undefined
  }
}

/**
 * A path given as a string or a file: URL (as Node's own APIs take paths), as a string: the one
 * reading of every path a caller may give as a URL (a child's `file` and `cwd`, a spawned tool's).
 * The URL is checked by its brand and read by its href alone. A file: URL that names no path on
 * this machine (a host other than localhost, an encoded '/') is refused naming the field, with
 * Node's reason: fileURLToPath's own ERR_INVALID_FILE_URL_HOST and _PATH named neither.
 */
export function requirePath(field: string, value: unknown): string {
  if (typeof value === 'string') return value
  const href = hrefOf(value)
  // An object might have been meant as a URL; anything else was meant as the string.
  if (href === undefined) throw invalidType(field, typeof value === 'object' && value !== null ? 'a string or a file: URL' : 'a string', value)
  const url = new URL(href)
  if (url.protocol !== 'file:') throw invalidValue(field, `must be a string or a file: URL (received ${url.protocol} URL)`)
  try {
    return fileURLToPath(url)
  } catch (error) {
    throw invalidValue(field, `must be a file: URL that names a path on this machine (received ${shortened(href)}): ${(error as Error).message}`)
  }
}

/** A timeout in whole milliseconds, as the tools' adapters take it: 0 = none. */
export function requireTimeout(value: unknown): number {
  if (typeof value !== 'number') throw invalidType('timeout', 'a number of milliseconds', value)
  if (!Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) throw outOfRange('timeout', `an integer from 0 to ${MAX_DELAY_MS} (0 = no timeout)`, value)
  return value
}

/**
 * The longest delay a timeout, forceKillAfterDelay or graceTimeout may ask for: 2^31-1 ms (about
 * 24.8 days), Node's own ceiling for timers and child_process timeouts. Longer is refused rather
 * than silently shortened (or, as a wrapped-around timer, fired at once).
 */
export const MAX_DELAY_MS = 2 ** 31 - 1

// How every layer reads what a caller gives: an option object by its own fields, an array by its
// own elements. A value inherited from a polluted Object.prototype or Array.prototype is as if
// absent, never an option (a `sass` of every object, a `linkage` of every function).

/** An option object's field, its own only: one inherited from a polluted Object.prototype is undefined. */
export function own(value: object, key: string): unknown {
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined
}

/** An array's element, its own only: a hole is undefined, never Array.prototype's. */
export function element(array: readonly unknown[], i: number): unknown {
  return Object.hasOwn(array, i) ? array[i] : undefined
}

/**
 * A caller's object as its own enumerable fields, each read once, in a copy without a prototype:
 * a field the object does not have reads undefined there, never an inherited one.
 */
export function ownFields<T extends object>(value: T): T {
  const copy = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(value)) copy[key] = (value as Record<string, unknown>)[key]
  return copy as T
}

/**
 * The names of every field of an options type, for ownOptions: written as `{ name: true, ... }`
 * so that the compiler holds the list to the type both ways (a field of the type left out would
 * refuse a real option; a name not in it would take a wrong one).
 */
export function optionKeys<T extends object>(names: { readonly [K in keyof T]-?: true }): ReadonlySet<string> {
  // A Set: a spec's keys are looked up on every spawn.
  return new Set(Object.keys(names))
}

/**
 * An own field of an option object that is none of its options: `<field> is not a known option`,
 * with the options it has listed after it when `known` is given (a short list: `(columns, rows)`).
 */
export function unknownOption(field: string, known?: readonly string[]): ArgumentTypeError {
  return invalidValue(field, known === undefined ? 'is not a known option' : `is not a known option (${known.join(', ')})`)
}

/**
 * A caller's option object as ownFields copies it, with every one of its own fields one of
 * `known`: any other (a misspelt `optlevel`, a `sigal`) is refused as `<field>.<key> is not a known
 * option`, never silently absent with its default used in its place. Its options are its own
 * enumerable string keys, each read once: a symbol key is no option, and a field inherited from a
 * polluted Object.prototype is neither refused nor read.
 */
export function ownOptions<T extends object>(field: string, value: T, known: ReadonlySet<string>): T {
  requireObject(field, value)
  const copy = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw unknownOption(`${field}.${key}`)
    copy[key] = (value as Record<string, unknown>)[key]
  }
  return copy as T
}

/**
 * A Uint8Array (a Buffer among them) by its brand: a Proxy of one, or an object made with
 * Object.create(Uint8Array.prototype), passes instanceof and is none (its getters then threw V8's
 * uncoded "incompatible receiver").
 */
export function isBytes(value: unknown): value is Uint8Array {
  return types.isUint8Array(value)
}

/**
 * An ArrayBufferView (a Buffer, a typed array, a DataView) by its brand: a Proxy of one, or an
 * object made with a view's prototype, is none (the views' own getters throw V8's uncoded
 * "incompatible receiver" for both).
 */
export function isView(value: unknown): value is ArrayBufferView {
  return ArrayBuffer.isView(value) && !types.isProxy(value)
}

/**
 * A view's bytes (isView) as a Uint8Array over the same memory; null when its ArrayBuffer was
 * detached (transferred away), which leaves it no memory at all. A DataView past the end of a
 * resizable buffer that shrank has no bytes left: an empty one, as a typed array there reads.
 */
export function viewBytes(view: ArrayBufferView): Uint8Array | null {
  // The view's own memory, by the intrinsic getters: a subclass's or an own `byteLength`,
  // `byteOffset` or `buffer` had given a child no input, or bytes from outside the view (Buffer's
  // pool). On a detached view a DataView's byteLength getter throws, a typed array's says 0; the buffer
  // getter answers for both.
  const read = types.isDataView(view) ? DATA_VIEW : TYPED_ARRAY
  const buffer = read.buffer.call(view) as ArrayBufferLike
  try {
    return new Uint8Array(buffer, read.byteOffset.call(view) as number, read.byteLength.call(view) as number)
  } catch {
    return isDetached(buffer) ? null : new Uint8Array(0)
  }
}

/** A detached ArrayBuffer is the one no view can be made over, not even an empty one. */
function isDetached(buffer: ArrayBufferLike): boolean {
  try {
    new Uint8Array(buffer, 0, 0)
    return false
  } catch {
    return true
  }
}

const getters = (prototype: object) => ({
  buffer: Object.getOwnPropertyDescriptor(prototype, 'buffer')!.get!,
  byteOffset: Object.getOwnPropertyDescriptor(prototype, 'byteOffset')!.get!,
  byteLength: Object.getOwnPropertyDescriptor(prototype, 'byteLength')!.get!,
})
const TYPED_ARRAY = getters(Object.getPrototypeOf(Uint8Array.prototype) as object)
const DATA_VIEW = getters(DataView.prototype)

/**
 * The most elements ownElements copies: far past any real list here (a PTX body, a batch of
 * programs, a tool's options), and short of a copy V8 cannot make: a sparse array of length
 * 2^32 - 1, copied, ran the heap out, a fatal error that no caller can catch.
 */
export const MAX_ELEMENTS = 2 ** 24

/** An array's elements, a hole read as undefined (as `element` reads it), in a dense copy. */
export function ownElements<T>(array: readonly T[], field: string): Array<T | undefined> {
  if (array.length > MAX_ELEMENTS) throw outOfRange(`${field}.length`, `at most ${MAX_ELEMENTS}`, array.length)
  return Array.from({ length: array.length }, (_, i) => element(array, i) as T | undefined)
}

// Not an argument error: the text of a system call's failure, for the messages that report one.

/** "no such file or directory (ENOENT)", from a Node errno error; its message otherwise. */
export function errnoText(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') {
    // "ENOENT: no such file or directory, open 'x'" -> "no such file or directory (ENOENT)"; a
    // stream's "write ECONNRESET" names no text, which the system's table of errnos has.
    const bare = e.message === `${e.syscall} ${e.code}` && typeof e.errno === 'number'
    const what = bare ? getSystemErrorMap().get(e.errno!)?.[1] ?? e.message : e.message.replace(/^[A-Z]+: /, '').replace(/, \w+( '.*')?$/, '')
    return `${what} (${e.code})`
  }
  return e instanceof Error ? e.message : String(error)
}
