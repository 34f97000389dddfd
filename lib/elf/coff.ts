// The host object for Windows: the same sections and symbols as the ELF object (package.ts's
// hostObjectLayout), in a COFF object file (Microsoft PE/COFF specification, "COFF File Header",
// "Section Table", "COFF Symbol Table", "COFF String Table"), as link.exe and the mingw-w64 ld take.
//
// Layout (all little-endian; data only, so no relocations and no line numbers):
//
//   file header            20 bytes: machine, section count, time stamp 0 (so the bytes depend
//                          on the input alone), symbol table offset and count
//   section table          40 bytes a section:
//     [1] .rdata           <name>_cubin (8-aligned), <name>_cubin_size (u64), [<name>_sass_size]
//     [2] .nvdisasm        <name>_sass, NUL-terminated            (only with SASS text)
//   raw data               each section's bytes, at its alignment
//   symbol table           18 bytes a symbol: each global, IMAGE_SYM_CLASS_EXTERNAL, no type
//   string table           u32 size (itself included), then the names longer than 8 bytes
//
// ELF's `.rodata` is COFF's `.rdata`, Windows' read-only data. C names are not decorated on x64 or
// ARM64 (only 32-bit x86 prefixes an underscore), so `<name>_cubin` is the symbol's name as is.
// Neither note of the ELF object has a COFF form: control-flow guard and CET marks live in a
// linked image's load config, never in a data object.
import { elfRangeError } from './errors.js'
import { alignUp, hostObjectLayout, placeSections, StringTable, type HostArch, type HostObjectInput } from './package.js'

export const IMAGE_FILE_MACHINE_AMD64 = 0x8664
export const IMAGE_FILE_MACHINE_ARM64 = 0xaa64
export const IMAGE_SCN_CNT_INITIALIZED_DATA = 0x0000_0040
export const IMAGE_SCN_MEM_READ = 0x4000_0000
export const IMAGE_SYM_CLASS_EXTERNAL = 2

const FILE_HEADER_SIZE = 20
const SECTION_HEADER_SIZE = 40
const SYMBOL_SIZE = 18
/** Longest name a section header or symbol holds inline; longer ones go to the string table. */
const SHORT_NAME = 8

/** IMAGE_FILE_MACHINE_* per host arch. */
export const COFF_MACHINES: Readonly<Record<HostArch, number>> = Object.freeze({
  x86_64: IMAGE_FILE_MACHINE_AMD64,
  aarch64: IMAGE_FILE_MACHINE_ARM64,
})

/** ELF section names that Windows spells otherwise. */
const COFF_SECTION_NAMES: Readonly<Record<string, string>> = Object.freeze({ '.rodata': '.rdata' })

/**
 * Returns a COFF object for Windows on `hostArch` with the symbols packageHostObject defines,
 * in read-only data sections: `<name>_cubin`, `<name>_cubin_size` (uint64_t) and, with `sass`,
 * `<name>_sass` and `<name>_sass_size`.
 */
export function packageCoffObject(input: HostObjectInput): Buffer {
  const { sections, symbols, hostArch } = hostObjectLayout(input)
  const strings = new CoffStringTable()
  const names = sections.map((s) => coffName(COFF_SECTION_NAMES[s.name] ?? s.name, strings, 'section'))
  const symbolNames = symbols.map((sym) => coffName(sym.name, strings, 'symbol'))

  // Pass 1: place the raw data after the headers, each section at its alignment.
  const { offsets: dataAt, end } = placeSections(FILE_HEADER_SIZE + SECTION_HEADER_SIZE * sections.length, sections)
  const symbolTableAt = alignUp(end, 4)
  const stringTable = strings.bytes()
  const out = Buffer.alloc(symbolTableAt + SYMBOL_SIZE * symbols.length + stringTable.length)

  // Pass 2: the file header, the section table and data, the symbol table, the string table.
  out.writeUInt16LE(COFF_MACHINES[hostArch], 0)
  out.writeUInt16LE(sections.length, 2)
  out.writeUInt32LE(0, 4) // TimeDateStamp: none, so equal inputs give equal objects
  out.writeUInt32LE(symbolTableAt, 8)
  out.writeUInt32LE(symbols.length, 12)
  out.writeUInt16LE(0, 16) // SizeOfOptionalHeader: an object file has none
  out.writeUInt16LE(0, 18) // Characteristics: none apply to an object file
  for (const [i, s] of sections.entries()) {
    const at = FILE_HEADER_SIZE + SECTION_HEADER_SIZE * i
    names[i]!.copy(out, at)
    // VirtualSize, VirtualAddress: 0 in an object file.
    out.writeUInt32LE(s.data.length, at + 16) // SizeOfRawData
    out.writeUInt32LE(s.data.length === 0 ? 0 : dataAt[i]!, at + 20) // PointerToRawData
    // PointerToRelocations, PointerToLinenumbers, NumberOfRelocations, NumberOfLinenumbers: none.
    out.writeUInt32LE(IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ | alignFlag(s.align), at + 36)
    out.set(s.data, dataAt[i]!)
  }
  for (const [i, sym] of symbols.entries()) {
    const at = symbolTableAt + SYMBOL_SIZE * i
    symbolNames[i]!.copy(out, at)
    out.writeUInt32LE(sym.value, at + 8)
    out.writeInt16LE(sym.section, at + 12) // SectionNumber: 1-based, as in the layout
    out.writeUInt16LE(0, at + 14) // Type: not a function
    out.writeUInt8(IMAGE_SYM_CLASS_EXTERNAL, at + 16)
    out.writeUInt8(0, at + 17) // NumberOfAuxSymbols
  }
  stringTable.copy(out, symbolTableAt + SYMBOL_SIZE * symbols.length)
  return out
}

/**
 * The 8-byte name field: the name itself, NUL-padded, when it fits; else a reference to the
 * string table, which a section spells "/<decimal offset>" and a symbol as four zero bytes and
 * the offset.
 */
function coffName(name: string, strings: CoffStringTable, kind: 'section' | 'symbol'): Buffer {
  const field = Buffer.alloc(SHORT_NAME)
  const bytes = Buffer.from(name, 'utf8')
  if (bytes.length <= SHORT_NAME) {
    bytes.copy(field)
    return field
  }
  const offset = strings.add(name)
  if (kind === 'symbol') {
    field.writeUInt32LE(offset, 4)
    return field
  }
  const reference = `/${offset}`
  if (reference.length > SHORT_NAME) throw elfRangeError('ERR_ELF_INVALID_VALUE', 'name', `section name ${name} is past what a COFF section header can reference`)
  field.write(reference, 'latin1')
  return field
}

/** IMAGE_SCN_ALIGN_<n>BYTES: log2(n) + 1 in bits 20-23. */
function alignFlag(align: number): number {
  return (Math.log2(align) + 1) << 20
}

/**
 * The COFF string table: a u32 total size (counting itself), then NUL-terminated names. It is
 * ELF's (package.ts) moved along: ELF's names start after one NUL at offset 1, COFF's after the
 * size at offset 4.
 */
class CoffStringTable {
  private readonly elf = new StringTable()

  add(name: string): number {
    return this.elf.add(name) + 3
  }

  bytes(): Buffer {
    const names = this.elf.bytes().subarray(1)
    const size = Buffer.alloc(4)
    size.writeUInt32LE(4 + names.length, 0)
    return Buffer.concat([size, names])
  }
}
