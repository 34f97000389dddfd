// A large capture's memory: the buffer is backed by pages just ahead of the reads (one
// MADV_POPULATE_WRITE for many pages, not a fault inside read() for each), a small capture is left
// alone, and whatever the buffer's growth and backing did, the bytes handed back are exactly the
// child's, cut exactly at maxBuffer. The advice is read from a strace of a child Node process.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, eachPath, pattern251, tempDir } from '../helpers.js'

const MB = 1024 * 1024
const WINDOW = 256 * 1024 // the most native/waiter.cc backs ahead of its reads
const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'capture.mjs')

const strace = spawnChildSync({ file: 'strace', args: ['-V'], stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
const noStrace = strace.exitCode === 0 ? false : 'strace is not installed (apt-get install strace): the memory advice cannot be read'

/**
 * The MADV_POPULATE_WRITE calls a capture of `bytes` through `api` made, as [address, length,
 * result], the result as strace shows it ('0', or '-1 E... (...)'). With -f, a call that another
 * thread's system call interrupts in the trace is split over two lines, "madvise(... <unfinished
 * ...>" and later "<... madvise resumed>) = 0" on the same pid: read whole, or the count falls
 * short whenever the process's other threads are busy (ci16 counted 46 calls where 51-55 are made).
 */
function populateCalls(t: Tap.Test, api: string, bytes: number): Array<[number, number, string]> {
  const trace = path.join(tempDir(t), 'trace')
  const r = spawnChildSync({
    file: 'strace', args: ['-f', '-qq', '-e', 'trace=madvise', '-o', trace, process.execPath, FIXTURE, api, String(bytes)],
    stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 60000,
  })
  t.same([r.exitCode, JSON.parse(r.stdout.toString() || '{}')], [0, { exitCode: 0, length: bytes }], `the ${api} capture of ${bytes} bytes under strace`, { stderr: r.stderr.toString() })
  const calls: Array<[number, number, string]> = []
  const unfinished = new Map<string, [number, number, string]>()  // by pid
  for (const line of fs.readFileSync(trace, 'utf8').split('\n')) {
    const call = /^(?:(\d+) +)?madvise\((0x[0-9a-f]+), (\d+), (?:MADV_POPULATE_WRITE|0x17 \/\* MADV_\?\?\? \*\/)(?:\) += (.*)| <unfinished \.\.\.>)$/.exec(line)
    if (call) {
      const entry: [number, number, string] = [Number.parseInt(call[2]!, 16), Number(call[3]), call[4] ?? 'unfinished']
      calls.push(entry)
      if (call[4] === undefined) unfinished.set(call[1] ?? '', entry)
      continue
    }
    const resumed = /^(?:(\d+) +)?<\.\.\. madvise resumed>\) += (.*)$/.exec(line)
    const entry = resumed && unfinished.get(resumed[1] ?? '')
    if (entry) {
      entry[2] = resumed![2]!
      unfinished.delete(resumed![1] ?? '')
    }
  }
  return calls
}

for (const api of ['sync', 'async', 'start']) {
  t.test(`a large capture is backed just ahead of its reads; a small one is not (${api})`, { skip: noStrace }, async t => {
    const bytes = 8 * MB + 5
    const calls = populateCalls(t, api, bytes)
    // Only calls that succeeded count as backed; a refusal is listed in the diagnostic below.
    const total = calls.filter(([, , result]) => result === '0').reduce((sum, [, len]) => sum + len, 0)
    t.ok(calls.length > 0, `the buffer was backed with MADV_POPULATE_WRITE (${calls.length} calls)`)
    // Every read past the first MiB (and the pipe's last 64 KiB before it grew) lands in a backed
    // window; a call's range is whole pages, so each may leave a page either side to fault in.
    const refused = calls.filter(([, , result]) => result !== '0')
    t.ok(total >= bytes - MB - 64 * 1024 - 2 * 4096 * calls.length, `every read past the first MiB went into backed memory: ${total} bytes backed`,
      { calls: calls.length, refused: refused.map(([, len, result]) => `${len}: ${result}`) })
    t.ok(total <= bytes, `never the whole buffer (it grows to twice what it holds): ${total} bytes backed for ${bytes} read`)
    t.same(calls.filter(([, len]) => len > WINDOW), [], `each call backs at most ${WINDOW} bytes: a window kept in the cache, not the whole buffer`)
    t.same(populateCalls(t, api, MB - 4096), [], 'a capture under 1 MiB faults its pages in as it reads: no advice')
  })
}

// The child writes pattern251(n).
const writer = (n: number) => ({
  file: 'python3',
  args: ['-c', `import sys; sys.stdout.buffer.write((bytes(range(251)) * ${Math.ceil(n / 251)})[:${n}])`],
})

t.test('a large capture holds exactly the child\'s bytes, whole or cut at maxBuffer', t => eachPath(t, '', async (t, { run }) => {
  const n = 5 * MB + 7
  const whole = await run(writer(n))
  t.same([whole.exitCode, whole.stdout.length, whole.stdoutTruncated], [0, n, false])
  t.ok(whole.stdout.equals(pattern251(n)), 'every byte in its place, past the pipe\'s growth and the backing')
  const limit = 3 * MB + 123
  const cut = await run({ ...writer(n), maxBuffer: limit })
  t.same([cut.exitCode, cut.stdout.length, cut.stdoutTruncated], [0, limit, true])
  t.ok(cut.stdout.equals(pattern251(limit)), 'cut exactly at maxBuffer, the bytes before it intact')
}))
