// readCubin. Real cubins from the real ptxas: the SM, the kernel names and the register counts
// agree with `ptxas -v`, and the launch attributes with the directives the emitter printed.
// Synthetic cubins: both e_flags layouts, and a table of malformed inputs, each a CubinError with
// its code. Then every truncation and random mutations: a CubinError or a summary, nothing else.
import fc from 'fast-check'
import t from 'tap'
import { CubinError, readCubin, type CubinKernel, type CubinSummary } from '../../lib/elf/index.js'
import {
  addr, examplePtx, ins, param, printModule, regs, type GpuName, type PtxModule,
} from '../../lib/ptx/index.js'
import { assemble, registersFromVerbose, skipWithoutPtxas } from '../ptx/ptxas.js'
import { hval, nval, sval, syntheticCubin } from './synthetic.js'

const EIATTR = { MAX_THREADS: 0x05, REQNTID: 0x10, MAXREG_COUNT: 0x1b, CTA_PER_CLUSTER: 0x3d, EXPLICIT_CLUSTER: 0x3e, MAX_CLUSTER_RANK: 0x3f }

const none = { maxThreads: null, reqntid: null, maxRegCount: null, ctaPerCluster: null, explicitCluster: false, maxClusterRank: null }

// Two kernels and two device functions; the records mimic what ptxas writes, including
// attributes the reader skips (0x37 SVAL, 0x50 HVAL, 0x4a BVAL).
const base = syntheticCubin({
  kernels: [
    { name: 'alpha', registers: 24, records: Buffer.concat([sval(0x37, 0x82), hval(0x50, 0), sval(EIATTR.MAX_THREADS, 256, 1, 1), hval(EIATTR.MAXREG_COUNT, 255)]) },
    {
      name: 'beta',
      registers: 40,
      records: Buffer.concat([
        nval(EIATTR.EXPLICIT_CLUSTER), sval(EIATTR.CTA_PER_CLUSTER, 2, 1, 1), Buffer.from([0x02, 0x4a, 0, 0]),
        sval(EIATTR.REQNTID, 64, 2, 1), hval(EIATTR.MAXREG_COUNT, 40), sval(EIATTR.MAX_CLUSTER_RANK, 4),
      ]),
    },
  ],
  functions: [{ name: 'helper', registers: 16 }, { name: 'inlined' }],
})

t.test('a synthetic cubin reads back', async (t) => {
  const summary = readCubin(base.bytes)
  t.same(summary, {
    sm: 100, arch: 'sm_100', variant: '', abiVersion: 8, osAbi: 0x41, eFlags: 0x06006402, elfType: 2,
    kernels: [
      { name: 'alpha', registers: 24, ...none, maxThreads: [256, 1, 1], maxRegCount: 255 },
      { name: 'beta', registers: 40, ...none, reqntid: [64, 2, 1], maxRegCount: 40, ctaPerCluster: [2, 1, 1], explicitCluster: true, maxClusterRank: 4 },
    ],
    functions: [{ name: 'helper', registers: 16 }, { name: 'inlined', registers: null }],
  } satisfies CubinSummary)
})

t.test('names: an ASCII table is read as text, any other is decoded as UTF-8', async (t) => {
  // The string tables of ptxas are ASCII and are read as one string each; a name outside ASCII
  // takes the UTF-8 decode, and a byte that is not UTF-8 reads as U+FFFD, as before.
  const utf8 = readCubin(syntheticCubin({ kernels: [{ name: 'kërnel', registers: 8 }], functions: [{ name: 'dévice' }] }).bytes)
  t.same([utf8.kernels.map((k) => k.name), utf8.functions.map((f) => f.name)], [['kërnel'], ['dévice']], 'UTF-8 names')
  const b = Buffer.from(base.bytes)
  const strtab = base.sections['.strtab']!
  const at = b.subarray(strtab.offset, strtab.offset + strtab.size).indexOf('alpha\0')
  b[strtab.offset + at] = 0xff
  t.same(readCubin(b).kernels.map((k) => k.name), ['\ufffdlpha', 'beta'], 'a byte that is not UTF-8')
  t.same(readCubin(base.bytes).kernels.map((k) => k.name), ['alpha', 'beta'], 'ASCII names, the input untouched')
})

