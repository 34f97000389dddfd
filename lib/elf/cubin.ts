// readCubin: the summary a user wants from a cubin, read defensively (the input may be anything;
// every read is bounds-checked by ByteReader, every index checked before use).
//
// What ptxas 13.0 writes, checked against its real output in test/elf/cubin.test.ts:
// - ELF64 little-endian, e_machine EM_CUDA (190), EI_OSABI 0x41, EI_ABIVERSION 8, ET_EXEC (ET_REL with -c).
// - The SM lives in e_flags: bits 8-15 under ABI version 8 (0x06006402 = sm_100), the low byte
//   under ABI version 7 (older toolkits). The target's suffix does not: an architecture-specific
//   target (sm_100a) sets attribute 0x09 of `.nv.compat` to 1; a family target (sm_100f) makes
//   the same bytes as sm_100 but for the options ptxas records in `.note.nv.tkinfo`
//   ("-arch sm_100f"), which is where its `f` is read.
// - Kernels are STT_FUNC symbols with st_other bit 0x10 (STO_CUDA_ENTRY); device functions lack it.
// - Register counts (EIATTR_REGCOUNT) sit in the module-wide `.nv.info` section, one record per
//   function keyed by symbol index; they are also read from `.nv.info.<kernel>`, where some older
//   toolkits put them. Launch-bound attributes (max threads, reqntid, cluster shape, maxreg) sit
//   in `.nv.info.<kernel>`.
import { isAscii } from 'node:buffer'
import { isBytes } from '../errors.js'
import { ByteReader } from './bytes.js'
import {
  EI_ABIVERSION, EI_CLASS, EI_DATA, EI_OSABI, EIATTR_CTA_PER_CLUSTER, EIATTR_EXPLICIT_CLUSTER,
  EICOMPAT_ARCH_SPECIFIC, EIATTR_MAXREG_COUNT, EIATTR_MAX_CLUSTER_RANK, EIATTR_MAX_THREADS, EIATTR_REGCOUNT, EIATTR_REQNTID,
  EIFMT_BVAL, EIFMT_HVAL, EIFMT_NVAL, EIFMT_SVAL, ELF64_EHDR_SIZE, ELF64_SHDR_SIZE, ELF64_SYM_SIZE,
  ELF_MAGIC, ELFCLASS64, ELFDATA2LSB, EM_CUDA, NT_CUDA_TKINFO, SHN_XINDEX, SHT_CUDA_COMPAT, SHT_CUDA_INFO, SHT_NOTE, SHT_NOBITS, SHT_STRTAB,
  SHT_SYMTAB, STO_CUDA_ENTRY, STT_FUNC,
} from './constants.js'
import { CubinError, elfTypeError } from './errors.js'

export type Extent3 = [number, number, number]
export type TargetVariant = '' | 'a' | 'f'

/** A kernel: its name and registers, plus the launch attributes ptxas recorded for it. */
export interface CubinKernel extends CubinFunction, KernelAttributes {}

export interface CubinFunction {
  name: string
  /** Registers per thread (EIATTR_REGCOUNT): what `ptxas -v` prints as "Used N registers". */
  registers: number | null
}

export interface CubinSummary {
  /** e.g. 100 for sm_100. The a/f variant is not recorded in e_flags by ptxas 13.0. */
  sm: number
  /** The target with its suffix: `sm_${sm}${variant}`, e.g. 'sm_100a'. */
  arch: string
  /** 'a' (architecture-specific, from .nv.compat), 'f' (family, from .note.nv.tkinfo) or ''. */
  variant: TargetVariant
  abiVersion: 7 | 8
  osAbi: number
  eFlags: number
  /** e_type: 2 (ET_EXEC) from plain ptxas, 1 (ET_REL) from `ptxas -c`. */
  elfType: number
  /** Entry functions, in symbol-table order. */
  kernels: CubinKernel[]
  /** Device functions that survived as symbols, in symbol-table order. */
  functions: CubinFunction[]
}

interface SectionHeader {
  index: number
  nameOffset: number
  type: number
  offset: number
  size: number
  link: number
  entsize: number
}

interface ElfSymbol {
  name: string
  type: number
  other: number
}

