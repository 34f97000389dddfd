// Fuzzing readCubin: random well-formed cubins read back; mutated ones (field writes with
// boundary values, byte writes, splices, cuts) give a summary or a CubinError, nothing else; the
// answer does not depend on where the bytes sit in their ArrayBuffer.
import fc from 'fast-check'
import t from 'tap'
import { CubinError, readCubin, type CubinSummary } from '../../lib/elf/index.js'
import { hval, nval, sval, syntheticCubin, type Synthetic, type SyntheticSpec } from '../elf/synthetic.js'
import { fuzz } from './budget.js'

const EIATTR = { MAX_THREADS: 0x05, REQNTID: 0x10, MAXREG_COUNT: 0x1b, CTA_PER_CLUSTER: 0x3d, EXPLICIT_CLUSTER: 0x3e, MAX_CLUSTER_RANK: 0x3f }
/** Attributes the reader does not interpret (ptxas writes these too). */
const IGNORED_ATTRS = [0x04, 0x0a, 0x17, 0x19, 0x1c, 0x23, 0x36, 0x37, 0x4a, 0x50]

const u32 = fc.nat({ max: 0xffff_ffff })
const record = fc.oneof(
  fc.constantFrom(...IGNORED_ATTRS).map(nval),
  fc.tuple(fc.constantFrom(...IGNORED_ATTRS, EIATTR.MAXREG_COUNT), fc.nat({ max: 0xffff })).map(([a, v]) => hval(a, v)),
  fc.tuple(fc.constantFrom(...IGNORED_ATTRS), fc.array(u32, { maxLength: 4 })).map(([a, w]) => sval(a, ...w)),
  fc.tuple(fc.constantFrom(EIATTR.MAX_THREADS, EIATTR.REQNTID, EIATTR.CTA_PER_CLUSTER), u32, u32, u32).map(([a, x, y, z]) => sval(a, x, y, z)),
  fc.tuple(fc.constantFrom(EIATTR.MAXREG_COUNT, EIATTR.MAX_CLUSTER_RANK), u32).map(([a, v]) => sval(a, v)),
  fc.constant(nval(EIATTR.EXPLICIT_CLUSTER)),
)
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_$.]{0,12}$/)
const spec: fc.Arbitrary<SyntheticSpec> = fc.record({
  abiVersion: fc.constantFrom(7, 8),
  eFlags: u32,
  kernels: fc.uniqueArray(fc.record({
    name,
    registers: fc.option(fc.nat({ max: 255 }), { nil: undefined }),
    records: fc.array(record, { maxLength: 5 }).map(rs => Buffer.concat(rs)),
  }), { selector: k => k.name, maxLength: 4 }),
  functions: fc.uniqueArray(fc.record({ name, registers: fc.option(fc.nat({ max: 255 }), { nil: undefined }) }), { selector: f => f.name, maxLength: 3 }),
}).filter(s => new Set([...s.kernels, ...s.functions].map(x => x.name)).size === s.kernels.length + s.functions.length)

/** 'ok' and the summary, or the CubinError's code; anything else fails the property. */
function outcome(bytes: Uint8Array): { code: string; summary?: CubinSummary } {
  try {
    return { code: 'ok', summary: readCubin(bytes) }
  } catch (err) {
    if (err instanceof CubinError) return { code: err.code }
    throw err
  }
}

// Values that sit on the edges the reader has to check: zero, one past, sign bits, beyond 2^53.
const interesting = (size: number) => fc.oneof(
  fc.constantFrom(0, 1, 2, 3, 7, 8, 23, 24, 63, 64, 0xff, 0x100, 0xff00, 0xffff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff),
  fc.constantFrom(size - 1, size, size + 1, Math.floor(size / 2)),
  fc.nat({ max: size + 64 }),
)
const interestingBig = (size: number) => fc.oneof(
  interesting(size).map(BigInt),
  fc.constantFrom(2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n, 1n << 40n),
)

type Patch = (b: Buffer, s: Synthetic) => Buffer
/** A patch after a cut or splice may aim past the end: it is then skipped. */
const fits = (b: Buffer, at: number, width: number) => at + width <= b.length