t.test('any kind of Uint8Array reads the same: a subclass, a pooled Buffer, shared memory', async (t) => {
  const expected = readCubin(base.bytes)
  // A subclass whose constructor ignores subarray's offset and length: its subarray returns the
  // whole buffer, which the string tables once took for theirs (every name was the whole file).
  class Bytes extends Uint8Array {
    constructor(n: number) {
      super(n)
    }
  }
  const sub = new Bytes(base.bytes.length)
  sub.set(base.bytes)
  t.same(readCubin(sub), expected, 'a subclass with its own constructor')
  const pooled = Buffer.concat([Buffer.from('xyz'), base.bytes]).subarray(3)
  t.same(readCubin(pooled), expected, 'a Buffer at an offset in its memory')
  const shared = new Uint8Array(new SharedArrayBuffer(base.bytes.length))
  shared.set(base.bytes)
  t.same(readCubin(shared), expected, 'a SharedArrayBuffer')
})

t.test('the SM comes from e_flags as EI_ABIVERSION says', async (t) => {
  const rows: [number, number, number][] = [
    [8, 0x06005a04, 90], // ptxas 13.0, sm_90: bits 8-15
    [8, 0x06006402, 100],
    [8, 0x06006702, 103],
    [8, 0x06006e02, 110],
    [8, 0x06007802, 120],
    [8, 0x06007902, 121],
    [7, 0x005a055a, 90], // older layout: SM in the low byte, 64-bit and texmode flags above it
    [7, 0x00500550, 80],
  ]
  for (const [abiVersion, eFlags, sm] of rows) {
    const summary = readCubin(syntheticCubin({ abiVersion, eFlags, kernels: [{ name: 'k' }] }).bytes)
    t.match(summary, { abiVersion, eFlags, sm, arch: `sm_${sm}` }, `ABI ${abiVersion}, e_flags 0x${eFlags.toString(16)} -> sm_${sm}`)
  }
})

interface BadRow {
  name: string
  patch: (b: Buffer) => Buffer
  code: string
  message?: RegExp
}

const s = base.sections
const header = (name: string): number => {
  const section = s[name]
  if (section === undefined) throw new Error(`no section ${name} in the synthetic cubin`)
  return section.header
}
const set = (fn: (b: Buffer) => void) => (b: Buffer): Buffer => {
  fn(b)
  return b
}