interface KernelAttributes {
  /** `.maxntid` (EIATTR_MAX_THREADS). */
  maxThreads: Extent3 | null
  /** `.reqntid` (EIATTR_REQNTID). */
  reqntid: Extent3 | null
  /** Register cap (EIATTR_MAXREG_COUNT): `.maxnreg`, or 255 when none was given. */
  maxRegCount: number | null
  /** `.reqnctapercluster` (EIATTR_CTA_PER_CLUSTER). */
  ctaPerCluster: Extent3 | null
  /** `.explicitcluster` (EIATTR_EXPLICIT_CLUSTER). */
  explicitCluster: boolean
  /** `.maxclusterrank` (EIATTR_MAX_CLUSTER_RANK). */
  maxClusterRank: number | null
}

/** Reads `bytes` as a cubin; throws CubinError for anything that is not a readable one. */
export function readCubin(bytes: Uint8Array): CubinSummary {
  if (!isBytes(bytes)) throw elfTypeError('bytes', 'a Uint8Array or Buffer', bytes)
  const r = new ByteReader(bytes)

  // The ELF header.
  r.check(0, ELF64_EHDR_SIZE, 'the ELF header')
  if (ELF_MAGIC.some((b, i) => bytes[i] !== b)) throw new CubinError('ERR_CUBIN_NOT_ELF', 'no ELF magic (\\x7fELF) at the start', 0)
  if (bytes[EI_CLASS] !== ELFCLASS64 || bytes[EI_DATA] !== ELFDATA2LSB) {
    throw new CubinError('ERR_CUBIN_LAYOUT', `not a 64-bit little-endian ELF (EI_CLASS ${bytes[EI_CLASS]}, EI_DATA ${bytes[EI_DATA]})`, EI_CLASS)
  }
  const machine = r.u16(18, 'e_machine')
  if (machine !== EM_CUDA) throw new CubinError('ERR_CUBIN_MACHINE', `e_machine is ${machine}, not EM_CUDA (${EM_CUDA})`, 18)
  const abiVersion = r.u8(EI_ABIVERSION, 'EI_ABIVERSION')
  if (abiVersion !== 7 && abiVersion !== 8) {
    throw new CubinError('ERR_CUBIN_ABI_VERSION', `EI_ABIVERSION ${abiVersion} is not 7 or 8, so the SM in e_flags cannot be decoded`, EI_ABIVERSION)
  }
  const eFlags = r.u32(48, 'e_flags')
  const sm = abiVersion === 7 ? eFlags & 0xff : (eFlags >>> 8) & 0xff
  const elfType = r.u16(16, 'e_type')

  const sections = readSectionHeaders(r)
  const symtab = sections.find((s) => s.type === SHT_SYMTAB)
  if (symtab === undefined) throw new CubinError('ERR_CUBIN_MALFORMED', 'no symbol table, so kernels cannot be named')
  const symbols = readSymbols(r, sections, symtab)

  // Pass over every .nv.info* section: register counts by symbol index, launch attributes by kernel.
  const shstrtab = sectionNames(r, sections)
  const registers = new Map<number, number>()
  const attributes = new Map<string, KernelAttributes>()
  // The records walked add up to at most NAME_OVERLAP_LIMIT times the input: a toolchain's
  // sections do not overlap, and thousands of headers all naming one large region would make the
  // walk quadratic (12,000 of them over 256 KiB took 34 s).
  let infoBudget = NAME_OVERLAP_LIMIT * bytes.length
  for (const s of sections) {
    if (s.type !== SHT_CUDA_INFO) continue
    const name = shstrtab[s.index] ?? ''
    if (name !== '.nv.info' && !name.startsWith('.nv.info.')) continue
    const data = r.slice(s.offset, s.size, `section ${name}`)
    infoBudget -= s.size
    if (infoBudget < 0) {
      throw new CubinError('ERR_CUBIN_MALFORMED', `section ${name}: the .nv.info sections overlap beyond ${NAME_OVERLAP_LIMIT} times the cubin's ${bytes.length} bytes`, s.offset)
    }
    if (s.link !== symtab.index) {
      throw new CubinError('ERR_CUBIN_MALFORMED', `section ${name} links to section ${s.link}, not the symbol table (${symtab.index})`)
    }
    const kernel = name.startsWith('.nv.info.') ? name.slice('.nv.info.'.length) : undefined
    const attrs = kernel === undefined ? undefined : attributes.get(kernel) ?? emptyAttributes()
    readNvInfo(data, name, (record) => {
      if (record.attr === EIATTR_REGCOUNT) {
        const payload = record.payload(8, 'EIATTR_REGCOUNT')
        const symbolIndex = payload.u32(0, 'EIATTR_REGCOUNT symbol index')
        if (symbolIndex >= symbols.length) {
          throw new CubinError('ERR_CUBIN_NVINFO', `${name}: EIATTR_REGCOUNT names symbol ${symbolIndex} of ${symbols.length}`, payload.base)
        }
        registers.set(symbolIndex, payload.u32(4, 'EIATTR_REGCOUNT value'))
        return
      }
      if (attrs === undefined) return
      switch (record.attr) {
        case EIATTR_MAX_THREADS: attrs.maxThreads = extent(record.payload(12, 'EIATTR_MAX_THREADS')); break
        case EIATTR_REQNTID: attrs.reqntid = extent(record.payload(12, 'EIATTR_REQNTID')); break
        case EIATTR_CTA_PER_CLUSTER: attrs.ctaPerCluster = extent(record.payload(12, 'EIATTR_CTA_PER_CLUSTER')); break
        case EIATTR_MAXREG_COUNT: attrs.maxRegCount = record.scalar('EIATTR_MAXREG_COUNT'); break
        case EIATTR_MAX_CLUSTER_RANK: attrs.maxClusterRank = record.scalar('EIATTR_MAX_CLUSTER_RANK'); break
        case EIATTR_EXPLICIT_CLUSTER: attrs.explicitCluster = true; break
      }
    })
    if (kernel !== undefined && attrs !== undefined) attributes.set(kernel, attrs)
  }

  const kernels: CubinKernel[] = []
  const functions: CubinFunction[] = []
  for (const [i, sym] of symbols.entries()) {
    if (sym.type !== STT_FUNC) continue
    const regs = registers.get(i) ?? null
    if ((sym.other & STO_CUDA_ENTRY) !== 0) {
      kernels.push({ name: sym.name, registers: regs, ...(attributes.get(sym.name) ?? emptyAttributes()) })
    } else {
      functions.push({ name: sym.name, registers: regs })
    }
  }
  const variant = targetVariant(r, sections, shstrtab, sm)
  return { sm, arch: `sm_${sm}${variant}`, variant, abiVersion, osAbi: bytes[EI_OSABI] ?? 0, eFlags, elfType, kernels, functions }
}

