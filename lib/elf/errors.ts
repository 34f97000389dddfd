// Errors of tileharness/elf. Bad arguments to the packager are the package's argument errors
// (../errors.ts) with the packager's own ERR_ELF_* codes: a TypeError (wrong JavaScript type) or a
// RangeError (wrong value), with a message starting with the argument's field name. A cubin that
// cannot be read is a CubinError: whatever the bytes, readCubin throws nothing else; readFatbin
// likewise (its codes are ERR_FATBIN_*, a truncation ERR_CUBIN_TRUNCATED from the shared reader).

import { layerErrors } from '../errors.js'

const elf = layerErrors('ERR_ELF_INVALID_ARG_TYPE', ['ERR_ELF_INVALID_NAME', 'ERR_ELF_UNSUPPORTED_HOST_ARCH', 'ERR_ELF_INVALID_VALUE'] as const)
export type ElfArgErrorCode = (typeof elf.codes)[number]
export type ElfTypeError = ReturnType<typeof elf.typeError>
export type ElfRangeError = ReturnType<typeof elf.rangeError>
export const { typeError: elfTypeError, rangeError: elfRangeError } = elf

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
  /** readFatbin: no fatbin magic (0xBA55ED50), or an unknown container version. */
  | 'ERR_FATBIN_NOT_FATBIN'
  /** readFatbin: an entry header is inconsistent (size, header size, kind). */
  | 'ERR_FATBIN_MALFORMED'

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