const bad: BadRow[] = [
  { name: 'empty', patch: () => Buffer.alloc(0), code: 'ERR_CUBIN_TRUNCATED', message: /the ELF header needs bytes 0\.\.64/ },
  { name: 'shorter than the ELF header', patch: (b) => b.subarray(0, 63), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'no ELF magic', patch: set((b) => { b[0] = 0 }), code: 'ERR_CUBIN_NOT_ELF' },
  { name: 'a host object', patch: () => Buffer.from('#!/bin/sh\n'.padEnd(64, ' ')), code: 'ERR_CUBIN_NOT_ELF' },
  { name: 'ELFCLASS32', patch: set((b) => { b[4] = 1 }), code: 'ERR_CUBIN_LAYOUT' },
  { name: 'big-endian', patch: set((b) => { b[5] = 2 }), code: 'ERR_CUBIN_LAYOUT' },
  { name: 'x86-64 machine', patch: set((b) => b.writeUInt16LE(62, 18)), code: 'ERR_CUBIN_MACHINE', message: /e_machine is 62, not EM_CUDA \(190\)/ },
  { name: 'EI_ABIVERSION 6', patch: set((b) => { b[8] = 6 }), code: 'ERR_CUBIN_ABI_VERSION', message: /EI_ABIVERSION 6/ },
  { name: 'section table past the end', patch: set((b) => b.writeBigUInt64LE(BigInt(b.length), 40)), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'section table at 2^63', patch: set((b) => b.writeBigUInt64LE(2n ** 63n, 40)), code: 'ERR_CUBIN_MALFORMED', message: /e_shoff is 9223372036854775808/ },
  // A u64 is read as two u32 halves: the last safe integer is an offset (out of bounds), the next one is not a number at all.
  { name: 'section table at 2^53 - 1', patch: set((b) => b.writeBigUInt64LE(2n ** 53n - 1n, 40)), code: 'ERR_CUBIN_TRUNCATED', message: /needs bytes 9007199254740991\.\./ },
  { name: 'section table at 2^53', patch: set((b) => b.writeBigUInt64LE(2n ** 53n, 40)), code: 'ERR_CUBIN_MALFORMED', message: /e_shoff is 9007199254740992, beyond any input size/ },
  { name: 'section table at 6 GiB (a low half past 2^31)', patch: set((b) => b.writeBigUInt64LE(0x1_8000_0000n, 40)), code: 'ERR_CUBIN_TRUNCATED', message: /needs bytes 6442450944\.\./ },
  { name: 'symbol table size with a high half', patch: set((b) => b.writeUInt32LE(1, header('.symtab') + 36)), code: 'ERR_CUBIN_MALFORMED', message: /size 429496\d+;/ },
  { name: 'section header size 40', patch: set((b) => b.writeUInt16LE(40, 58)), code: 'ERR_CUBIN_MALFORMED', message: /e_shentsize is 40/ },
  { name: '65535 sections', patch: set((b) => b.writeUInt16LE(0xffff, 60)), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'extended count, huge', patch: set((b) => { b.writeUInt16LE(0, 60); b.writeBigUInt64LE(2n ** 40n, base.shoff + 32) }), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'e_shstrndx out of range', patch: set((b) => b.writeUInt16LE(200, 62)), code: 'ERR_CUBIN_MALFORMED', message: /e_shstrndx 200/ },
  { name: 'e_shstrndx at the symbol table', patch: set((b) => b.writeUInt16LE(3, 62)), code: 'ERR_CUBIN_MALFORMED' },
  { name: 'section name past its table', patch: set((b) => b.writeUInt32LE(10_000, header('.symtab'))), code: 'ERR_CUBIN_MALFORMED', message: /the name of section 3/ },
  { name: 'no symbol table', patch: set((b) => b.writeUInt32LE(1, header('.symtab') + 4)), code: 'ERR_CUBIN_MALFORMED', message: /no symbol table/ },
  { name: 'symbol table past the end', patch: set((b) => b.writeBigUInt64LE(BigInt(b.length - 8), header('.symtab') + 24)), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'symbol entry size 16', patch: set((b) => b.writeBigUInt64LE(16n, header('.symtab') + 56)), code: 'ERR_CUBIN_MALFORMED', message: /entry size 16/ },
  { name: 'symbol table size not a multiple of 24', patch: set((b) => b.writeBigUInt64LE(BigInt((s['.symtab']?.size ?? 0) - 1), header('.symtab') + 32)), code: 'ERR_CUBIN_MALFORMED' },
  { name: 'symbol table linked to itself', patch: set((b) => b.writeUInt32LE(3, header('.symtab') + 40)), code: 'ERR_CUBIN_MALFORMED', message: /not a string table/ },
  { name: 'symbol table linked past the sections', patch: set((b) => b.writeUInt32LE(0xffff_ffff, header('.symtab') + 40)), code: 'ERR_CUBIN_MALFORMED' },
  { name: 'symbol name past its table', patch: set((b) => b.writeUInt32LE(0x7fff_ffff, (s['.symtab']?.offset ?? 0) + 24)), code: 'ERR_CUBIN_MALFORMED', message: /the name of symbol 1/ },
  { name: 'unterminated last symbol name', patch: set((b) => b.writeBigUInt64LE(BigInt((s['.strtab']?.size ?? 1) - 1), header('.strtab') + 32)), code: 'ERR_CUBIN_MALFORMED', message: /not a NUL-terminated string/ },
  { name: '.nv.info linked elsewhere', patch: set((b) => b.writeUInt32LE(2, header('.nv.info') + 40)), code: 'ERR_CUBIN_MALFORMED', message: /\.nv\.info links to section 2/ },
  { name: '.nv.info past the end', patch: set((b) => b.writeBigUInt64LE(BigInt(b.length), header('.nv.info') + 32)), code: 'ERR_CUBIN_TRUNCATED' },
  { name: 'record of unknown format', patch: set((b) => { b[s['.nv.info']?.offset ?? 0] = 0x07 }), code: 'ERR_CUBIN_NVINFO', message: /unknown record format 0x7/ },
  { name: 'record payload past the section', patch: set((b) => b.writeUInt16LE(0x4000, (s['.nv.info']?.offset ?? 0) + 2)), code: 'ERR_CUBIN_NVINFO', message: /declares 16384 bytes past the section end/ },
  { name: 'REGCOUNT payload of 4 bytes', patch: set((b) => b.writeUInt16LE(4, (s['.nv.info']?.offset ?? 0) + 2)), code: 'ERR_CUBIN_NVINFO', message: /EIATTR_REGCOUNT needs an EIFMT_SVAL payload of 8 bytes/ },
  { name: 'REGCOUNT as HVAL', patch: set((b) => { b[s['.nv.info']?.offset ?? 0] = 0x03 }), code: 'ERR_CUBIN_NVINFO' },
  { name: 'REGCOUNT for symbol 999', patch: set((b) => b.writeUInt32LE(999, (s['.nv.info']?.offset ?? 0) + 4)), code: 'ERR_CUBIN_NVINFO', message: /names symbol 999 of 5/ },
  { name: 'a cut-off record head', patch: set((b) => b.writeBigUInt64LE(BigInt((s['.nv.info']?.size ?? 0) + 2), header('.nv.info') + 32)), code: 'ERR_CUBIN_NVINFO', message: /record head is cut off/ },
  { name: 'MAX_THREADS with 8 bytes', patch: set((b) => b.writeUInt16LE(8, (s['.nv.info.alpha']?.offset ?? 0) + 8 + 4 + 2)), code: 'ERR_CUBIN_NVINFO', message: /EIATTR_MAX_THREADS needs/ },
]

