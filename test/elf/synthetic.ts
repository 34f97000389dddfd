// A minimal cubin written from scratch, shaped like ptxas 13.0 output (EM_CUDA, register counts in
// .nv.info keyed by symbol index, launch attributes in .nv.info.<kernel>, kernels marked with
// STO_CUDA_ENTRY). It lets the reader's tests run without ptxas and lets the malformed-input rows
// patch one exact field, found through `layout`.

export interface SyntheticKernel {
  name: string
  registers?: number
  /** Raw records of .nv.info.<name> (see nval/hval/sval). */
  records?: Buffer
}

export interface SyntheticSpec {
  abiVersion?: number
  eFlags?: number
  machine?: number
  kernels: SyntheticKernel[]
  functions?: { name: string; registers?: number }[]
}

export interface SectionLayout {
  index: number
  /** Where this section's header starts. */
  header: number
  offset: number
  size: number
}

export interface Synthetic {
  bytes: Buffer
  shoff: number
  sections: Record<string, SectionLayout>
}

export const nval = (attr: number): Buffer => Buffer.from([0x01, attr, 0, 0])

export function hval(attr: number, value: number): Buffer {
  const b = Buffer.from([0x03, attr, 0, 0])
  b.writeUInt16LE(value, 2)
  return b
}

export function sval(attr: number, ...words: number[]): Buffer {
  const b = Buffer.alloc(4 + 4 * words.length)
  b[0] = 0x04
  b[1] = attr
  b.writeUInt16LE(4 * words.length, 2)
  words.forEach((w, i) => b.writeUInt32LE(w, 4 + 4 * i))
  return b
}

const SHT_PROGBITS = 1
const SHT_SYMTAB = 2
const SHT_STRTAB = 3
const SHT_CUDA_INFO = 0x7000_0000

export function syntheticCubin(spec: SyntheticSpec): Synthetic {
  const strings = new Strings()
  const functions = spec.functions ?? []
  // Symbols: the null one, device functions (local), then kernels (global, STO_CUDA_ENTRY).
  interface Sym { name: number; info: number; other: number; shndx: number; registers?: number }
  const syms: Sym[] = [{ name: 0, info: 0, other: 0, shndx: 0 }]
  for (const f of functions) syms.push({ name: strings.add(f.name), info: 0x02, other: 0, shndx: 0, ...(f.registers === undefined ? {} : { registers: f.registers }) })

  // Section order: [1] .shstrtab [2] .strtab [3] .symtab [4] .nv.info, then per kernel .nv.info.k and .text.k.
  const names = ['.shstrtab', '.strtab', '.symtab', '.nv.info']
  for (const k of spec.kernels) names.push(`.nv.info.${k.name}`, `.text.${k.name}`)
  for (const [i, k] of spec.kernels.entries()) {
    syms.push({ name: strings.add(k.name), info: 0x12, other: 0x10, shndx: 6 + 2 * i, ...(k.registers === undefined ? {} : { registers: k.registers }) })
  }
  const shstrings = new Strings()
  const nameOffsets = names.map((n) => shstrings.add(n))

  const symtab = Buffer.alloc(24 * syms.length)
  syms.forEach((s, i) => {
    symtab.writeUInt32LE(s.name, 24 * i)
    symtab[24 * i + 4] = s.info
    symtab[24 * i + 5] = s.other
    symtab.writeUInt16LE(s.shndx, 24 * i + 6)
  })
  const nvinfo = Buffer.concat(syms.flatMap((s, i) => (s.registers === undefined ? [] : [sval(0x2f, i, s.registers)])))

  const contents: { type: number; data: Buffer; link: number; entsize: number; align: number }[] = [
    { type: SHT_STRTAB, data: shstrings.bytes(), link: 0, entsize: 0, align: 1 },
    { type: SHT_STRTAB, data: strings.bytes(), link: 0, entsize: 0, align: 1 },
    { type: SHT_SYMTAB, data: symtab, link: 2, entsize: 24, align: 8 },
    { type: SHT_CUDA_INFO, data: nvinfo, link: 3, entsize: 0, align: 4 },
  ]
  for (const k of spec.kernels) {
    contents.push({ type: SHT_CUDA_INFO, data: k.records ?? Buffer.alloc(0), link: 3, entsize: 0, align: 4 })
    contents.push({ type: SHT_PROGBITS, data: Buffer.alloc(16), link: 3, entsize: 0, align: 128 })
  }

  let offset = 64
  const offsets = contents.map((c) => {
    offset = Math.ceil(offset / c.align) * c.align
    const at = offset
    offset += c.data.length
    return at
  })
  const shoff = Math.ceil(offset / 8) * 8
  const shnum = contents.length + 1
  const bytes = Buffer.alloc(shoff + 64 * shnum)
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x41, spec.abiVersion ?? 8], 0)
  bytes.writeUInt16LE(2, 16) // ET_EXEC, as plain ptxas writes
  bytes.writeUInt16LE(spec.machine ?? 190, 18)
  bytes.writeUInt32LE(1, 20)
  bytes.writeBigUInt64LE(BigInt(shoff), 40)
  bytes.writeUInt32LE(spec.eFlags ?? 0x06006402, 48)
  bytes.writeUInt16LE(64, 52)
  bytes.writeUInt16LE(64, 58)
  bytes.writeUInt16LE(shnum, 60)
  bytes.writeUInt16LE(1, 62)
  const sections: Record<string, SectionLayout> = {}
  contents.forEach((c, i) => {
    const at = offsets[i] ?? 0
    bytes.set(c.data, at)
    const header = shoff + 64 * (i + 1)
    bytes.writeUInt32LE(nameOffsets[i] ?? 0, header)
    bytes.writeUInt32LE(c.type, header + 4)
    bytes.writeBigUInt64LE(BigInt(at), header + 24)
    bytes.writeBigUInt64LE(BigInt(c.data.length), header + 32)
    bytes.writeUInt32LE(c.link, header + 40)
    bytes.writeBigUInt64LE(BigInt(c.align), header + 48)
    bytes.writeBigUInt64LE(BigInt(c.entsize), header + 56)
    sections[names[i] ?? ''] = { index: i + 1, header, offset: at, size: c.data.length }
  })
  return { bytes, shoff, sections }
}

class Strings {
  private readonly parts: Buffer[] = [Buffer.alloc(1)]
  private size = 1

  add(s: string): number {
    const at = this.size
    const b = Buffer.from(`${s}\0`)
    this.parts.push(b)
    this.size += b.length
    return at
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts)
  }
}
