// readFatbin. The layout it documents, measured on the real fatbinary (CUDA 13.0): the entries in
// the order given, ELF payloads byte for byte the cubins, the SM and the a/f suffix, PTX compressed
// by default (zstd) and not with --compress=false, the PTX stripped of comments and indentation.
// Then malformed inputs: each a CubinError with its code, and every truncation of a real one.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { CubinError, FATBIN_FLAGS, readFatbin } from '../../lib/elf/index.js'
import { examplePtx } from '../../lib/ptx/index.js'
import { assemble, skipWithoutPtxas } from '../ptx/ptxas.js'
import { needs, run } from '../ptx/run.js'
import { fatbinPtxText, payloadText, scratchDir } from './host.js'

const skip = skipWithoutPtxas.skip ?? needs('fatbinary')

t.test('the real fatbinary: entries, SM, suffix, payloads', { skip }, async (t) => {
  const dir = scratchDir(t)
  const ptx = examplePtx('saxpy', 'sm_90')
  const targets = ['sm_90', 'sm_100a', 'sm_100f', 'sm_120'] as const
  const cubins = targets.map((gpu) => {
    const cubin = assemble(ptx, gpu).cubin!
    writeFileSync(join(dir, `${gpu}.cubin`), cubin)
    return cubin
  })
  writeFileSync(join(dir, 'k.ptx'), ptx)
  const images = [...targets.map((gpu) => `--image3=kind=elf,sm=${gpu.slice(3)},file=${gpu}.cubin`), '--image3=kind=ptx,sm=90,file=k.ptx']
  for (const compress of [true, false]) {
    const label = compress ? 'default (compressed)' : '--compress=false'
    const made = run('fatbinary', ['--create=out.fatbin', '-64', ...(compress ? [] : ['--compress=false']), ...images], { cwd: dir })
    t.equal(made.exitCode, 0, `${label}: fatbinary exits 0 (${made.stderr.toString()})`)
    const entries = readFatbin(readFileSync(join(dir, 'out.fatbin')))
    t.same(entries.map((e) => [e.kind, e.arch]), [...targets.map((gpu) => ['elf', gpu]), ['ptx', 'sm_90']], `${label}: the entries, in order, with their suffix`)
    for (const [i, gpu] of targets.entries()) {
      t.notOk(entries[i].compressed, `${label}: ${gpu}: ELF is not compressed`)
      t.ok(Buffer.from(entries[i].payload).equals(cubins[i]), `${label}: ${gpu}: the payload is the cubin, byte for byte`)
    }
    // A payload is a view of the caller's bytes, of their kind: a Buffer's is a Buffer (its
    // toString is the text), a plain Uint8Array's a Uint8Array.
    t.ok(entries.every((e) => Buffer.isBuffer(e.payload)), `${label}: from a Buffer, every payload is a Buffer`)
    const plain = readFatbin(new Uint8Array(readFileSync(join(dir, 'out.fatbin'))))
    t.ok(plain.every((e) => !Buffer.isBuffer(e.payload) && e.payload instanceof Uint8Array), `${label}: from a Uint8Array, Uint8Arrays`)
    t.same(plain.map((e) => [...e.payload]), entries.map((e) => [...e.payload]), `${label}: the same bytes either way`)
    // A subclass's own subarray is never asked: its constructor may ignore the offset (this one does).
    class Bytes extends Uint8Array {
      constructor(n: number) {
        super(n)
      }
    }
    const file = readFileSync(join(dir, 'out.fatbin'))
    const sub = new Bytes(file.length)
    sub.set(file)
    t.same(readFatbin(sub).map((e) => [...e.payload]), entries.map((e) => [...e.payload]), `${label}: a Uint8Array subclass: the same payloads`)
    const ptxEntry = entries[4]
    t.equal(ptxEntry.ptxVersion, '7.8', `${label}: the PTX entry's ISA version`)
    t.equal(ptxEntry.compressed, compress, `${label}: PTX compressed: ${compress}`)
    if (compress) {
      t.ok((ptxEntry.flags & FATBIN_FLAGS.compressedZstd) !== 0, 'the zstd flag')
      t.same([...ptxEntry.payload.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd], 'a zstd frame')
    } else {
      t.equal(payloadText(ptxEntry.payload), fatbinPtxText(ptx), 'the PTX, without comments and indentation')
      t.equal(ptxEntry.payload.length % 8, 0, 'padded to 8 bytes')
    }
  }
})