t.test('malformed cubins are CubinErrors with a code', async (t) => {
  for (const row of bad) {
    const bytes = row.patch(Buffer.from(base.bytes))
    t.throws(() => readCubin(bytes), { name: 'CubinError', code: row.code, ...(row.message === undefined ? {} : { message: row.message }) }, row.name)
  }
  t.throws(() => readCubin('ELF' as unknown as Uint8Array), { name: 'TypeError', code: 'ERR_ELF_INVALID_ARG_TYPE', message: /^bytes: / })
})

/**
 * A cubin whose string table is one long name (n bytes of 'A') and whose `count` symbols (device
 * functions) name it at offset 1 (`same`) or at offsets 1, 2, 3... (each a different suffix).
 */
function namesOfOneString(n: number, count: number, same: boolean): Buffer {
  const strtab = 64
  const symtab = Math.ceil((strtab + n + 2) / 8) * 8
  const shoff = Math.ceil((symtab + 24 * count) / 8) * 8
  const b = Buffer.alloc(shoff + 3 * 64)
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x41, 8], 0)
  b.writeUInt16LE(2, 16); b.writeUInt16LE(190, 18); b.writeUInt32LE(1, 20); b.writeUInt32LE(0x06006402, 48)
  b.writeUInt16LE(64, 52); b.writeBigUInt64LE(BigInt(shoff), 40); b.writeUInt16LE(64, 58); b.writeUInt16LE(3, 60); b.writeUInt16LE(1, 62)
  b.fill(0x41, strtab + 1, strtab + 1 + n)
  for (let i = 0; i < count; i++) { b.writeUInt32LE(same ? 1 : 1 + i, symtab + 24 * i); b[symtab + 24 * i + 4] = 2 /* STT_FUNC */ }
  const section = (i: number, type: number, offset: number, size: number, link: number, entsize: number) => {
    const at = shoff + 64 * i
    b.writeUInt32LE(type, at + 4); b.writeBigUInt64LE(BigInt(offset), at + 24); b.writeBigUInt64LE(BigInt(size), at + 32)
    b.writeUInt32LE(link, at + 40); b.writeBigUInt64LE(BigInt(entsize), at + 56)
  }
  section(1, 3, strtab, n + 2, 0, 0) // the string table (section names too)
  section(2, 2, symtab, 24 * count, 1, 24) // the symbols
  return b
}