/**
 * The target's suffix: 'a' when .nv.compat says architecture-specific; else 'f' when the options
 * in .note.nv.tkinfo name this SM's family target; else ''. A cubin without those sections (an
 * older toolkit's, a synthetic one) is ''.
 */
function targetVariant(r: ByteReader, sections: readonly SectionHeader[], names: readonly string[], sm: number): TargetVariant {
  const compat = sections.find((s) => s.type === SHT_CUDA_COMPAT && names[s.index] === '.nv.compat')
  let archSpecific = false
  if (compat !== undefined) {
    readNvInfo(r.slice(compat.offset, compat.size, 'section .nv.compat'), '.nv.compat', (record) => {
      if (record.attr === EICOMPAT_ARCH_SPECIFIC && record.format === EIFMT_BVAL) archSpecific = record.value !== 0
    })
  }
  if (archSpecific) return 'a'
  const options = toolOptions(r, sections, names)
  const named = options === null ? null : /(?:^|\s)(?:-arch|--gpu-name)[= ]?sm_(\d+)([af]?)(?:\s|$)/.exec(options)
  return named !== null && Number(named[1]) === sm && named[2] === 'f' ? 'f' : ''
}

/**
 * The options string of .note.nv.tkinfo, or null. The note (type 2000, name "NVIDIA Corp") has a
 * descriptor of six u32s (format version, 0, then offsets of the tool's name, version, branch and
 * options) followed by their NUL-terminated strings, the offsets counted from there.
 */
function toolOptions(r: ByteReader, sections: readonly SectionHeader[], names: readonly string[]): string | null {
  const note = sections.find((s) => s.type === SHT_NOTE && names[s.index] === '.note.nv.tkinfo')
  if (note === undefined) return null
  const data = r.slice(note.offset, note.size, 'section .note.nv.tkinfo')
  const namesz = data.u32(0, 'the tkinfo note namesz')
  const descsz = data.u32(4, 'the tkinfo note descsz')
  if (data.u32(8, 'the tkinfo note type') !== NT_CUDA_TKINFO) return null
  const descAt = 12 + Math.ceil(namesz / 4) * 4
  const desc = data.slice(descAt, descsz, 'the tkinfo note descriptor')
  if (descsz < 24) return null
  return new StringTable(desc.slice(24, descsz - 24, 'the tkinfo strings')).cString(desc.u32(20, 'the tkinfo options offset'), 'the tkinfo options')
}

