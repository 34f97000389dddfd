// readFatbin: the entries of a fat binary, the container `fatbinary --create` writes and
// cuModuleLoadData / cudaLibraryLoadData take: a header, then entries one after the other, each
// a header and its payload (an ELF cubin, or PTX text for the driver to JIT-compile).
//
// The layout, little-endian, as CUDA 13.0's fatbinary writes it (measured in test/elf/fatbin.test.ts;
// the fields marked "not read" are there, with values we have not needed):
//
//   container header (16 bytes)
//     0  u32 magic 0xBA55ED50          4  u16 version 1
//     6  u16 header size (16)          8  u64 bytes of entries after the header
//   entry header (64 bytes, or more: 80 for PTX, 112 when it carries .nv.compat records)
//     0  u16 kind: 1 PTX, 2 ELF        2  u16 entry version 0x0101
//     4  u32 header size               8  u64 payload size (padded to 8 bytes)
//    16  u32 compressed size (0 when the payload is not compressed)
//    20  u32 not read (0 or 64)       24  u16 minor, 26 u16 major: the PTX ISA of a PTX entry (1.8 for ELF)
//    28  u32 SM (90, 100, 120)        32  u32, 36 u32: not read (an object name's offset, length)
//    40  u64 flags: 0x1 64-bit, 0x10 Linux host, 0x2000 LZ4- or 0x8000 zstd-compressed payload,
//        0x100000 architecture-specific target (sm_100a), 0x200000 family target (sm_100f),
//        0x1000000 the header carries the image's .nv.compat records (from sm_100 on)
//    48  u64 not read                 56  u64 the payload's size uncompressed (when compressed)
//   the payload follows the header. fatbinary 13.0 compresses PTX by default (zstd); with
//   --compress=false nothing is. A PTX payload is the input with `//` comments and each line's
//   leading blanks removed, NUL-terminated and padded with NULs.
import { isBytes } from '../errors.js'
import { ByteReader, MAX_SAFE_HIGH } from './bytes.js'
import { CubinError, elfTypeError } from './errors.js'

export const FATBIN_MAGIC = 0xba55ed50
export const FATBIN_HEADER_SIZE = 16
export const FATBIN_KIND_PTX = 1
export const FATBIN_KIND_ELF = 2
/** The entry flags this reader knows (the table above). */
export const FATBIN_FLAGS = Object.freeze({
  is64Bit: 0x1,
  linuxHost: 0x10,
  compressedLz4: 0x2000,
  compressedZstd: 0x8000,
  archSpecific: 0x100000,
  family: 0x200000,
})
/** The smallest entry header: every field above through the uncompressed size. */
const ENTRY_HEADER_MIN = 64

export interface FatbinEntry {
  kind: 'ptx' | 'elf'
  /** e.g. 100 */
  sm: number
  /** The target with its suffix, from the flags: 'sm_100a'. */
  arch: string
  /** The entry's flags (FATBIN_FLAGS); an entry with bits set past 2^53 - 1 is refused, as no fatbinary sets any. */
  flags: number
  /** Whether the payload is compressed (then `payload` is the compressed bytes). */
  compressed: boolean
  /** A PTX entry's ISA version ('8.6'); null for ELF. */
  ptxVersion: string | null
  /** Where the entry's header starts in the fatbin. */
  offset: number
  headerSize: number
  /** The payload as stored (padding included). */
  payload: Uint8Array
}

/** The entries of `bytes`; throws CubinError for anything that is not a readable fatbin. */
export function readFatbin(bytes: Uint8Array): FatbinEntry[] {
  if (!isBytes(bytes)) throw elfTypeError('bytes', 'a Uint8Array or Buffer', bytes)
  const r = new ByteReader(bytes)
  if (r.length < 4 || r.u32(0, 'the fatbin magic') !== FATBIN_MAGIC) {
    throw new CubinError('ERR_FATBIN_NOT_FATBIN', 'no fatbin magic (0xBA55ED50) at the start', 0)
  }
  const version = r.u16(4, 'the fatbin version')
  if (version !== 1) throw new CubinError('ERR_FATBIN_NOT_FATBIN', `fatbin version ${version}, not 1`, 4)
  const headerSize = r.u16(6, 'the fatbin header size')
  if (headerSize < FATBIN_HEADER_SIZE) throw new CubinError('ERR_FATBIN_MALFORMED', `header size ${headerSize} < ${FATBIN_HEADER_SIZE}`, 6)
  const body = r.slice(headerSize, r.u64(8, 'the fatbin size'), 'the fatbin entries')
  const entries: FatbinEntry[] = []
  for (let at = 0; at < body.length;) {
    const kindCode = body.u16(at, 'an entry kind')
    const entryHeaderSize = body.u32(at + 4, 'an entry header size')
    if (kindCode !== FATBIN_KIND_PTX && kindCode !== FATBIN_KIND_ELF) {
      throw new CubinError('ERR_FATBIN_MALFORMED', `entry kind ${kindCode} is neither PTX (1) nor ELF (2)`, body.base + at)
    }
    if (entryHeaderSize < ENTRY_HEADER_MIN) {
      throw new CubinError('ERR_FATBIN_MALFORMED', `entry header size ${entryHeaderSize} < ${ENTRY_HEADER_MIN}`, body.base + at + 4)
    }
    const payloadSize = body.u64(at + 8, 'an entry payload size')
    body.check(at, entryHeaderSize, 'an entry header')
    const sm = body.u32(at + 28, 'an entry SM')
    // Every flag fatbinary sets is in the low half; one past 2^53 - 1 could not be given exactly
    // (the low bits, rounded away, read wrong), and no fatbinary writes one.
    const flagsHigh = body.u32(at + 44, 'entry flags, high half')
    if (flagsHigh > MAX_SAFE_HIGH) {
      const hex = flagsHigh.toString(16) + body.u32(at + 40, 'entry flags').toString(16).padStart(8, '0')
      throw new CubinError('ERR_FATBIN_MALFORMED', `entry flags 0x${hex} set bits past 2^53 - 1, which no fatbinary writes`, body.base + at + 40)
    }
    const flags = body.u64(at + 40, 'entry flags')
    const variant = (flags & FATBIN_FLAGS.archSpecific) !== 0 ? 'a' : (flags & FATBIN_FLAGS.family) !== 0 ? 'f' : ''
    const kind = kindCode === FATBIN_KIND_PTX ? 'ptx' : 'elf'
    entries.push({
      kind,
      sm,
      arch: `sm_${sm}${variant}`,
      flags,
      compressed: (flags & (FATBIN_FLAGS.compressedLz4 | FATBIN_FLAGS.compressedZstd)) !== 0,
      ptxVersion: kind === 'ptx' ? `${body.u16(at + 26, 'a PTX major version')}.${body.u16(at + 24, 'a PTX minor version')}` : null,
      offset: body.base + at,
      headerSize: entryHeaderSize,
      payload: body.slice(at + entryHeaderSize, payloadSize, 'an entry payload').bytesLikeInput(),
    })
    at += entryHeaderSize + payloadSize
  }
  return entries
}