// Names decoded per symbol: 8,000 symbols naming one 1 MiB string took 38 s and ended the process
// (heap out of memory) from a 1.2 MiB input. Now each offset is decoded once, and names that
// overlap beyond 16 times their table are refused.
t.test('symbols sharing one long name: decoded once; suffixes of it beyond 16 times the table: a CubinError', async (t) => {
  const shared = readCubin(namesOfOneString(1 << 16, 2000, true))
  t.equal(shared.functions.length, 2000)
  t.ok(shared.functions.every((f) => f.name === shared.functions[0]!.name && f.name.length === 1 << 16), 'every symbol has the name')
  t.throws(() => readCubin(namesOfOneString(1 << 16, 2000, false)), { name: 'CubinError', code: 'ERR_CUBIN_MALFORMED', message: /the name of symbol 1\d \(offset \d+\): the table's names overlap beyond 16 times its 65538 bytes/ })
  const few = readCubin(namesOfOneString(64, 8, false))
  t.same(few.functions.map((f) => f.name.length), [64, 63, 62, 61, 60, 59, 58, 57], 'tails shared a few times read as any names')
})

/**
 * A cubin with one kernel symbol whose `count` .nv.info sections all cover the same `size` bytes of
 * attribute records (EIFMT_NVAL heads of an attribute nobody reads).
 */
function nvInfoSharingOneRegion(count: number, size: number): Buffer {
  const names = Buffer.from('\0.shstrtab\0.strtab\0.symtab\0.nv.info\0')
  const strtab = 64 + 48
  const symtab = strtab + 8
  const records = symtab + 48
  const shoff = records + size
  const b = Buffer.alloc(shoff + 64 * (4 + count))
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x41, 8], 0)
  b.writeUInt16LE(2, 16); b.writeUInt16LE(190, 18); b.writeUInt32LE(0x6402, 48)
  b.writeBigUInt64LE(BigInt(shoff), 40); b.writeUInt16LE(64, 58); b.writeUInt16LE(4 + count, 60); b.writeUInt16LE(1, 62)
  names.copy(b, 64)
  b.write('\0k\0', strtab, 'latin1')
  b.writeUInt32LE(1, symtab + 24); b[symtab + 24 + 4] = 0x12; b[symtab + 24 + 5] = 0x10 // STT_FUNC, STO_CUDA_ENTRY
  for (let at = records; at < records + size; at += 4) { b[at] = 1; b[at + 1] = 0x77 }
  const section = (i: number, name: number, type: number, offset: number, length: number, link: number, entsize: number) => {
    const at = shoff + 64 * i
    b.writeUInt32LE(name, at); b.writeUInt32LE(type, at + 4); b.writeBigUInt64LE(BigInt(offset), at + 24)
    b.writeBigUInt64LE(BigInt(length), at + 32); b.writeUInt32LE(link, at + 40); b.writeBigUInt64LE(BigInt(entsize), at + 56)
  }
  section(1, 1, 3, 64, names.length, 0, 0)
  section(2, 11, 3, strtab, 3, 0, 0)
  section(3, 19, 2, symtab, 48, 2, 24)
  for (let i = 0; i < count; i++) section(4 + i, 27, 0x70000000, records, size, 3, 0)
  return b
}

// Walked once per header: 12,000 headers over one 256 KiB region (a 0.98 MiB input) took 34 s.
t.test('.nv.info sections that overlap beyond 16 times the input: a CubinError, not a walk of each', async (t) => {
  t.same(readCubin(nvInfoSharingOneRegion(8, 4096)).kernels.map((k) => k.name), ['k'], 'a few overlapping sections read as any')
  t.throws(() => readCubin(nvInfoSharingOneRegion(2000, 1 << 16)), {
    name: 'CubinError', code: 'ERR_CUBIN_MALFORMED', message: /^section \.nv\.info: the \.nv\.info sections overlap beyond 16 times the cubin's \d+ bytes/,
  })
})

