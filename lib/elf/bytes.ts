// Bounds-checked little-endian reads over untrusted bytes. Every read of the cubin reader goes
// through here, so a malformed or truncated input becomes a CubinError naming what was being read,
// never a RangeError from Buffer or a silently wrong value from an out-of-range typed-array read.
import { CubinError, type CubinErrorCode } from './errors.js'

/** The largest high half of a u64 that is still a safe integer: 2^53 - 1 = 0x1fffff_ffffffff. */
export const MAX_SAFE_HIGH = 0x1f_ffff

export class ByteReader {
  /** How many bytes this reader covers. */
  readonly length: number
  /** One view of the whole input, shared by every slice of it: a slice makes no view of its own. */
  private readonly view: DataView
  /** The input as the caller gave it (only its kind is looked at), and where this reader's bytes start in the view. */
  private readonly input: Uint8Array
  private readonly start: number

  /**
   * `base` is where `bytes` starts in the whole input, so error offsets are absolute. A slice
   * passes its parent's input and view, with its own `start` and `length`.
   */
  constructor(bytes: Uint8Array, readonly base = 0, view?: DataView, start = 0, length = bytes.byteLength) {
    this.input = bytes
    this.length = length
    this.start = start
    // A view of a detached buffer has no bytes, and a DataView cannot be made over its buffer:
    // an empty one reads as any empty input (every read a CubinError).
    this.view = view ?? (bytes.byteLength === 0 ? new DataView(new ArrayBuffer(0)) : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  }

  /**
   * The reader's bytes, a plain Uint8Array over the input's memory. Never made by the input's own
   * subarray: a subclass's constructor decides what that returns (one that ignores its offset and
   * length gave the string tables the whole input, and every name was the file).
   */
  get bytes(): Uint8Array {
    return new Uint8Array(this.view.buffer, this.view.byteOffset + this.start, this.length)
  }

  /** The reader's bytes for the caller to keep (a fat binary's payload): a Buffer when the input was one. */
  bytesLikeInput(): Uint8Array {
    return Buffer.isBuffer(this.input) ? Buffer.from(this.view.buffer, this.view.byteOffset + this.start, this.length) : this.bytes
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
    return this.view.getUint8(this.start + offset)
  }

  u16(offset: number, what: string): number {
    this.check(offset, 2, what)
    return this.view.getUint16(this.start + offset, true)
  }

  u32(offset: number, what: string): number {
    this.check(offset, 4, what)
    return this.view.getUint32(this.start + offset, true)
  }

  /**
   * A u64 that is an offset, size or count: it must fit a JavaScript safe integer, which every
   * value that can index a Uint8Array does; larger ones cannot be in bounds anyway.
   */
  u64(offset: number, what: string, code: CubinErrorCode = 'ERR_CUBIN_MALFORMED'): number {
    this.check(offset, 8, what)
    // Two u32 halves: a BigInt read allocates, and a cubin's headers are full of u64s. A high half
    // past 2^21 - 1 makes the value 2^53 or more; the BigInt is made only to say what it was.
    const high = this.view.getUint32(this.start + offset + 4, true)
    if (high > MAX_SAFE_HIGH) {
      throw new CubinError(code, `${what} is ${this.view.getBigUint64(this.start + offset, true)}, beyond any input size`, this.base + offset)
    }
    return high * 0x1_0000_0000 + this.view.getUint32(this.start + offset, true)
  }

  /** A view of [offset, offset + size), bounds-checked. */
  slice(offset: number, size: number, what: string): ByteReader {
    this.check(offset, size, what)
    return new ByteReader(this.input, this.base + offset, this.view, this.start + offset, size)
  }
}
