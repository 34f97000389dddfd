// Every validation error the harness throws is built here: a TypeError or RangeError with a
// Node-style `code`, and a message that names the offending field.

export type HarnessErrorCode =
  | 'ERR_INVALID_ARG_TYPE'
  | 'ERR_INVALID_ARG_VALUE'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_UNKNOWN_SIGNAL'
  | 'ERR_INVALID_FD'
  | 'ERR_INCOMPATIBLE_OPTION_PAIR'

function withCode<E extends Error>(err: E, code: HarnessErrorCode): E & { code: HarnessErrorCode } {
  return Object.assign(err, { code })
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value)}`
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${String(value)}`
}

/** `field` has the wrong type. */
export function invalidType(field: string, expected: string, actual: unknown): TypeError {
  return withCode(new TypeError(`${field} must be ${expected} (received ${describe(actual)})`), 'ERR_INVALID_ARG_TYPE')
}

/** `field` has the right type but a value that cannot be used. */
export function invalidValue(field: string, reason: string): TypeError {
  return withCode(new TypeError(`${field} ${reason}`), 'ERR_INVALID_ARG_VALUE')
}

/** A number outside its range. */
export function outOfRange(field: string, range: string, actual: unknown): RangeError {
  return withCode(new RangeError(`${field} must be ${range} (received ${describe(actual)})`), 'ERR_OUT_OF_RANGE')
}

export function unknownSignal(field: string, actual: unknown): TypeError {
  return withCode(new TypeError(`${field} is not a known signal (received ${describe(actual)})`), 'ERR_UNKNOWN_SIGNAL')
}

export function badFd(field: string, fd: number): RangeError {
  return withCode(new RangeError(`${field}: fd ${fd} is not an open file descriptor`), 'ERR_INVALID_FD')
}

export function incompatible(first: string, second: string, reason: string): TypeError {
  return withCode(new TypeError(`${first} cannot be combined with ${second}: ${reason}`), 'ERR_INCOMPATIBLE_OPTION_PAIR')
}
