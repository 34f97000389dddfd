// A command's input read whole but bounded (lib/cli/input.ts), from an fd left non-blocking:
// O_NONBLOCK belongs to the open file, so a parent may have set it on the pipe that is our
// standard input. A read then finds nothing yet (EAGAIN) until the writer writes; that was
// "cannot read standard input: resource temporarily unavailable (EAGAIN)", exit 2. Staged with a
// FIFO whose read end is opened O_NONBLOCK and a writer that writes only once the read is under way.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { readOpenAtMost } from '../../lib/cli/input.js'
import { spawnChildSync } from '../../lib/index.js'
import { tempDir } from '../helpers.js'

function nonBlockingFifo(t: Tap.Test): { reader: number; writer: number } {
  const fifo = path.join(tempDir(t), 'fifo')
  const made = spawnChildSync({ file: 'mkfifo', args: [fifo] })
  if (made.exitCode !== 0) throw new Error(`mkfifo: ${made.stderr}`)
  // The read end first, non-blocking (it does not wait for a writer); then the writer.
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const writer = fs.openSync(fifo, fs.constants.O_WRONLY)
  t.teardown(() => { for (const fd of [reader, writer]) try { fs.closeSync(fd) } catch {} })
  return { reader, writer }
}

// As process.stdin is for a pipe: a stream that waits for input. It owns the fd from then on.
const streamOf = (fd: number) => () => new net.Socket({ fd, readable: true, writable: false })

t.test('nothing there yet: the read waits for the writer, and gets every byte', async (t) => {
  const { reader, writer } = nonBlockingFifo(t)
  const read = readOpenAtMost(reader, 1 << 20, streamOf(reader))
  fs.writeSync(writer, 'first ')
  fs.writeSync(writer, 'second')
  fs.closeSync(writer)
  t.equal((await read)?.toString(), 'first second')
})

t.test('some there, then nothing yet: what was there, then the rest', async (t) => {
  const { reader, writer } = nonBlockingFifo(t)
  fs.writeSync(writer, 'already ')
  const read = readOpenAtMost(reader, 1 << 20, streamOf(reader))
  fs.writeSync(writer, 'later')
  fs.closeSync(writer)
  t.equal((await read)?.toString(), 'already later')
})

t.test('past the limit once it has waited: null, as for a file read whole', async (t) => {
  const { reader, writer } = nonBlockingFifo(t)
  const read = readOpenAtMost(reader, 10, streamOf(reader))
  fs.writeSync(writer, '0123456789abc')
  t.equal(await read, null)
  fs.closeSync(writer)
})

t.test('an fd that never finds nothing yet is read as before', async (t) => {
  const file = path.join(tempDir(t), 'file')
  fs.writeFileSync(file, 'a file')
  const fd = fs.openSync(file, 'r')
  t.teardown(() => fs.closeSync(fd))
  let streamed = false
  const read = await readOpenAtMost(fd, 1 << 20, () => { streamed = true; throw new Error('not wanted') })
  t.same([read?.toString(), streamed], ['a file', false])
  const small = fs.openSync(file, 'r')
  t.teardown(() => fs.closeSync(small))
  t.equal(await readOpenAtMost(small, 3, () => { throw new Error('not wanted') }), null, 'a regular file over the limit, by its size')
})
