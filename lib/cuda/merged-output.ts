// Finding the cubin in ptxas's output. With the stderr merge (dup2(stdout, stderr);
// docs/toolchain-contract.md, "The ptxas child") the cubin and any diagnostic text share one
// buffer: ptxas prints warnings while it compiles and writes the cubin at the end, so a merged
// buffer looks like `<warnings><ELF>[<more text>]`. tileiras tells them apart by the ELF magic in
// the leading bytes; we look for the magic anywhere, and accept it only where a whole, well-formed
// ELF64 cubin header, section table and program header table fit, so stray text can't be taken
// for a cubin or cut one short.

import {
  ELF64_EHDR_SIZE as EHDR_SIZE, ELF64_SHDR_SIZE as SHDR_SIZE, ELF_MAGIC as MAGIC_BYTES, ELFCLASS64, ELFDATA2LSB,
  EM_CUDA, EV_CURRENT, SHT_NOBITS,
} from '../elf/constants.js'
import { MAX_SAFE_HIGH } from '../elf/bytes.js'
import { invalidType, isBytes } from '../errors.js'

const ELF_MAGIC = Buffer.from(MAGIC_BYTES)
/** Elf64_Phdr; lib/elf has no use for program headers, so the size lives here. */
const PHDR_SIZE = 56

/**
 * Length in bytes of the ELF64 little-endian EM_CUDA object starting at `at`, or -1 when what
 * starts there is not one that fits in `buffer`. The length is the furthest byte any header,
 * table, section or segment claims, which for a ptxas cubin is the whole file.
 */
export function cubinExtent(buffer: Uint8Array, at = 0): number {
  if (!isBytes(buffer)) throw invalidType('buffer', 'a Uint8Array or Buffer', buffer)
  if (typeof at !== 'number') throw invalidType('at', 'a number', at)
  return extent(bufferOver(buffer), at, { left: Infinity })
}

/**
 * cubinExtent's work, its table entries counted against `work`: -2 (and no entry read) when this
 * candidate's tables, which fit in the buffer, would take more entries than are left.
 */
function extent(b: Buffer, at: number, work: { left: number }): number {
  const avail = b.length - at
  if (at < 0 || avail < EHDR_SIZE) return -1
  if (b[at] !== MAGIC_BYTES[0] || b[at + 1] !== MAGIC_BYTES[1] || b[at + 2] !== MAGIC_BYTES[2] || b[at + 3] !== MAGIC_BYTES[3]) return -1
  if (b[at + 4] !== ELFCLASS64 || b[at + 5] !== ELFDATA2LSB || b[at + 6] !== EV_CURRENT) return -1
  if (b.readUInt16LE(at + 18) !== EM_CUDA || b.readUInt32LE(at + 20) !== EV_CURRENT) return -1
  if (b.readUInt16LE(at + 52) !== EHDR_SIZE) return -1
  const phoff = offset(b, at + 32)
  const shoff = offset(b, at + 40)
  const phentsize = b.readUInt16LE(at + 54)
  const phnum = b.readUInt16LE(at + 56)
  const shentsize = b.readUInt16LE(at + 58)
  const shnum = b.readUInt16LE(at + 60)
  const shstrndx = b.readUInt16LE(at + 62)
  if (shnum === 0 || shentsize !== SHDR_SIZE || shstrndx >= shnum) return -1
  if (phnum > 0 && phentsize !== PHDR_SIZE) return -1

  let end = EHDR_SIZE
  const claim = (start: number, length: number): boolean => {
    if (start < 0 || length < 0 || start + length > avail) return false
    end = Math.max(end, start + length)
    return true
  }
  if (!claim(shoff, shnum * SHDR_SIZE)) return -1
  if (phnum > 0 && !claim(phoff, phnum * PHDR_SIZE)) return -1
  if ((work.left -= shnum + phnum) < 0) return -2
  for (let i = 0; i < shnum; i++) {
    const sh = at + shoff + i * SHDR_SIZE
    if (b.readUInt32LE(sh + 4) === SHT_NOBITS) continue
    if (!claim(offset(b, sh + 24), offset(b, sh + 32))) return -1
  }
  for (let i = 0; i < phnum; i++) {
    const ph = at + phoff + i * PHDR_SIZE
    if (!claim(offset(b, ph + 8), offset(b, ph + 32))) return -1
  }
  return end
}

export interface SplitOutput {
  /** The cubin, or null when the buffer holds none. */
  cubin: Buffer | null
  /** Everything that is not the cubin, in order, byte for byte: the text before and after it. */
  diagnostics: Buffer
  /** Where the cubin started in the buffer; -1 when there is none. */
  cubinOffset: number
}

/**
 * Split a merged stdout+stderr buffer into the cubin (the first valid one) and the text around it.
 * The table entries read for all candidates together are bounded by the buffer's size: a cubin's
 * tables take at most its size / 56 entries, but headers that pass the first checks and share one
 * long table, each read to its last entry, would cost candidates × entries (a hostile tool's
 * megabyte: seconds of a held event loop). Past the bound the buffer is taken to hold no cubin.
 */
export function splitMergedOutput(given: Uint8Array): SplitOutput {
  if (!isBytes(given)) throw invalidType('buffer', 'a Buffer or Uint8Array', given)
  // Buffer's indexOf finds a byte sequence; a plain Uint8Array's would look for one element.
  const buffer = bufferOver(given)
  const work = { left: 2 * Math.ceil(buffer.length / PHDR_SIZE) + 0x20000 }
  for (let at = buffer.indexOf(ELF_MAGIC); at >= 0; at = buffer.indexOf(ELF_MAGIC, at + 1)) {
    const length = extent(buffer, at, work)
    if (length === -2) break
    if (length < 0) continue
    return {
      cubin: Buffer.from(buffer.subarray(at, at + length)),
      diagnostics: Buffer.concat([buffer.subarray(0, at), buffer.subarray(at + length)]),
      cubinOffset: at,
    }
  }
  return { cubin: null, diagnostics: Buffer.from(buffer), cubinOffset: -1 }
}

/**
 * `bytes` as a Buffer over the same memory (a Buffer as it is). No bytes, a detached buffer among
 * them (over whose memory no view can be made), is an empty Buffer: no cubin, and no text.
 */
function bufferOver(bytes: Uint8Array): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes
  return bytes.byteLength === 0 ? Buffer.alloc(0) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * The 64-bit file offset or size at `at` as a number, -1 past 2^53 - 1 (no Buffer is that big).
 * Read as two u32 halves: a BigInt read allocates, and every header entry holds two of these.
 */
function offset(b: Buffer, at: number): number {
  const high = b.readUInt32LE(at + 4)
  return high > MAX_SAFE_HIGH ? -1 : high * 0x1_0000_0000 + b.readUInt32LE(at)
}
