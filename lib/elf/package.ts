// The host ELF packager: wraps a cubin (and optionally its SASS text) in an ELF64 relocatable object
// a host linker takes, as tileiras's terminal output does: a host ELF relocatable wrapping the
// cubin, with an optional .nvdisasm section for the SASS text (docs/toolchain-contract.md, "File
// formats").
//
// Layout of the object (all little-endian; no code, so no relocations):
//
//   ELF header
//   [1] .rodata          <name>_cubin (8-aligned), <name>_cubin_size (u64), [<name>_sass_size (u64)]
//                        (with a fat binary instead: <name>_fatbin, <name>_fatbin_size)
//   [2] .nvdisasm        <name>_sass, NUL-terminated          (only with SASS text)
//   [n] .note.gnu.property  data only, so compatible with IBT/SHSTK (x86_64), BTI/PAC (aarch64)
//   [n] .note.GNU-stack  empty: the stack need not be executable, so the linker has nothing to warn
//   [n] .symtab / .strtab / .shstrtab
//   section header table
import {
  ELFCLASS64, ELFDATA2LSB, ELF64_EHDR_SIZE, ELF64_SHDR_SIZE, ELF64_SYM_SIZE, ELF_MAGIC, EM_AARCH64,
  EM_X86_64, ET_REL, EV_CURRENT, SHF_ALLOC, SHT_PROGBITS, SHT_STRTAB, SHT_SYMTAB, STB_GLOBAL,
  STT_OBJECT, STV_DEFAULT,
} from './constants.js'
import { isBytes, own } from '../errors.js'
import { elfRangeError, elfTypeError } from './errors.js'
import { gnuPropertyNote, SHT_NOTE } from './gnu-property.js'

export type HostArch = 'x86_64' | 'aarch64'

export interface HostObjectInput {
  /** The cubin bytes ptxas produced (give this or `fatbin`). */
  cubin?: Uint8Array
  /** A fat binary (fatbinary's output), instead of a cubin: the symbols are <name>_fatbin[_size]. */
  fatbin?: Uint8Array
  /** SASS text (e.g. nvdisasm output); stored NUL-terminated in `.nvdisasm`. */
  sass?: string | Uint8Array
  /** Symbol prefix: a C identifier. */
  name: string
  hostArch: HostArch
}

/** e_machine per supported host. arm64ec is a Windows (COFF) target, so it has no ELF form here. */
export const HOST_MACHINES: Readonly<Record<HostArch, number>> = Object.freeze({
  x86_64: EM_X86_64,
  aarch64: EM_AARCH64,
})

/** The global symbols packageHostObject defines for `name`. */
export function hostObjectSymbols(name: string, withSass: boolean, image: 'cubin' | 'fatbin' = 'cubin'): string[] {
  const names = [`${name}_${image}`, `${name}_${image}_size`]
  if (withSass) names.push(`${name}_sass`, `${name}_sass_size`)
  return names
}

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const CUBIN_ALIGN = 8

/**
 * Returns an ELF64 relocatable object for `hostArch` defining `<name>_cubin` (the cubin bytes,
 * 8-byte aligned, read-only) and `<name>_cubin_size` (uint64_t), and with `sass`, `<name>_sass`
 * (NUL-terminated text in `.nvdisasm`) and `<name>_sass_size` (uint64_t, the length without the NUL).
 */
export function packageHostObject(input: HostObjectInput): Buffer {
  const { sections, symbols, hostArch } = hostObjectLayout(input)
  sections.push({ name: '.note.gnu.property', type: SHT_NOTE, flags: SHF_ALLOC, align: 8, data: gnuPropertyNote(hostArch) })
  sections.push({ name: '.note.GNU-stack', type: SHT_PROGBITS, flags: 0, align: 1, data: Buffer.alloc(0) })
  return writeRelocatable(HOST_MACHINES[hostArch], sections, symbols)
}

/**
 * What a host object holds, whatever its container (ELF here, COFF in coff.ts): its data sections,
 * all read-only, and the global symbols in them, and the host it is for. `input` is checked first.
 */
export function hostObjectLayout(input: HostObjectInput): { sections: SectionSpec[]; symbols: SymbolSpec[]; hostArch: HostArch } {
  const { cubin, image, sassBytes, name, hostArch } = checkInput(input)

  const rodataSize = alignUp(cubin.length, CUBIN_ALIGN) + 8 * (sassBytes === undefined ? 1 : 2)
  const rodata = Buffer.alloc(rodataSize)
  rodata.set(cubin, 0)
  const cubinSizeAt = alignUp(cubin.length, CUBIN_ALIGN)
  writeU64(rodata, cubin.length, cubinSizeAt)
  const sassSizeAt = cubinSizeAt + 8
  if (sassBytes !== undefined) writeU64(rodata, sassBytes.length, sassSizeAt)

  const sections: SectionSpec[] = [
    { name: '.rodata', type: SHT_PROGBITS, flags: SHF_ALLOC, align: CUBIN_ALIGN, data: rodata },
  ]
  const symbols: SymbolSpec[] = [
    { name: `${name}_${image}`, section: 1, value: 0, size: cubin.length },
    { name: `${name}_${image}_size`, section: 1, value: cubinSizeAt, size: 8 },
  ]
  if (sassBytes !== undefined) {
    const text = Buffer.alloc(sassBytes.length + 1) // trailing NUL from alloc
    text.set(sassBytes, 0)
    sections.push({ name: '.nvdisasm', type: SHT_PROGBITS, flags: SHF_ALLOC, align: 1, data: text })
    symbols.push(
      { name: `${name}_sass`, section: 2, value: 0, size: text.length },
      { name: `${name}_sass_size`, section: 1, value: sassSizeAt, size: 8 },
    )
  }
  return { sections, symbols, hostArch }
}