function readSectionHeaders(r: ByteReader): SectionHeader[] {
  const shoff = r.u64(40, 'e_shoff')
  const shentsize = r.u16(58, 'e_shentsize')
  let shnum = r.u16(60, 'e_shnum')
  if (shoff === 0) return []
  if (shentsize !== ELF64_SHDR_SIZE) {
    throw new CubinError('ERR_CUBIN_MALFORMED', `e_shentsize is ${shentsize}, not ${ELF64_SHDR_SIZE}`, 58)
  }
  // Extended numbering (gABI): with 0xff00 or more sections, e_shnum is 0 and the count is in
  // sh_size of section 0.
  if (shnum === 0) shnum = r.u64(shoff + 32, 'section count in section header 0')
  // Check the whole table before allocating for it, so a huge count cannot exhaust memory.
  r.check(shoff, shnum * ELF64_SHDR_SIZE, `the section header table (${shnum} entries)`)
  const sections: SectionHeader[] = []
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * ELF64_SHDR_SIZE
    sections.push({
      index: i,
      nameOffset: r.u32(at, `sh_name of section ${i}`),
      type: r.u32(at + 4, `sh_type of section ${i}`),
      offset: r.u64(at + 24, `sh_offset of section ${i}`),
      size: r.u64(at + 32, `sh_size of section ${i}`),
      link: r.u32(at + 40, `sh_link of section ${i}`),
      entsize: r.u64(at + 56, `sh_entsize of section ${i}`),
    })
  }
  return sections
}

/** Section names by index, from the section header string table. */
function sectionNames(r: ByteReader, sections: readonly SectionHeader[]): string[] {
  let shstrndx = r.u16(62, 'e_shstrndx')
  if (shstrndx === SHN_XINDEX) shstrndx = sections[0]?.link ?? 0
  if (shstrndx === 0) return sections.map(() => '')
  const table = sections[shstrndx]
  if (table === undefined || table.type !== SHT_STRTAB) {
    throw new CubinError('ERR_CUBIN_MALFORMED', `e_shstrndx ${shstrndx} is not a string table section`, 62)
  }
  const strings = stringTable(r, table, 'the section name table')
  return sections.map((s) => (s.index === 0 ? '' : strings.cString(s.nameOffset, `the name of section ${s.index}`)))
}

function readSymbols(r: ByteReader, sections: readonly SectionHeader[], symtab: SectionHeader): ElfSymbol[] {
  if (symtab.entsize !== ELF64_SYM_SIZE || symtab.size % ELF64_SYM_SIZE !== 0) {
    throw new CubinError('ERR_CUBIN_MALFORMED', `the symbol table has entry size ${symtab.entsize} and size ${symtab.size}; expected multiples of ${ELF64_SYM_SIZE}`)
  }
  const strtab = sections[symtab.link]
  if (strtab === undefined || strtab.type !== SHT_STRTAB) {
    throw new CubinError('ERR_CUBIN_MALFORMED', `the symbol table links to section ${symtab.link}, which is not a string table`)
  }
  const data = r.slice(symtab.offset, symtab.size, 'the symbol table')
  const strings = stringTable(r, strtab, 'the symbol name table')
  const symbols: ElfSymbol[] = []
  for (let at = 0; at < symtab.size; at += ELF64_SYM_SIZE) {
    const index = at / ELF64_SYM_SIZE
    const info = data.u8(at + 4, `st_info of symbol ${index}`)
    symbols.push({
      name: strings.cString(data.u32(at, `st_name of symbol ${index}`), `the name of symbol ${index}`),
      type: info & 0xf,
      other: data.u8(at + 5, `st_other of symbol ${index}`),
    })
  }
  return symbols
}

function stringTable(r: ByteReader, s: SectionHeader, what: string): StringTable {
  if (s.type === SHT_NOBITS) throw new CubinError('ERR_CUBIN_MALFORMED', `${what} has no contents (SHT_NOBITS)`)
  return new StringTable(r.slice(s.offset, s.size, what))
}

/** Names are decoded as UTF-8 (malformed bytes as U+FFFD); one decoder serves every table: a
 * whole-input decode keeps no state between calls, and making one costs more than most names. */
const UTF8 = new TextDecoder('utf-8')

/** How many times its own size a string table's names may add up to (they may share tails). */
const NAME_OVERLAP_LIMIT = 16

/**
 * An ELF string table with its NUL positions found once, so each lookup is a binary search: a
 * hostile table without NULs, probed by many symbols, stays linear in the input size. Each name is
 * decoded once per offset, and the names decoded add up to at most NAME_OVERLAP_LIMIT times the
 * table (names may share a tail, as linkers' tail merging makes them, but a table of thousands of
 * symbols each naming a different suffix of one 1 MiB string would take gigabytes).
 */
