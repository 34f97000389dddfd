// Bounds-checked little-endian reads over untrusted bytes. Every read of the cubin reader goes
// through here, so a malformed or truncated input becomes a CubinError naming what was being read,
// never a RangeError from Buffer or a silently wrong value from an out-of-range typed-array read.
import { CubinError, type CubinErrorCode } from './errors.js'

export class ByteReader {
  private readonly view: DataView

  /** `base` is where `bytes` starts in the whole input, so error offsets are absolute. */
  constructor(readonly bytes: Uint8Array, readonly base = 0) {
    // A view of a detached buffer has no bytes, and a DataView cannot be made over its buffer:
    // an empty one reads as any empty input (every read a CubinError).
    this.view = bytes.byteLength === 0 ? new DataView(new ArrayBuffer(0)) : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  get length(): number {
    return this.bytes.byteLength
  }

  /** Throws unless [offset, offset + size) lies inside the input. */
  check(offset: number, size: number, what: string): void {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(size) || offset < 0 || size < 0 || offset + size > this.length) {
      throw new CubinError('ERR_CUBIN_TRUNCATED',
        `${what} needs bytes ${offset}..${offset + size} of ${this.base === 0 ? 'the input' : 'its section'}, which has ${this.length}`,
        this.base + offset)
    }
  }

  u8(offset: number, what: string): number {
    this.check(offset, 1, what)
    return this.view.getUint8(offset)
  }

  u16(offset: number, what: string): number {
    this.check(offset, 2, what)
    return this.view.getUint16(offset, true)
  }

  u32(offset: number, what: string): number {
    this.check(offset, 4, what)
    return this.view.getUint32(offset, true)
  }

  /**
   * A u64 that is an offset, size or count: it must fit a JavaScript safe integer, which every
   * value that can index a Uint8Array does; larger ones cannot be in bounds anyway.
   */
  u64(offset: number, what: string, code: CubinErrorCode = 'ERR_CUBIN_MALFORMED'): number {
    this.check(offset, 8, what)
    const value = this.view.getBigUint64(offset, true)
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new CubinError(code, `${what} is ${value}, beyond any input size`, this.base + offset)
    return Number(value)
  }

  /** A view of [offset, offset + size), bounds-checked. */
  slice(offset: number, size: number, what: string): ByteReader {
    this.check(offset, size, what)
    return new ByteReader(this.bytes.subarray(offset, offset + size), this.base + offset)
  }
}
