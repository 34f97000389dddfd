// A command's own input (compile's INPUT, bench's --compare baseline), read whole but bounded: a
// file can be a device or a pipe that never ends (/dev/zero, `yes |`).
import fs from 'node:fs'

/**
 * The whole of `file` (a path, or fd 0, which is not closed), or null when it holds more than
 * `limit` bytes: a regular file is judged by its size, anything else once more has come.
 */
export function readAtMost(file: string | 0, limit: number): Buffer | null {
  const fd = file === 0 ? 0 : fs.openSync(file, 'r')
  try {
    const stat = fs.fstatSync(fd)
    if (stat.isFile() && stat.size > limit) return null
    // One buffer read into, and each read's bytes copied out: a pipe gives 64 KiB a read, and a
    // fresh buffer a read would hold 1 MiB of address space for each.
    const scratch = Buffer.allocUnsafe(Math.min(1 << 20, limit + 1))
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const n = fs.readSync(fd, scratch, 0, Math.min(scratch.length, limit + 1 - total), null)
      if (n === 0) return Buffer.concat(chunks, total)
      chunks.push(Buffer.from(scratch.subarray(0, n)))
      total += n
      if (total > limit) return null
    }
  } finally {
    if (fd !== 0) fs.closeSync(fd)
  }
}
