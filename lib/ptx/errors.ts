// Errors of the PTX emitter: a TypeError when a field has the wrong JavaScript type, a RangeError
// when it has the right type but a value PTX (or ptxas) cannot take. Every message starts with the
// path of the offending field, e.g. "functions[0].params[1].name: ...". They are the package's
// argument errors (../errors.ts) with the emitter's own ERR_PTX_* codes.

import { describe, layerErrors } from '../errors.js'

const ptx = layerErrors('ERR_PTX_INVALID_ARG_TYPE', [
  'ERR_PTX_INVALID_IDENTIFIER', 'ERR_PTX_INVALID_VALUE', 'ERR_PTX_UNKNOWN_TARGET', 'ERR_PTX_UNKNOWN_VERSION',
  'ERR_PTX_VERSION_TOO_OLD', 'ERR_PTX_DUPLICATE_NAME', 'ERR_PTX_UNKNOWN_KERNEL',
] as const)
export type PtxErrorCode = (typeof ptx.codes)[number]
export type PtxTypeError = ReturnType<typeof ptx.typeError>
export type PtxRangeError = ReturnType<typeof ptx.rangeError>
export const { typeError: ptxTypeError, rangeError: ptxRangeError } = ptx

/** The package's one rendering of a bad value (../errors.ts), exported here as it always was. */
export { describe }