t.test('a view of a detached buffer reads as an empty input', async (t) => {
  const buffer = new ArrayBuffer(64)
  const view = new Uint8Array(buffer)
  structuredClone(buffer, { transfer: [buffer] })
  t.throws(() => readCubin(view), { name: 'CubinError', code: 'ERR_CUBIN_TRUNCATED' }, 'was a TypeError without a code, from DataView')
})

// Both pass instanceof Uint8Array, and readCubin threw V8's uncoded "Method get
// TypedArray.prototype.byteLength called on incompatible receiver" for them.
t.test('a look-alike of a Uint8Array is refused by its brand, naming bytes', async (t) => {
  for (const [name, bytes] of [['a Proxy of a Uint8Array', new Proxy(new Uint8Array(64), {})], ['Object.create(Uint8Array.prototype)', Object.create(Uint8Array.prototype)]]) {
    t.throws(() => readCubin(bytes), { name: 'TypeError', code: 'ERR_ELF_INVALID_ARG_TYPE', field: 'bytes', message: /^bytes: expected a Uint8Array or Buffer, got an object$/ }, name)
  }
})

/** readCubin's outcome for `bytes`: 'ok', or the code of the CubinError; anything else rethrown. */
function outcome(bytes: Uint8Array): string {
  try {
    readCubin(bytes)
    return 'ok'
  } catch (err) {
    if (err instanceof CubinError) return err.code
    throw err
  }
}

t.test('every truncation is a CubinError', async (t) => {
  const codes = new Set<string>()
  for (let length = 0; length < base.bytes.length; length++) codes.add(outcome(base.bytes.subarray(0, length)))
  t.notOk(codes.has('ok'), 'no prefix reads as a cubin (the section table is at the end)')
  t.same([...codes].sort(), ['ERR_CUBIN_TRUNCATED'], 'all report truncation')
})

