// Errors of tileharness/elf, built here and nowhere else. Bad arguments to the packager are a
// TypeError (wrong JavaScript type) or a RangeError (wrong value), each with a `code` and a message
// starting with the argument's field name. A cubin that cannot be read is a CubinError: whatever
// the bytes, readCubin throws nothing else.

export type ElfArgErrorCode =
  | 'ERR_ELF_INVALID_ARG_TYPE'
  | 'ERR_ELF_INVALID_NAME'
  | 'ERR_ELF_UNSUPPORTED_HOST_ARCH'
  | 'ERR_ELF_INVALID_VALUE'

export interface ElfTypeError extends TypeError {
  code: 'ERR_ELF_INVALID_ARG_TYPE'
  field: string
}

export interface ElfRangeError extends RangeError {
  code: Exclude<ElfArgErrorCode, 'ERR_ELF_INVALID_ARG_TYPE'>
  field: string
}

export function elfTypeError(field: string, expected: string, got: unknown): ElfTypeError {
  const err = new TypeError(`${field}: expected ${expected}, got ${typeName(got)}`) as ElfTypeError
  err.code = 'ERR_ELF_INVALID_ARG_TYPE'
  err.field = field
  return err
}

export function elfRangeError(code: ElfRangeError['code'], field: string, message: string): ElfRangeError {
  const err = new RangeError(`${field}: ${message}`) as ElfRangeError
  err.code = code
  err.field = field
  return err
}

export type CubinErrorCode =
  /** The input ends before a structure it declares (header, table, section, entry). */
  | 'ERR_CUBIN_TRUNCATED'
  /** No ELF magic. */
  | 'ERR_CUBIN_NOT_ELF'
  /** Not ELFCLASS64 little-endian, the only layout ptxas writes. */
  | 'ERR_CUBIN_LAYOUT'
  /** e_machine is not EM_CUDA (190). */
  | 'ERR_CUBIN_MACHINE'
  /** EI_ABIVERSION is neither 7 nor 8, so the SM cannot be decoded from e_flags. */
  | 'ERR_CUBIN_ABI_VERSION'
  /** A header field, section header or symbol is inconsistent (bad index, size or entry size). */
  | 'ERR_CUBIN_MALFORMED'
  /** An .nv.info attribute record is malformed. */
  | 'ERR_CUBIN_NVINFO'

export class CubinError extends Error {
  readonly code: CubinErrorCode
  /** Byte offset in the input where the problem was found, when there is one. */
  readonly offset: number | undefined

  constructor(code: CubinErrorCode, message: string, offset?: number) {
    super(offset === undefined ? message : `${message} (at byte ${offset})`)
    this.name = 'CubinError'
    this.code = code
    this.offset = offset
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (typeof value === 'undefined') return 'undefined'
  return `an ${typeof value}`
}
