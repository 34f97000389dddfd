// The status-3 probe of create: is the input something this driver takes? tileiras takes Tile IR
// bytecode and says so when it is handed MLIR bytecode; tileharness takes PTX, and says which
// bytecode it was handed instead (docs/toolchain-contract.md, "The Program handle" and "File
// formats").

import { constants } from 'node:buffer'
import { isRevokedProxy, isView, viewBytes } from '../../errors.js'
import { printModule } from '../../ptx/print.js'
import type { PtxModule } from '../../ptx/types.js'
import { ProgramError } from './errors.js'

/** "\x7fTileIR\0", the Tile IR bytecode magic. */
export const TILE_IR_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x7f, 0x54, 0x69, 0x6c, 0x65, 0x49, 0x52, 0x00)
/** "ML\xefR", upstream MLIR bytecode. */
export const MLIR_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x4d, 0x4c, 0xef, 0x52)

/**
 * PTX text is UTF-8 text without NUL bytes whose first statement (after blanks and comments) is a
 * `.version` directive, as the PTX ISA requires of every module. Returns the text; throws
 * ProgramError NOT_PTX (status 3) with the reason, and the bytecode hint when the magic gives one.
 * The input is a string, its bytes in any ArrayBufferView (a Buffer, a typed array, a DataView),
 * or a PTX module object. A view whose ArrayBuffer was detached has no buffer left to probe:
 * INPUT_BUFFER_NULL (status 2), the check before this one in create's order.
 */
export function probePtxText(input: unknown): string {
  let text: string
  // Before anything asks it a question: `instanceof` on a revoked Proxy throws V8's uncoded error.
  if (isRevokedProxy(input)) throw notPtx('input must be PTX text, bytes or a PTX module object (got a revoked Proxy)')
  if (typeof input === 'string') {
    if (startsWith(input, TILE_IR_MAGIC)) throw notPtx('it starts with the Tile IR bytecode magic', 'tile-ir')
    if (startsWith(input, MLIR_MAGIC)) throw notPtx('it starts with the MLIR bytecode magic', 'mlir')
    text = input
  } else if (isView(input)) {
    // Bytes in any view, by its brand: a Uint8ClampedArray or DataView of PTX had been taken for
    // a module object, and a Proxy of a Uint8Array failed in V8's getters with no code.
    const bytes = viewBytes(input)
    if (bytes === null) {
      throw new ProgramError('INPUT_BUFFER_NULL', { reason: "input's ArrayBuffer is detached (transferred away): it has no bytes" })
    }
    if (startsWith(bytes, TILE_IR_MAGIC)) throw notPtx('it starts with the Tile IR bytecode magic', 'tile-ir')
    if (startsWith(bytes, MLIR_MAGIC)) throw notPtx('it starts with the MLIR bytecode magic', 'mlir')
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    } catch (error) {
      // Text, but more than a JavaScript string holds (about 512 MiB of it): the program's text
      // cannot be had in memory, which is not the input's fault.
      if ((error as { code?: unknown }).code === 'ERR_STRING_TOO_LONG') {
        throw new ProgramError('ALLOCATION_FAILED', {
          reason: `the input is ${bytes.length} bytes of text, more than the longest string JavaScript holds (${constants.MAX_STRING_LENGTH} UTF-16 code units)`,
          cause: error,
        })
      }
      throw notPtx('it is not UTF-8 text')
    }
  } else if (typeof input === 'object' && input !== null) {
    if (looksLikeView(input)) throw notPtx('input is made to look like bytes (a Proxy of a view, or an object with its prototype) and is none')
    try {
      text = printModule(input as PtxModule)
    } catch (error) {
      throw notPtx(`the PTX module object cannot be printed: ${(error as Error).message}`, null, error)
    }
  } else {
    throw notPtx(`input must be PTX text, bytes or a PTX module object (got ${typeof input})`)
  }
  if (text.length === 0) throw notPtx('it is empty')
  const nul = text.indexOf('\0')
  if (nul !== -1) throw notPtx(`it contains a NUL byte at offset ${nul}`)
  if (!/^\.version[ \t]+\d+\.\d+(?![\w.])/.test(skipBlanksAndComments(text))) {
    throw notPtx('it does not begin with a .version directive')
  }
  return text
}

function notPtx(reason: string, looksLike: 'tile-ir' | 'mlir' | null = null, cause?: unknown): ProgramError {
  return new ProgramError('NOT_PTX', { reason, looksLike, cause })
}

/** %TypedArray%, the constructor every typed array's prototype chain has. */
const TypedArray = Object.getPrototypeOf(Uint8Array) as abstract new () => ArrayBufferView

/**
 * A Proxy of a view, or an object made with a view's prototype: instanceof says yes, the brand
 * (isView) no. Not printed as a module object, whose message would be about a missing `target`.
 * A Proxy whose getPrototypeOf throws looks like nothing.
 */
function looksLikeView(value: object): boolean {
  try {
    return value instanceof TypedArray || value instanceof DataView
  } catch {
    return false
  }
}

function startsWith(value: string | Uint8Array, magic: Readonly<Uint8Array>): boolean {
  if (value.length < magic.length) return false
  for (let i = 0; i < magic.length; i++) {
    const unit = typeof value === 'string' ? value.charCodeAt(i) : value[i]
    if (unit !== magic[i]) return false
  }
  return true
}

function skipBlanksAndComments(text: string): string {
  let rest = text
  for (;;) {
    const next = rest.replace(/^\s+/, '').replace(/^\/\/[^\n]*/, '').replace(/^\/\*[\s\S]*?\*\//, '')
    if (next === rest) return rest
    rest = next
  }
}