class StringTable {
  private readonly nuls: number[] = []
  private readonly names = new Map<number, string>()
  private budget: number
  /** The whole table as text when it is ASCII (any toolchain's is): a name is then a substring of
   * it, where a decode of its own costs a call into the runtime per name. */
  private readonly text: string | null

  constructor(private readonly data: ByteReader) {
    const bytes = data.bytes
    for (let at = bytes.indexOf(0); at !== -1; at = bytes.indexOf(0, at + 1)) this.nuls.push(at)
    this.budget = NAME_OVERLAP_LIMIT * data.length
    this.text = bytes.length > 0 && isAscii(bytes) ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1') : null
  }

  cString(offset: number, what: string): string {
    const known = this.names.get(offset)
    if (known !== undefined) return known
    let lo = 0
    let hi = this.nuls.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.nuls[mid] ?? Infinity) < offset) lo = mid + 1
      else hi = mid
    }
    const end = this.nuls[lo]
    if (offset >= this.data.length || end === undefined) {
      throw new CubinError('ERR_CUBIN_MALFORMED', `${what} (offset ${offset}) is not a NUL-terminated string inside its table`, this.data.base + Math.min(offset, this.data.length))
    }
    this.budget -= end - offset
    if (this.budget < 0) {
      throw new CubinError('ERR_CUBIN_MALFORMED', `${what} (offset ${offset}): the table's names overlap beyond ${NAME_OVERLAP_LIMIT} times its ${this.data.length} bytes`, this.data.base + offset)
    }
    const name = this.text !== null ? this.text.slice(offset, end) : UTF8.decode(this.data.bytes.subarray(offset, end))
    this.names.set(offset, name)
    return name
  }
}

interface NvInfoRecord {
  format: number
  attr: number
  /** The SVAL payload, at least `min` bytes long. */
  payload(min: number, what: string): ByteReader
  /** A value carried either in the u16 slot (HVAL) or as a u32 payload (SVAL). */
  scalar(what: string): number
  /** The u16 slot of the head (the value of a BVAL or HVAL record). */
  value: number
}

/**
 * Walks the attribute records of one .nv.info section: {u8 format, u8 attr, u16 v}. EIFMT_SVAL
 * records carry `v` bytes of payload after the 4-byte head; NVAL, BVAL and HVAL records are the
 * 4-byte head alone (the value, if any, is in `v`). Any other format makes the rest unreadable.
 */
function readNvInfo(data: ByteReader, section: string, visit: (record: NvInfoRecord) => void): void {
  let at = 0
  while (at < data.length) {
    if (at + 4 > data.length) throw new CubinError('ERR_CUBIN_NVINFO', `${section}: a record head is cut off`, data.base + at)
    const format = data.u8(at, 'an .nv.info format')
    const attr = data.u8(at + 1, 'an .nv.info attribute')
    const v = data.u16(at + 2, 'an .nv.info value')
    const head = at
    let payloadSize = 0
    if (format === EIFMT_SVAL) payloadSize = v
    else if (format !== EIFMT_NVAL && format !== EIFMT_BVAL && format !== EIFMT_HVAL) {
      throw new CubinError('ERR_CUBIN_NVINFO', `${section}: unknown record format 0x${format.toString(16)}`, data.base + at)
    }
    if (head + 4 + payloadSize > data.length) {
      throw new CubinError('ERR_CUBIN_NVINFO', `${section}: attribute 0x${attr.toString(16)} declares ${payloadSize} bytes past the section end`, data.base + at)
    }
    visit({
      format,
      attr,
      value: v,
      payload(min, what) {
        if (format !== EIFMT_SVAL || payloadSize < min) {
          throw new CubinError('ERR_CUBIN_NVINFO', `${section}: ${what} needs an EIFMT_SVAL payload of ${min} bytes (format ${format}, ${payloadSize} bytes)`, data.base + head)
        }
        return data.slice(head + 4, payloadSize, `${section}: ${what}`)
      },
      scalar(what) {
        if (format === EIFMT_HVAL) return v
        return this.payload(4, what).u32(0, what)
      },
    })
    at = head + 4 + payloadSize
  }
}

function extent(payload: ByteReader): Extent3 {
  return [payload.u32(0, 'x'), payload.u32(4, 'y'), payload.u32(8, 'z')]
}

function emptyAttributes(): KernelAttributes {
  return { maxThreads: null, reqntid: null, maxRegCount: null, ctaPerCluster: null, explicitCluster: false, maxClusterRank: null }
}