function checkInput(input: HostObjectInput): { cubin: Uint8Array; image: 'cubin' | 'fatbin'; sassBytes: Uint8Array | undefined; name: string; hostArch: HostArch } {
  if (typeof input !== 'object' || input === null) throw elfTypeError('input', 'an object { cubin, sass?, name, hostArch }', input)
  // The input's own fields only, each read once: a sass or fatbin inherited from a polluted
  // Object.prototype had added <name>_sass to every object, or failed every one.
  const given = own(input, 'cubin')
  const fatbin = own(input, 'fatbin')
  const sass = own(input, 'sass')
  const name = own(input, 'name')
  const hostArch = own(input, 'hostArch')
  // The device image: a cubin, or a fat binary (its bytes are laid out and aligned the same way).
  const image = fatbin === undefined ? 'cubin' : 'fatbin'
  if (image === 'fatbin' && given !== undefined) throw elfTypeError('cubin', 'undefined when fatbin is given', given)
  const cubin = image === 'fatbin' ? fatbin : given
  if (!isBytes(cubin)) throw elfTypeError(image, 'a Uint8Array or Buffer', cubin)
  if (cubin.length === 0) throw elfRangeError('ERR_ELF_INVALID_VALUE', image, 'is empty')
  if (typeof name !== 'string') throw elfTypeError('name', 'a string', name)
  if (!C_IDENTIFIER.test(name)) {
    throw elfRangeError('ERR_ELF_INVALID_NAME', 'name', `${JSON.stringify(name)} is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`)
  }
  if (typeof hostArch !== 'string') throw elfTypeError('hostArch', "'x86_64' or 'aarch64'", hostArch)
  if (!Object.hasOwn(HOST_MACHINES, hostArch)) {
    throw elfRangeError('ERR_ELF_UNSUPPORTED_HOST_ARCH', 'hostArch',
      `${JSON.stringify(hostArch)} is not supported; supported: ${Object.keys(HOST_MACHINES).join(', ')}`)
  }
  let sassBytes: Uint8Array | undefined
  if (sass !== undefined) {
    if (typeof sass === 'string') sassBytes = Buffer.from(sass, 'utf8')
    else if (isBytes(sass)) sassBytes = sass
    else throw elfTypeError('sass', 'a string or Uint8Array', sass)
    // C readers take <name>_sass as a C string; an inner NUL would silently cut it short.
    const nul = sassBytes.indexOf(0)
    if (nul !== -1) throw elfRangeError('ERR_ELF_INVALID_VALUE', 'sass', `contains a NUL byte at offset ${nul}`)
  }
  return { cubin, image, sassBytes, name, hostArch: hostArch as HostArch }
}

export interface SectionSpec {
  name: string
  type: number
  flags: number
  align: number
  data: Uint8Array
}

export interface SymbolSpec {
  name: string
  /** Index in the final section header table. */
  section: number
  value: number
  size: number
}

/**
 * Writes an ELF64 little-endian ET_REL: `sections` become headers 1..n in order, followed by
 * .symtab, .strtab and .shstrtab. Every symbol is a global STT_OBJECT with default visibility.
 */
/** A section with its header's link, info and entsize: every one the same shape, and each u64 written
 * without a BigInt, so the writer stays one small, stable piece of optimized code. */
interface HeaderedSection extends SectionSpec {
  link: number
  info: number
  entsize: number
}

function headered(s: SectionSpec, link = 0, info = 0, entsize = 0): HeaderedSection {
  return { name: s.name, type: s.type, flags: s.flags, align: s.align, data: s.data, link, info, entsize }
}

/** A u64 field from a non-negative safe integer (every size, offset and flag written here). */
function writeU64(buf: Buffer, value: number, at: number): void {
  buf.writeUInt32LE(value % 0x1_0000_0000, at)
  buf.writeUInt32LE(Math.floor(value / 0x1_0000_0000), at + 4)
}

