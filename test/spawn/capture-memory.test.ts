// A large capture's memory: the buffer is backed by pages just ahead of the reads (one
// MADV_POPULATE_WRITE for many pages, not a fault inside read() for each), a small capture is left
// alone, and whatever the buffer's growth and backing did, the bytes handed back are exactly the
// child's, cut exactly at maxBuffer. The advice is read from a strace of a child Node process.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, eachPath, paths, pattern251, tempDir } from '../helpers.js'
import { childPaths, nodeChildEnv, PACKAGE, runNodeScript } from '../reliability/helpers.js'

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

// A capture that cannot grow (the address-space limit, an overcommit refusal) had closed its pipe:
// the child died of SIGPIPE and the result claimed its output whole (truncated false). It now ends
// as at maxBuffer: the rest read and dropped, the child runs to its end, and the result says so.
// For each path, a node child lowers its own RLIMIT_AS (prlimit on itself) to what it uses plus
// 128 MiB and captures 256 MiB with maxBuffer Infinity: the capture stops growing with room still
// left for V8. Not startChild: its stream hands every chunk to JavaScript in a Buffer of its own,
// and with memory that short V8 itself gives out (a fatal OOM, as any Node process out of memory).
// Under check:asan, ASan's allocator aborts the process on an allocation it cannot make unless
// told to return null, as the C library does: what is tested here is that null.
const oomEnv = {
  ...nodeChildEnv(),
  ...(process.env.ASAN_OPTIONS === undefined ? {} : { ASAN_OPTIONS: `${process.env.ASAN_OPTIONS}:allocator_may_return_null=1` }),
}
t.test('a capture out of memory ends as at maxBuffer: truncated, and the child unharmed', async (t) => {
  for (const path of paths({ apis: ['sync', 'async'] })) {
    const r = runNodeScript<{ lowered: number; len: number; truncated: boolean; exitCode: number | null; signal: string | null }>(`
      ${childPaths({ apis: [path.api], launchers: [path.launcher], measure: [path.measure] })}
      const fs = require('node:fs')
      const { spawnChildSync } = require(${PACKAGE})
      const vm = () => Number(fs.readFileSync('/proc/self/status', 'utf8').match(/VmSize:\\s+(\\d+)/)[1]) * 1024
      ;(async () => {
        spawnChildSync({ file: 'true' })  // warm up
        const lowered = spawnChildSync({ file: 'prlimit', args: ['--pid=' + process.pid, '--as=' + (vm() + 128 * 1024 * 1024) + ':'] }).exitCode
        const r = await runPath(PATHS[0], { file: 'head', args: ['-c', String(256 << 20), '/dev/zero'], maxBuffer: Infinity })
        console.log(JSON.stringify({ lowered, len: r.stdout.length, truncated: r.stdoutTruncated, exitCode: r.exitCode, signal: r.signal }))
      })()
    `, { env: oomEnv })
    t.equal(r.lowered, 0, `${path.label}: the limit lowered`)
    t.same([r.exitCode, r.signal, r.truncated], [0, null, true], `${path.label}: head wrote all it had, and the result is marked truncated`)
    t.ok(r.len > 0 && r.len < 256 << 20, `${path.label}: what fitted (${r.len} bytes) is kept`)
  }
})
