// The Program handle's error table (docs/toolchain-contract.md, "The Program handle"): one row per
// message, verbatim, each with its status. Every failure of the Program API is a ProgramError;
// bad arguments the table has no row for are the package's argument errors (../../errors.ts).

import { invalidValue } from '../../errors.js'
import type { PtxasStatus } from '../ptxas.js'

export type ProgramStatus = 0 | 1 | 2 | 3 | 4 | 5
export type ProgramErrorStatus = Exclude<ProgramStatus, 0>

/**
 * Status 1 is in the table for completeness: in JavaScript a failed allocation throws before any
 * code of ours could report it.
 */
export const PROGRAM_ERRORS = Object.freeze({
  ALLOCATION_FAILED: { status: 1, message: 'failed to allocate memory for program' },
  CONFIGURATION_NULL: { status: 2, message: 'configuration is null' },
  INPUT_BUFFER_NULL: { status: 2, message: 'input buffer is null' },
  NOT_PTX: { status: 3, message: 'input does not correspond to PTX text' },
  UNSUPPORTED_GPU_TARGET: { status: 2, message: 'unsupported GPU target' },
  INVALID_OPT_LEVEL: { status: 2, message: 'invalid optimization level' },
  OPTIMIZED_DEBUGGING: {
    status: 2,
    message: 'optimized debugging is not supported, change optimization level to 0 or disable full debug info',
  },
  UNSUPPORTED_HOST_ARCH: { status: 2, message: 'unsupported host architecture' },
  UNSUPPORTED_HOST_OS: { status: 2, message: 'unsupported host operating system' },
  PROGRAM_NULL: { status: 4, message: 'program is null' },
  OUTPUT_POINTER_NULL: { status: 4, message: 'output pointer is null' },
  NOT_COMPILED: { status: 4, message: 'program has not been compiled' },
  COMPILE_FAILED: { status: 5, message: 'failed to compile Tile IR program' },
} as const satisfies Record<string, { status: ProgramErrorStatus; message: string }>)

export type ProgramErrorCode = keyof typeof PROGRAM_ERRORS

/** The status-3 hints, appended to the NOT_PTX message when the input's magic says what it is. */
export const LOOKS_LIKE_TILE_IR = ' (it looks like Tile IR bytecode instead)'
export const LOOKS_LIKE_MLIR = ' (it looks like MLIR bytecode instead)'

/** Which step failed: ptxas, or the SASS dump command. */
export type ProgramTool = 'ptxas' | 'dump-sass'

export interface ProgramErrorDetails {
  /** One line saying why, beyond the table's message ('' when the message says it all). */
  reason?: string
  /** Status 3 only: the bytecode the input looks like. */
  looksLike?: 'tile-ir' | 'mlir' | null
  diagnostics?: string
  tool?: ProgramTool | null
  toolStatus?: PtxasStatus | null
  cause?: unknown
}

/**
 * Every failure of the Program API: `status` 1-5 and, in `message`, the table's diagnostic
 * verbatim (with the status-3 suffix when there is one). Whatever else is known is in `reason`;
 * a tool's stderr is in `diagnostics`, byte for byte as the tool wrote it.
 */
export class ProgramError extends Error {
  readonly status: ProgramErrorStatus
  readonly code: ProgramErrorCode
  readonly reason: string
  readonly looksLike: 'tile-ir' | 'mlir' | null
  /** The failing tool's stderr, verbatim; '' when no tool ran or it printed nothing. */
  readonly diagnostics: string
  readonly tool: ProgramTool | null
  readonly toolStatus: PtxasStatus | null

  constructor(code: ProgramErrorCode, details: ProgramErrorDetails = {}) {
    const row = PROGRAM_ERRORS[code]
    if (row === undefined) throw invalidValue('code', `must be one of ${Object.keys(PROGRAM_ERRORS).join(', ')}`, code)
    const looksLike = details.looksLike ?? null
    const suffix = looksLike === 'tile-ir' ? LOOKS_LIKE_TILE_IR : looksLike === 'mlir' ? LOOKS_LIKE_MLIR : ''
    super(row.message + suffix, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'ProgramError'
    this.status = row.status
    this.code = code
    this.reason = details.reason ?? ''
    this.looksLike = looksLike
    this.diagnostics = details.diagnostics ?? ''
    this.tool = details.tool ?? null
    this.toolStatus = details.toolStatus ?? null
  }
}

/** Status 5, "failed to compile Tile IR program", and why. */
export function compileFailed(reason: string, details: Omit<ProgramErrorDetails, 'reason'> = {}): ProgramError {
  return new ProgramError('COMPILE_FAILED', { ...details, reason })
}