function writeRelocatable(machine: number, sections: readonly SectionSpec[], symbols: readonly SymbolSpec[]): Buffer {
  const strtab = new StringTable()
  const symtab = Buffer.alloc(ELF64_SYM_SIZE * (symbols.length + 1)) // entry 0: the null symbol
  for (const [i, sym] of symbols.entries()) {
    const at = ELF64_SYM_SIZE * (i + 1)
    symtab.writeUInt32LE(strtab.add(sym.name), at)
    symtab.writeUInt8((STB_GLOBAL << 4) | STT_OBJECT, at + 4)
    symtab.writeUInt8(STV_DEFAULT, at + 5)
    symtab.writeUInt16LE(sym.section, at + 6)
    writeU64(symtab, sym.value, at + 8)
    writeU64(symtab, sym.size, at + 16)
  }
  const strtabIndex = sections.length + 2
  const all: HeaderedSection[] = [
    ...sections.map((s) => headered(s)),
    // sh_info of .symtab: index of the first non-local symbol; every symbol after the null one is global.
    headered({ name: '.symtab', type: SHT_SYMTAB, flags: 0, align: 8, data: symtab }, strtabIndex, 1, ELF64_SYM_SIZE),
    headered({ name: '.strtab', type: SHT_STRTAB, flags: 0, align: 1, data: strtab.bytes() }),
  ]
  const shstrtab = new StringTable()
  const nameOffsets = all.map((s) => shstrtab.add(s.name))
  const shstrtabName = shstrtab.add('.shstrtab')
  all.push(headered({ name: '.shstrtab', type: SHT_STRTAB, flags: 0, align: 1, data: shstrtab.bytes() }))
  nameOffsets.push(shstrtabName)

  // Pass 1: place section contents after the ELF header, each at its alignment.
  const { offsets, end } = placeSections(ELF64_EHDR_SIZE, all)
  const shoff = alignUp(end, 8)
  const shnum = all.length + 1
  const out = Buffer.alloc(shoff + ELF64_SHDR_SIZE * shnum)

  // Pass 2: the ELF header, the contents, then the section headers (header 0 stays all zero).
  out.set(ELF_MAGIC, 0)
  out[4] = ELFCLASS64
  out[5] = ELFDATA2LSB
  out[6] = EV_CURRENT // EI_VERSION; EI_OSABI 0 (System V) and EI_ABIVERSION 0 stay zero
  out.writeUInt16LE(ET_REL, 16)
  out.writeUInt16LE(machine, 18)
  out.writeUInt32LE(EV_CURRENT, 20)
  writeU64(out, 0, 24) // e_entry
  writeU64(out, 0, 32) // e_phoff: a relocatable has no program headers
  writeU64(out, shoff, 40)
  out.writeUInt32LE(0, 48) // e_flags: none defined for x86_64; 0 is the AArch64 default too
  out.writeUInt16LE(ELF64_EHDR_SIZE, 52)
  out.writeUInt16LE(0, 54) // e_phentsize
  out.writeUInt16LE(0, 56) // e_phnum
  out.writeUInt16LE(ELF64_SHDR_SIZE, 58)
  out.writeUInt16LE(shnum, 60)
  out.writeUInt16LE(shnum - 1, 62) // e_shstrndx: .shstrtab is last
  for (const [i, s] of all.entries()) {
    out.set(s.data, offsets[i])
    const at = shoff + ELF64_SHDR_SIZE * (i + 1)
    out.writeUInt32LE(nameOffsets[i] ?? 0, at)
    out.writeUInt32LE(s.type, at + 4)
    writeU64(out, s.flags, at + 8)
    writeU64(out, 0, at + 16) // sh_addr: assigned by the linker
    writeU64(out, offsets[i] ?? 0, at + 24)
    writeU64(out, s.data.length, at + 32)
    out.writeUInt32LE(s.link, at + 40)
    out.writeUInt32LE(s.info, at + 44)
    writeU64(out, s.align, at + 48)
    writeU64(out, s.entsize, at + 56)
  }
  return out
}

/** An ELF string table: offset 0 is the empty string; equal strings share one copy. */
export class StringTable {
  private readonly parts: Buffer[] = [Buffer.alloc(1)]
  private readonly offsets = new Map<string, number>([['', 0]])
  private size = 1

  add(name: string): number {
    const known = this.offsets.get(name)
    if (known !== undefined) return known
    const bytes = Buffer.from(`${name}\0`, 'utf8')
    const at = this.size
    this.parts.push(bytes)
    this.offsets.set(name, at)
    this.size += bytes.length
    return at
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts, this.size)
  }
}

/**
 * Where each section's contents go when they follow one another from `start`, each at its
 * alignment, and where the last one ends: the first pass of an object writer (ELF or COFF).
 */
export function placeSections(start: number, sections: readonly { align: number; data: Uint8Array }[]): { offsets: number[]; end: number } {
  let end = start
  const offsets = sections.map((s) => {
    const at = alignUp(end, s.align)
    end = at + s.data.length
    return at
  })
  return { offsets, end }
}

export function alignUp(value: number, align: number): number {
  return Math.ceil(value / align) * align
}
