// Errors of the PTX emitter are built here and nowhere else: a TypeError when a field has the wrong
// JavaScript type, a RangeError when it has the right type but a value PTX (or ptxas) cannot take.
// Every message starts with the path of the offending field, e.g. "functions[0].params[1].name: ...".

export type PtxErrorCode =
  | 'ERR_PTX_INVALID_ARG_TYPE'
  | 'ERR_PTX_INVALID_IDENTIFIER'
  | 'ERR_PTX_INVALID_VALUE'
  | 'ERR_PTX_UNKNOWN_TARGET'
  | 'ERR_PTX_UNKNOWN_VERSION'
  | 'ERR_PTX_VERSION_TOO_OLD'
  | 'ERR_PTX_DUPLICATE_NAME'
  | 'ERR_PTX_UNKNOWN_KERNEL'

export interface PtxTypeError extends TypeError {
  code: 'ERR_PTX_INVALID_ARG_TYPE'
  field: string
}

export interface PtxRangeError extends RangeError {
  code: Exclude<PtxErrorCode, 'ERR_PTX_INVALID_ARG_TYPE'>
  field: string
}

export function ptxTypeError(field: string, expected: string, got: unknown): PtxTypeError {
  const err = new TypeError(`${field}: expected ${expected}, got ${describe(got)}`) as PtxTypeError
  err.code = 'ERR_PTX_INVALID_ARG_TYPE'
  err.field = field
  return err
}

export function ptxRangeError(
  code: PtxRangeError['code'],
  field: string,
  message: string,
): PtxRangeError {
  const err = new RangeError(`${field}: ${message}`) as PtxRangeError
  err.code = code
  err.field = field
  return err
}

/** A short, safe rendering of a bad value for an error message. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value)
    case 'undefined':
      return 'undefined'
    case 'function':
      return 'a function'
    default:
      return `an ${typeof value}`
  }
}