t.test('malformed inputs are CubinErrors with their code; every truncation too', { skip }, async (t) => {
  const dir = scratchDir(t)
  writeFileSync(join(dir, 'a.cubin'), assemble(examplePtx('vadd', 'sm_100'), 'sm_100').cubin!)
  t.equal(run('fatbinary', ['--create=a.fatbin', '-64', '--image3=kind=elf,sm=100,file=a.cubin'], { cwd: dir }).exitCode, 0)
  const good = readFileSync(join(dir, 'a.fatbin'))
  const mutate = (at: number, bytes: number[]): Buffer => {
    const copy = Buffer.from(good)
    copy.set(bytes, at)
    return copy
  }
  const rows: Array<[string, Uint8Array, string]> = [
    ['empty', new Uint8Array(0), 'ERR_FATBIN_NOT_FATBIN'],
    ['an ELF', good.subarray(good.indexOf(0x7f)), 'ERR_FATBIN_NOT_FATBIN'],
    ['version 2', mutate(4, [2, 0]), 'ERR_FATBIN_NOT_FATBIN'],
    ['header size 8', mutate(6, [8, 0]), 'ERR_FATBIN_MALFORMED'],
    ['entry kind 3', mutate(16, [3, 0]), 'ERR_FATBIN_MALFORMED'],
    ['entry header size 16', mutate(20, [16, 0, 0, 0]), 'ERR_FATBIN_MALFORMED'],
    ['payload past the end', mutate(24, [0xff, 0xff, 0xff, 0]), 'ERR_CUBIN_TRUNCATED'],
    // The flags' high half at 2^21: 2^53 and more, which a number cannot hold to the last bit (the
    // 64-bit flag, bit 0, was rounded away and the flags read as something else).
    ['flags past 2^53 - 1', mutate(60, [0, 0, 0x20, 0]), 'ERR_FATBIN_MALFORMED'],
    ['flags 2^64 - 1', mutate(56, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 'ERR_FATBIN_MALFORMED'],
  ]
  for (const [what, bytes, code] of rows) t.throws(() => readFatbin(bytes), { name: 'CubinError', code }, what)
  t.throws(() => readFatbin(mutate(56, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])), { message: /^entry flags 0xffffffffffffffff set bits past 2\^53 - 1/ }, 'the message gives the flags')
  // The largest flags a number holds: read exactly, and their low bits decide the suffix.
  const highest = readFatbin(mutate(56, [0x01, 0x00, 0x10, 0x00, 0xff, 0xff, 0x1f, 0x00]))[0]
  t.same([highest.flags, highest.arch], [0x1f_ffff_0010_0001, 'sm_100a'], 'flags 2^53 - 2^32 + 0x100001: exact, architecture-specific')
  t.throws(() => readFatbin('fatbin' as unknown as Uint8Array), { code: 'ERR_ELF_INVALID_ARG_TYPE' })
  for (let cut = 0; cut < good.length; cut += 7) {
    try {
      readFatbin(good.subarray(0, cut))
      t.fail(`cut at ${cut}: read`)
    } catch (error) {
      if (!(error instanceof CubinError)) t.fail(`cut at ${cut}: ${String(error)}`)
    }
  }
  t.pass('every truncation is a CubinError')
})

// Both pass instanceof Uint8Array, and readFatbin threw V8's uncoded "Method get
// TypedArray.prototype.byteLength called on incompatible receiver" for them.
t.test('a look-alike of a Uint8Array is refused by its brand, naming bytes', async (t) => {
  for (const [name, bytes] of [['a Proxy of a Uint8Array', new Proxy(new Uint8Array(64), {})], ['Object.create(Uint8Array.prototype)', Object.create(Uint8Array.prototype)]]) {
    t.throws(() => readFatbin(bytes), { name: 'TypeError', code: 'ERR_ELF_INVALID_ARG_TYPE', field: 'bytes', message: /^bytes: expected a Uint8Array or Buffer, got an object$/ }, name)
  }
})

t.test('a view of a detached buffer reads as an empty input', async (t) => {
  const buffer = new ArrayBuffer(64)
  const view = new Uint8Array(buffer)
  structuredClone(buffer, { transfer: [buffer] })
  t.throws(() => readFatbin(view), { name: 'CubinError', code: 'ERR_FATBIN_NOT_FATBIN' }, 'was a TypeError without a code, from DataView')
})
