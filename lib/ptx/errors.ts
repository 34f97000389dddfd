// Errors of the PTX emitter: a TypeError when a field has the wrong JavaScript type, a RangeError
// when it has the right type but a value PTX (or ptxas) cannot take. Every message starts with the
// path of the offending field, e.g. "functions[0].params[1].name: ...". They are the package's
// argument errors (../errors.ts) with the emitter's own ERR_PTX_* codes.

import { describe, fieldError, fieldTypeError, type ArgumentError } from '../errors.js'

export type PtxErrorCode =
  | 'ERR_PTX_INVALID_ARG_TYPE'
  | 'ERR_PTX_INVALID_IDENTIFIER'
  | 'ERR_PTX_INVALID_VALUE'
  | 'ERR_PTX_UNKNOWN_TARGET'
  | 'ERR_PTX_UNKNOWN_VERSION'
  | 'ERR_PTX_VERSION_TOO_OLD'
  | 'ERR_PTX_DUPLICATE_NAME'
  | 'ERR_PTX_UNKNOWN_KERNEL'

export type PtxTypeError = ArgumentError<TypeError, 'ERR_PTX_INVALID_ARG_TYPE'>
export type PtxRangeError = ArgumentError<RangeError, Exclude<PtxErrorCode, 'ERR_PTX_INVALID_ARG_TYPE'>>

export function ptxTypeError(field: string, expected: string, got: unknown): PtxTypeError {
  return fieldTypeError('ERR_PTX_INVALID_ARG_TYPE', field, expected, got)
}

export function ptxRangeError(code: PtxRangeError['code'], field: string, message: string): PtxRangeError {
  return fieldError(code, field, message)
}

/** The package's one rendering of a bad value (../errors.ts), exported here as it always was. */
export { describe }