/** One structural change: a header or section-header field, a byte, a splice or a cut. */
function mutation(size: number): fc.Arbitrary<Patch> {
  const headerField = fc.oneof(
    fc.tuple(fc.constantFrom(40), interestingBig(size)).map(([at, v]): Patch => b => (fits(b, at, 8) && b.writeBigUInt64LE(v, at), b)), // e_shoff
    fc.tuple(fc.constantFrom(16, 18, 52, 58, 60, 62), interesting(size)).map(([at, v]): Patch => b => (fits(b, at, 2) && b.writeUInt16LE(v & 0xffff, at), b)),
    fc.tuple(fc.constantFrom(4, 5, 6, 7, 8), fc.nat({ max: 255 })).map(([at, v]): Patch => b => (fits(b, at, 1) && (b[at] = v), b)),
    fc.tuple(fc.constant(48), u32).map(([at, v]): Patch => b => (fits(b, at, 4) && b.writeUInt32LE(v, at), b)),
  )
  // Fields of section header `index` (0 = the null one, where extended numbering lives).
  const sectionField = fc.tuple(fc.nat({ max: 12 }), fc.constantFrom(0, 4, 24, 32, 40, 56), interestingBig(size)).map(([index, field, v]): Patch => (b, s) => {
    const at = s.shoff + 64 * index + field
    if (!fits(b, at, 8)) return b
    if (field === 0 || field === 4 || field === 40) b.writeUInt32LE(Number(v & 0xffff_ffffn), at)
    else b.writeBigUInt64LE(v & 0xffff_ffff_ffff_ffffn, at)
    return b
  })
  const byte = fc.tuple(fc.nat({ max: size - 1 }), fc.nat({ max: 255 })).map(([at, v]): Patch => b => (fits(b, at, 1) && (b[at] = v), b))
  const splice = fc.tuple(fc.nat({ max: size }), fc.nat({ max: 16 }), fc.uint8Array({ maxLength: 16 }))
    .map(([at, remove, insert]): Patch => b => Buffer.concat([b.subarray(0, at), Buffer.from(insert), b.subarray(Math.min(b.length, at + remove))]))
  const cut = fc.nat({ max: size }).map((n): Patch => b => b.subarray(0, n))
  return fc.oneof({ arbitrary: headerField, weight: 2 }, { arbitrary: sectionField, weight: 4 }, { arbitrary: byte, weight: 3 }, splice, cut)
}

t.test('readCubin', async t => {
  await fuzz(t, 'random well-formed cubins read back', fc.property(spec, s => {
    const { code, summary } = outcome(syntheticCubin(s).bytes)
    if (code !== 'ok' || summary === undefined) throw new Error(`well-formed cubin rejected: ${code}`)
    const kernels = summary.kernels.map(k => [k.name, k.registers])
    const functions = summary.functions.map(f => [f.name, f.registers])
    return JSON.stringify(kernels) === JSON.stringify(s.kernels.map(k => [k.name, k.registers ?? null])) &&
      JSON.stringify(functions) === JSON.stringify((s.functions ?? []).map(f => [f.name, f.registers ?? null])) &&
      summary.abiVersion === s.abiVersion
  }), 500)

  await fuzz(t, 'mutated cubins: a summary or a CubinError', fc.property(
    spec.chain(s => {
      const synthetic = syntheticCubin(s)
      return fc.tuple(fc.constant(synthetic), fc.array(mutation(synthetic.bytes.length), { minLength: 1, maxLength: 6 }))
    }),
    ([synthetic, patches]) => {
      let bytes: Buffer = Buffer.from(synthetic.bytes)
      for (const patch of patches) bytes = patch(bytes, synthetic)
      outcome(bytes)
    }), 3000)

  await fuzz(t, 'the same answer wherever the bytes sit in their ArrayBuffer', fc.property(
    spec, fc.nat({ max: 64 }), fc.uint8Array({ minLength: 64, maxLength: 64 }), fc.option(fc.nat({ max: 300 }), { nil: undefined }),
    (s, shift, junk, cut) => {
      const plain = syntheticCubin(s).bytes.subarray(0, cut)
      const backing = new Uint8Array(shift + plain.length + 64)
      backing.set(junk.subarray(0, shift), 0)
      backing.set(plain, shift)
      backing.set(junk, shift + plain.length)
      const view = backing.subarray(shift, shift + plain.length)
      return JSON.stringify(outcome(view)) === JSON.stringify(outcome(new Uint8Array(plain)))
    }), 500)

  await fuzz(t, 'anything that is not bytes is a typed error', fc.property(fc.anything(), value => {
    try {
      readCubin(value as Uint8Array)
    } catch (e) {
      if (e instanceof CubinError || (e instanceof TypeError && (e as { code?: string }).code === 'ERR_ELF_INVALID_ARG_TYPE')) return
      throw e
    }
  }), 500)
})
