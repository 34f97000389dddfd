// Bad-input errors of the CUDA layer, built in one place. They have the harness's shape (see
// ../spawn/errors.ts): a TypeError or RangeError with a Node-style `code`, a message that starts
// with the offending field's name, and that name in `field` as well.

export type CudaErrorCode = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE' | 'ERR_OUT_OF_RANGE'

export type CudaTypeError = TypeError & { code: CudaErrorCode; field: string }
export type CudaRangeError = RangeError & { code: CudaErrorCode; field: string }

/** `field` has the wrong type. */
export function invalidType(field: string, message: string): CudaTypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' as const, field })
}

/** `field` has the right type but a value that cannot be used. */
export function invalidValue(field: string, message: string): CudaTypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' as const, field })
}

/** A number outside its range. */
export function outOfRange(field: string, message: string): CudaRangeError {
  return Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' as const, field })
}

export function requireString(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidType(field, `${field} must be a string`)
  return value
}

export function requireObject(field: string, value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidType(field, `${field} must be an object`)
}

/** argv and file names are C strings: a NUL byte would silently cut them short. */
export function requireNoNul(field: string, value: string): string {
  if (value.includes('\0')) throw invalidValue(field, `${field} must not contain NUL bytes`)
  return value
}

/** A timeout in ms as the harness takes it: 0 = none. */
export function requireTimeout(value: unknown): number {
  if (typeof value !== 'number') throw invalidType('timeout', 'timeout must be a number of milliseconds')
  if (!Number.isInteger(value) || value < 0) throw outOfRange('timeout', 'timeout must be an integer >= 0 (0 = no timeout)')
  return value
}
