// The Program handle's error table (docs/toolchain-contract.md, "The Program handle"): one row per
// message, verbatim, each with its status. Every failure of the Program API is a ProgramError;
// bad arguments the table has no row for are the package's argument errors (../../errors.ts).

import { invalidValue } from '../../errors.js'
import type { FatbinaryStatus } from '../fatbinary.js'
import type { PtxasStatus } from '../ptxas.js'

export type ProgramStatus = 0 | 1 | 2 | 3 | 4 | 5
export type ProgramErrorStatus = Exclude<ProgramStatus, 0>

/**
 * The table by status, each message verbatim. Status 1 is in it for completeness: in JavaScript a
 * failed allocation throws before any code of ours could report it. Where tileiras names its own
 * input, Tile IR, these name ours, PTX: status 3 (tileiras: "input does not correspond to Tile IR
 * bytecode") and status 5 (tileiras: "failed to compile Tile IR program"); a PTX module that
 * fails must not be reported as a Tile IR program. The other rows, and status 3's MLIR suffix, are
 * tileiras's words.
 */
const MESSAGES_BY_STATUS = {
  1: { ALLOCATION_FAILED: 'failed to allocate memory for program' },
  2: {
    CONFIGURATION_NULL: 'configuration is null',
    INPUT_BUFFER_NULL: 'input buffer is null',
    UNSUPPORTED_GPU_TARGET: 'unsupported GPU target',
    INVALID_OPT_LEVEL: 'invalid optimization level',
    OPTIMIZED_DEBUGGING: 'optimized debugging is not supported, change optimization level to 0 or disable full debug info',
    UNSUPPORTED_HOST_ARCH: 'unsupported host architecture',
    UNSUPPORTED_HOST_OS: 'unsupported host operating system',
  },
  3: { NOT_PTX: 'input does not correspond to PTX text' },
  4: { PROGRAM_NULL: 'program is null', OUTPUT_POINTER_NULL: 'output pointer is null', NOT_COMPILED: 'program has not been compiled' },
  5: { COMPILE_FAILED: 'failed to compile PTX program' },
} as const satisfies Record<ProgramErrorStatus, Record<string, string>>

export type ProgramErrorCode = { [S in ProgramErrorStatus]: keyof (typeof MESSAGES_BY_STATUS)[S] }[ProgramErrorStatus]

/** Every row of the table by its code: { status, message }. */
export const PROGRAM_ERRORS: Readonly<Record<ProgramErrorCode, Readonly<{ status: ProgramErrorStatus; message: string }>>> =
  Object.freeze(Object.fromEntries(Object.entries(MESSAGES_BY_STATUS).flatMap(([status, rows]) =>
    Object.entries(rows).map(([code, message]) => [code, Object.freeze({ status: Number(status) as ProgramErrorStatus, message })]))) as Record<ProgramErrorCode, { status: ProgramErrorStatus; message: string }>)

/** The status-3 hints, appended to the NOT_PTX message when the input's magic says what it is. */
export const LOOKS_LIKE_TILE_IR = ' (it looks like Tile IR bytecode instead)'
export const LOOKS_LIKE_MLIR = ' (it looks like MLIR bytecode instead)'

/** Which step failed: ptxas, the SASS dump command, or fatbinary (several targets). */
export type ProgramTool = 'ptxas' | 'dump-sass' | 'fatbinary'

export interface ProgramErrorDetails {
  /** One line saying why, beyond the table's message ('' when the message says it all). */
  reason?: string
  /** Status 3 only: the bytecode the input looks like. */
  looksLike?: 'tile-ir' | 'mlir' | null
  diagnostics?: string
  tool?: ProgramTool | null
  toolStatus?: PtxasStatus | FatbinaryStatus | null
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
  readonly toolStatus: PtxasStatus | FatbinaryStatus | null

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

/** Status 5, "failed to compile PTX program", and why. */
export function compileFailed(reason: string, details: Omit<ProgramErrorDetails, 'reason'> = {}): ProgramError {
  return new ProgramError('COMPILE_FAILED', { ...details, reason })
}
