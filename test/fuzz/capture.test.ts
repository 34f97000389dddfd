// Captures of random sizes, cut at random maxBuffers, through every API, launcher and measure:
// sizes gather around where the capture buffer changes how it works (the pipe's growth and the
// backing ahead start at 1 MiB, the backing window is 256 KiB, the buffer doubles from 4 KiB), and
// every byte must come back in its place, cut exactly where maxBuffer says.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import type { ChildSpec } from '../../lib/index.js'
import { APIS, childPids, eventually, openFds, pattern251, tempDir } from '../helpers.js'
import { fuzz } from './budget.js'

const KiB = 1024
const MiB = 1024 * KiB
const MAX = 6 * MiB


const near = (points: number[]) => fc.tuple(fc.constantFrom(...points), fc.integer({ min: -4097, max: 4097 }))
  .map(([p, d]) => Math.min(MAX, Math.max(0, p + d)))
const size = fc.oneof(
  near([0, 4 * KiB, 64 * KiB, MiB, MiB + 128 * KiB, MiB + 256 * KiB, 2 * MiB, 4 * MiB, MAX]),
  fc.integer({ min: 0, max: MAX }),
)

t.test('a capture of any size holds exactly the child\'s bytes, cut exactly at maxBuffer', async t => {
  const dir = tempDir(t)
  const file = path.join(dir, 'pattern')
  fs.writeFileSync(file, pattern251(MAX))
  const fdsBefore = openFds()
  await fuzz(t, 'capture', fc.asyncProperty(
    size, fc.option(size, { nil: undefined }), fc.constantFrom(...APIS),
    fc.constantFrom('posix_spawn' as const, 'fork' as const), fc.boolean(),
    async (bytes, maxBuffer, [, run], launcher, measure) => {
      const spec: ChildSpec = { file: 'head', args: ['-c', String(bytes), file], stdin: 'ignore', stderr: 'ignore', launcher, measure }
      if (maxBuffer !== undefined) spec.maxBuffer = maxBuffer
      const r = await run(spec)
      const kept = Math.min(bytes, maxBuffer ?? Infinity)
      if (r.exitCode !== 0) throw new Error(`head exited ${r.exitCode} (${r.diagnostic})`)
      if (r.stdout.length !== kept) throw new Error(`${r.stdout.length} bytes kept, expected ${kept}`)
      if (r.stdoutTruncated !== (kept < bytes)) throw new Error(`stdoutTruncated ${r.stdoutTruncated} with ${kept} of ${bytes} kept`)
      const wrong = r.stdout.findIndex((b, i) => b !== i % 251)
      if (wrong >= 0) throw new Error(`byte ${wrong} of ${kept} is ${r.stdout[wrong]}, expected ${wrong % 251}`)
    }), 40)
  t.ok(await eventually(() => childPids().length === 0), 'no child left')
  t.same(openFds(), fdsBefore, 'no fd left open')
})
