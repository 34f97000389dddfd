// A command's own input (compile's INPUT, bench's --compare baseline), read whole but bounded: a
// file can be a device or a pipe that never ends (/dev/zero, `yes |`).
import fs from 'node:fs'

/** What has been read so far, and whether the limit has been passed. */
class Bounded {
  readonly chunks: Buffer[] = []
  total = 0
  constructor(readonly limit: number) {}
  /** Keeps a copy of `bytes`; false once more than the limit has come. */
  add(bytes: Buffer): boolean {
    this.chunks.push(Buffer.from(bytes))
    this.total += bytes.length
    return this.total <= this.limit
  }
  whole(): Buffer {
    return Buffer.concat(this.chunks, this.total)
  }
}

/**
 * Reads `fd` with read(2) to its end into `into`: 'end', 'over' (past the limit), or 'again' when a
 * read found nothing yet on a non-blocking fd (EAGAIN).
 */
function readToEnd(fd: number, into: Bounded): 'end' | 'over' | 'again' {
  // One buffer read into, and each read's bytes copied out: a pipe gives 64 KiB a read, and a
  // fresh buffer a read would hold 1 MiB of address space for each.
  const scratch = Buffer.allocUnsafe(Math.min(1 << 20, into.limit + 1))
  for (;;) {
    let n: number
    try {
      n = fs.readSync(fd, scratch, 0, Math.min(scratch.length, into.limit + 1 - into.total), null)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return 'again'
      throw error
    }
    if (n === 0) return 'end'
    if (!into.add(scratch.subarray(0, n))) return 'over'
  }
}

/**
 * The whole of the file at `file`, or null when it holds more than `limit` bytes: a regular file
 * is judged by its size, anything else once more has come.
 */
export function readAtMost(file: string, limit: number): Buffer | null {
  const fd = fs.openSync(file, 'r')
  try {
    const stat = fs.fstatSync(fd)
    if (stat.isFile() && stat.size > limit) return null
    const read = new Bounded(limit)
    // Opened here, without O_NONBLOCK: a read waits, and never finds nothing yet.
    return readToEnd(fd, read) === 'end' ? read.whole() : null
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The whole of standard input, or null past `limit` bytes, as readAtMost reads a file. fd 0 is
 * read itself, with read(2): process.stdin would make a stream of it, which may set the pipe
 * non-blocking, for whoever else holds it too. Where it is non-blocking already (O_NONBLOCK
 * belongs to the open file, so a parent may have set it), a read finds nothing yet (EAGAIN)
 * until the writer writes: the rest is then read through process.stdin, which waits for it.
 */
export function readStdinAtMost(limit: number): Promise<Buffer | null> {
  return readOpenAtMost(0, limit, () => process.stdin)
}

/** readStdinAtMost's way with any open fd: `stream` gives a stream of `fd` that waits for input. */
export async function readOpenAtMost(fd: number, limit: number, stream: () => NodeJS.ReadableStream & { destroy(): void }): Promise<Buffer | null> {
  const stat = fs.fstatSync(fd)
  if (stat.isFile() && stat.size > limit) return null
  const read = new Bounded(limit)
  const ended = readToEnd(fd, read)
  if (ended !== 'again') return ended === 'end' ? read.whole() : null
  const rest = stream()
  for await (const chunk of rest) {
    if (!read.add(chunk as Buffer)) {
      rest.destroy()
      return null
    }
  }
  return read.whole()
}