t.test('random mutations give a summary or a CubinError, nothing else', async (t) => {
  const mutation = fc.record({
    writes: fc.array(fc.tuple(fc.nat({ max: base.bytes.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
    cut: fc.option(fc.nat({ max: base.bytes.length }), { nil: undefined }),
  })
  t.doesNotThrow(() => fc.assert(fc.property(mutation, ({ writes, cut }) => {
    const bytes = Buffer.from(base.bytes)
    for (const [at, value] of writes) bytes[at] = value
    outcome(cut === undefined ? bytes : bytes.subarray(0, cut))
  }), { numRuns: 3000 }))
})

const targets: GpuName[] = ['sm_90', 'sm_90a', 'sm_100', 'sm_100a', 'sm_100f', 'sm_103', 'sm_103a', 'sm_110', 'sm_120', 'sm_120a', 'sm_120f', 'sm_121']

/** The launch attributes each example's directives must leave in its cubin. */
const exampleAttributes: Record<string, [string, Partial<CubinKernel>]> = {
  vadd: ['vadd', { maxThreads: [256, 1, 1], reqntid: null, ctaPerCluster: null }],
  saxpy: ['saxpy', { maxThreads: [256, 1, 1], maxRegCount: 32 }],
  reduce: ['reduce', { reqntid: [256, 1, 1], maxThreads: null }],
  cluster: ['cluster_exchange', { reqntid: [128, 1, 1], ctaPerCluster: [2, 1, 1], explicitCluster: false, maxClusterRank: null }],
}

t.test('real cubins: SM, kernels and registers agree with ptxas -v', { skip: skipWithoutPtxas }, async (t) => {
  for (const [example, [kernel, attributes]] of Object.entries(exampleAttributes)) {
    for (const gpu of targets) {
      const label = `${example} ${gpu}`
      const { cubin, stderr } = assemble(examplePtx(example as 'vadd', gpu), gpu, ['-v'])
      if (cubin === null) {
        t.fail(`${label}: ptxas produced no cubin`, { stderr })
        continue
      }
      const summary = readCubin(cubin)
      t.equal(summary.sm, Number(/^sm_(\d+)/.exec(gpu)?.[1]), `${label}: SM`)
      // The suffix: 'a' from .nv.compat, 'f' from .note.nv.tkinfo (e_flags is the same for all three).
      t.equal(summary.arch, gpu, `${label}: arch with its suffix`)
      t.equal(summary.variant, /[af]$/.exec(gpu)?.[0] ?? '', `${label}: variant`)
      t.equal(summary.abiVersion, 8, `${label}: ptxas 13.0 writes ABI version 8`)
      t.same(summary.kernels.map((k) => k.name), [kernel], `${label}: kernel names`)
      const used = registersFromVerbose(stderr).get(kernel)
      t.type(used, 'number', `${label}: ptxas -v reported registers`)
      t.equal(summary.kernels[0]?.registers, used, `${label}: registers = ptxas -v (${used})`)
      t.match(summary.kernels[0], attributes, `${label}: launch attributes`)
    }
  }
})

/** Two kernels with the directives the examples do not use, and a device function. */
function multiKernel(gpu: GpuName): PtxModule {
  return {
    target: gpu,
    functions: [
      {
        kind: 'func', linkage: 'visible', name: 'helper',
        returns: [param('helper_ret', 'b32')], params: [param('helper_x', 'b32')],
        body: [regs('b32', '%r', 3), ins('ld.param.b32', '%r1', addr('helper_x')), ins('mul.lo.s32', '%r2', '%r1', '%r1'), ins('st.param.b32', addr('helper_ret'), '%r2'), ins('ret')],
      },
      { kind: 'entry', linkage: 'visible', name: 'k_explicit', params: [], launchBounds: { maxntid: [64, 2], explicitcluster: true, maxclusterrank: 4, maxnreg: 40 }, body: [ins('ret')] },
      { kind: 'entry', linkage: 'visible', name: 'k_req', params: [], launchBounds: { reqntid: [32, 4], reqnctapercluster: [2, 1, 1] }, body: [ins('ret')] },
    ],
  }
}

t.test('real relocatable cubins: several kernels, a device function, every launch attribute', { skip: skipWithoutPtxas }, async (t) => {
  for (const gpu of ['sm_90', 'sm_103', 'sm_120'] as const) {
    // -c keeps the uncalled .visible .func, so it has a symbol and a register count of its own.
    const { cubin, stderr } = assemble(printModule(multiKernel(gpu)), gpu, ['-c', '-v'])
    if (cubin === null) {
      t.fail(`${gpu}: ptxas produced no cubin`, { stderr })
      continue
    }
    const summary = readCubin(cubin)
    t.equal(summary.elfType, 1, `${gpu}: ptxas -c writes ET_REL`)
    const verbose = registersFromVerbose(stderr)
    t.same(summary.kernels.map((k) => k.name).sort(), ['k_explicit', 'k_req'], `${gpu}: kernels`)
    for (const k of summary.kernels) t.equal(k.registers, verbose.get(k.name), `${gpu} ${k.name}: registers = ptxas -v`)
    t.match(summary.kernels.find((k) => k.name === 'k_explicit'), { maxThreads: [64, 2, 1], explicitCluster: true, maxClusterRank: 4, maxRegCount: 40, reqntid: null, ctaPerCluster: null }, `${gpu}: k_explicit`)
    t.match(summary.kernels.find((k) => k.name === 'k_req'), { reqntid: [32, 4, 1], ctaPerCluster: [2, 1, 1], explicitCluster: false, maxThreads: null, maxClusterRank: null }, `${gpu}: k_req`)
    const helper = summary.functions.find((f) => f.name === 'helper')
    t.type(helper?.registers, 'number', `${gpu}: the device function has a register count`)
  }
})

t.test('mutated real cubins give a summary or a CubinError', { skip: skipWithoutPtxas }, async (t) => {
  const { cubin } = assemble(examplePtx('reduce', 'sm_100'), 'sm_100')
  if (cubin === null) throw new Error('ptxas produced no cubin')
  const real: Buffer = cubin
  t.equal(outcome(real), 'ok')
  const mutation = fc.array(fc.tuple(fc.nat({ max: real.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 16 })
  t.doesNotThrow(() => fc.assert(fc.property(mutation, (writes) => {
    const bytes = Buffer.from(real)
    for (const [at, value] of writes) bytes[at] = value
    outcome(bytes)
  }), { numRuns: 2000 }))
})
