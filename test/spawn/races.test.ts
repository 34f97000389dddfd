// Exact results when events race: what happened first decides every field. A child that exited
// before its deadline, abort or kill() is reported as exited; a deadline is independent of kill();
// delays that cannot be honoured are refused; streams have backpressure; the pipes are read on
// after the exit for waitDelay; and measure: true is the same child, signal by signal.
import fs from 'node:fs'
import path from 'node:path'
import { getDefaultHighWaterMark, setDefaultHighWaterMark } from 'node:stream'
import t from 'tap'
import { spawnChild, spawnChildSync, startChild, type ChildResult, type ChildSpec } from '../../lib/index.js'
import { APIS, LAUNCHERS, MEASURE, REPO_ROOT, eachPath, eventually, processState, tempDir } from '../helpers.js'

/**
 * Busy-waits on this thread, so the event loop cannot run (and nothing can reap the child), until
 * the child has exited, and at least `ms` have passed. An exited child is a zombie nobody reaped;
 * a measured target is reaped by its helper at once, so it is gone. Bounded (30 s), never a sleep.
 */
function blockUntilExited(pid: number, measure: boolean, ms = 0): boolean {
  const start = Date.now()
  while (Date.now() - start < 30000) {
    const state = processState(pid)
    if ((measure ? state === 'gone' : state === 'zombie') && Date.now() - start >= ms) return true
  }
  return false
}


/** Every launcher, measured and not: the races below are the same on each. */
const WAYS = LAUNCHERS.flatMap(launcher => MEASURE.map(measure => ({ launcher, measure, label: `${launcher}${measure ? ' measured' : ''}` })))

t.test('an exit before a deadline the loop was too busy to act on is an exit, and its duration is its lifetime', async t => {
  for (const { launcher, measure, label } of WAYS) {
    const start = performance.now()
    const child = startChild({ file: 'true', timeout: 50, measure, launcher })
    t.ok(blockUntilExited(child.pid, measure, 100), 'the child exited and the deadline passed, the loop blocked all along')
    // Hold the loop a good while longer: the result must not count it.
    const seen = performance.now()
    while (performance.now() - seen < 600);
    const blocked = performance.now() - start
    const r = await child.result
    t.same({ exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, diagnostic: r.diagnostic },
      { exitCode: 0, signal: null, timedOut: false, diagnostic: '' }, `${label}: exited, not timed out`)
    t.ok(r.durationMs < blocked - 300, `${label}: durationMs is when it exited (${r.durationMs.toFixed(1)} ms), not when the loop was free (${blocked.toFixed(1)} ms)`)
  }
})

t.test("the exit clock stamps unmeasured children's exits; a measured child's lifetime is its helper's", async t => {
  // The clock is one named thread of this process (native/exit-clock.h); an exit it stamps wakes
  // it, which shows as a voluntary context switch of that thread, counted when it sleeps again.
  // On a busy machine it may not run between two exits and stamps both in one wake, so the
  // unmeasured exits are only known to wake it at least once; the measured ones not at all.
  const tid = fs.readdirSync('/proc/self/task').find(id => fs.readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim() === 'tileharness-clk')
  t.ok(tid, 'the exit clock thread is there, by its name')
  if (tid === undefined) return
  const wakes = () => Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/self/task/${tid}/status`, 'utf8'))![1])
  // Asleep (S): every wake so far has been counted.
  const asleep = () => eventually(() => {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'S'
  })
  for (const launcher of LAUNCHERS) {
    t.ok(await asleep(), 'the clock is asleep')
    let before = wakes()
    for (let i = 0; i < 20; i++) await spawnChild({ file: 'true', launcher })
    t.ok(await asleep(), 'the clock is asleep')
    t.ok(wakes() - before >= 1, `${launcher}: 20 unmeasured exits woke the clock (${wakes() - before} times)`)
    before = wakes()
    for (let i = 0; i < 20; i++) t.equal((await spawnChild({ file: 'true', launcher, measure: true })).rusageSource, 'helper')
    t.ok(await asleep(), 'the clock is asleep')
    t.equal(wakes() - before, 0, `${launcher}: 20 measured exits did not wake it`)
  }
})

t.test('kill() and abort after the child exited kill nothing', async t => {
  for (const { launcher, measure, label } of WAYS) {
    const child = startChild({ file: 'sh', args: ['-c', 'exit 3'], measure, launcher })
    const pid = child.pid
    t.ok(pid > 0)
    t.ok(blockUntilExited(pid, measure), 'the child has exited, and the loop has not seen it')
    t.equal(child.kill(), false, `${label}: kill() on an exited child is false`)
    const r = await child.result
    t.same({ exitCode: r.exitCode, aborted: r.aborted, signal: r.signal }, { exitCode: 3, aborted: false, signal: null })
    t.equal(child.kill(), false, 'and after the result too')

    const controller = new AbortController()
    const aborted = startChild({ file: 'true', signal: controller.signal, measure, launcher })
    t.ok(blockUntilExited(aborted.pid, measure))
    controller.abort()
    const a = await aborted.result
    t.same({ exitCode: a.exitCode, aborted: a.aborted, diagnostic: a.diagnostic }, { exitCode: 0, aborted: false, diagnostic: '' }, `${label}: an abort after the exit is not an abort`)
  }
})

t.test("kill() and abort of a measured child whose helper reported while the loop was busy, its pid never asked: the exit is seen, nothing killed", async t => {
  // child.pid would take the helper's report (AwaitPid); here only kill() or the abort can. The
  // target writes its pid to a file, so the test can see it gone (reaped by its helper) while
  // the loop stays blocked; the report has been waiting in its pipe all along.
  const dir = tempDir(t)
  for (const launcher of LAUNCHERS) {
    for (const how of ['kill', 'abort'] as const) {
      const file = path.join(dir, `${launcher}-${how}`)
      const controller = new AbortController()
      const child = startChild({ file: 'sh', args: ['-c', 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exit 3', file], measure: true, launcher, signal: controller.signal })
      let target = 0
      const start = Date.now()
      while (Date.now() - start < 30000) {
        if (target === 0 && fs.existsSync(file)) target = Number(fs.readFileSync(file, 'utf8'))
        if (target > 0 && processState(target) === 'gone') break
      }
      t.ok(target > 0 && processState(target) === 'gone', `${launcher}: the target ran and is gone, the loop blocked all along`)
      let killed: boolean | undefined
      if (how === 'kill') killed = child.kill('SIGKILL')
      else controller.abort()
      const r = await child.result
      if (how === 'kill') t.equal(killed, false, `${launcher}: kill() of an exited target is false`)
      t.same({ exitCode: r.exitCode, signal: r.signal, aborted: r.aborted, diagnostic: r.diagnostic, pid: r.pid },
        { exitCode: 3, signal: null, aborted: false, diagnostic: '', pid: target }, `${launcher} ${how}: an exit, not a kill or an abort`)
    }
  }
})

t.test("a deadline is independent of kill()'s escalation", async t => {
  for (const { launcher, measure, label } of WAYS) {
    // kill('SIGTERM') once the trap is set; the deadline must still act (TERM ignored, then its
    // own SIGKILL): timedOut, although kill()'s SIGKILL, forceKillAfterDelay after kill(), could
    // only come after the deadline. A deadline that found the shell before its trap (a busy
    // machine) ends it by SIGTERM with no 'ready': then again with twice the deadline.
    for (let deadline = 300; ; deadline *= 2) {
      const child = startChild({
        file: 'sh', args: ['-c', "trap '' TERM; echo ready; sleep 10"], measure, launcher,
        timeout: deadline, killSignal: 'SIGTERM', forceKillAfterDelay: deadline + 100,
      })
      const ready = await Promise.race([
        new Promise<boolean>(resolve => child.stdout.once('data', () => resolve(true))),
        child.result.then(() => false),
      ])
      if (!ready && deadline < 20000) continue
      t.ok(ready, `${label}: the shell set its trap before the deadline`)
      t.equal(child.kill('SIGTERM'), true)
      const r = await child.result
      t.same({ timedOut: r.timedOut, signal: r.signal }, { timedOut: true, signal: 'SIGKILL' }, `${label}: the deadline acted`)
      break
    }
  }
})

t.test('delays that cannot be honoured are refused, by the API and the CLI', async t => {
  for (const [api, run] of APIS) {
    await t.rejects(run({ file: 'true', timeout: 1e20 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' }, `${api}: timeout 1e20`)
  }
  const cli = spawnChildSync({ file: process.execPath, args: [path.join(REPO_ROOT, 'dist/cli/main.js'), 'run', '--timeout', '99999999999999999999', '--', 'sleep', '0.2'] })
  t.equal(cli.exitCode, 125, 'run --timeout 99999999999999999999: exit 125, the run never starts')
  t.match(cli.stderr.toString(), /^tileharness run: .*timeout/m)
})

t.test('startChild streams have backpressure: an unread stream stops the pipe, nothing is lost', async t => {
  const size = 64 * 1024 * 1024
  const child = startChild({ file: 'head', args: ['-c', String(size), '/dev/zero'], maxBuffer: 1024 })
  // Nobody reads: the harness stops reading, the pipe fills, and head blocks writing to it.
  t.ok(await eventually(() => {
    try {
      return fs.readFileSync(`/proc/${child.pid}/wchan`, 'utf8').includes('pipe')
    } catch { return false }
  }), 'the child is blocked on the full pipe')
  t.ok(child.stdout.readableLength < 1024 * 1024, `buffered while unread: ${child.stdout.readableLength} bytes, not the output`)
  let total = 0
  const ended = new Promise(resolve => child.stdout.once('end', resolve))
  child.stdout.on('data', (chunk: Buffer) => { total += chunk.length })
  const r = await child.result
  await ended
  t.equal(total, size, 'every byte reached the stream once it was read')
  t.same({ exitCode: r.exitCode, kept: r.stdout.length, truncated: r.stdoutTruncated }, { exitCode: 0, kept: 1024, truncated: true }, 'maxBuffer bounds only the result')
})

// The other order: the child writes less than the pipe and the stream's buffer hold, exits, and
// the caller reads the stream only after the result. The rest of the output sat in the pipe behind
// the paused stream; at waitDelay the pipe was closed with it: 16 KiB of 70 KB in the result and
// the stream, and waitDelayExpired blaming a grandchild there was none of.
t.test('startChild read only after the result: the whole output, in the result and the streams', async t => {
  for (const launcher of LAUNCHERS) for (const measure of MEASURE) {
    const label = `${launcher}${measure ? ' measured' : ''}`
    const child = startChild({ file: 'sh', args: ['-c', 'head -c 70000 /dev/zero; head -c 60000 /dev/zero >&2'], launcher, measure })
    const r = await child.result
    let out = 0, err = 0
    for await (const chunk of child.stdout) out += (chunk as Buffer).length
    for await (const chunk of child.stderr) err += (chunk as Buffer).length
    t.same({ exitCode: r.exitCode, out: r.stdout.length, err: r.stderr.length, cut: r.waitDelayExpired }, { exitCode: 0, out: 70000, err: 60000, cut: false }, `${label}: the result has it all, and no wait was cut`)
    t.same([out, err], [70000, 60000], `${label}: so do the streams, read afterwards`)
  }
})

// The exit handled before a stream's first read, with the reader full part way through what the
// pipe held (a high-water mark under it: Node 20's default 16 KiB): the stream paused, and the
// rest sat in the pipe until waitDelay cut it. 16,384 of 30,000 bytes in 19 of 20 results, with
// waitDelayExpired blaming a grandchild there was none of.
t.test("a reader full part way through what the pipe holds at the exit: the whole output", async t => {
  const before = getDefaultHighWaterMark(false)
  setDefaultHighWaterMark(false, 16384)
  try {
    const results = await Promise.all(Array.from({ length: 20 }, () => startChild({ file: 'head', args: ['-c', '30000', '/dev/zero'] }).result))
    t.same(results.map(r => [r.stdout.length, r.waitDelayExpired]), Array(20).fill([30000, false]), 'each result has its 30,000 bytes, and no wait was cut')
  } finally {
    setDefaultHighWaterMark(false, before)
  }
})

// A reader slower than its child writes: reading until the pipe was empty never ended while the
// child kept up (`yes`), and the loop ran no timer, exit or other I/O again. 32 chunks a turn.
t.test('a child that writes faster than its reader reads does not hold the event loop', async t => {
  const child = startChild({ file: 'yes', args: ['0123456789abcdef'], maxBuffer: 1 << 20 })
  let chunks = 0
  child.stdout.on('data', () => {
    chunks++
    const end = performance.now() + 1
    while (performance.now() < end) { /* a slow reader, on purpose */ }
  })
  // Comes only if the loop gets a turn.
  await new Promise((resolve) => setTimeout(resolve, 100))
  child.kill('SIGKILL')
  const r = await child.result
  t.equal(r.signal, 'SIGKILL', 'the timer fired, and the child was killed from it')
  t.ok(chunks > 0, `${chunks} chunks read meanwhile`)
})

// But a pipe a grandchild still holds after the exit is not read faster than its reader reads it:
// the unread stream stays paused and waitDelay cuts the wait, memory bounded. (Resuming every
// paused stream at the exit took a `yes` grandchild's output into memory at some 800 MiB/s until
// waitDelay: 855 MB for the default second.)
t.test('an unread stream whose pipe a grandchild holds after the exit: still paused, bounded, cut at waitDelay', async t => {
  const child = startChild({ file: 'sh', args: ['-c', 'yes & echo $! >&2; exit 0'], waitDelay: 300 })
  let grandchild = 0
  child.stderr.on('data', (chunk: Buffer) => { grandchild = Number(chunk.toString().trim()) })
  const r = await child.result
  t.teardown(() => { try { process.kill(grandchild, 'SIGKILL') } catch { /* gone */ } })
  t.same({ exitCode: r.exitCode, cut: r.waitDelayExpired }, { exitCode: 0, cut: true }, 'exit 0, and the wait for the pipe was cut')
  t.ok(child.stdout.readableLength <= 4 * 1024 * 1024, `the stream kept what its reader's buffer takes, not the grandchild's output (${child.stdout.readableLength} bytes)`)
  t.ok(r.stdout.length <= 4 * 1024 * 1024, `so did the result (${r.stdout.length} bytes)`)
})

t.test('a stream put in flowing mode with no listener drains the pipe (resume())', async t => {
  const child = startChild({ file: 'head', args: ['-c', String(16 * 1024 * 1024), '/dev/zero'] })
  child.stdout.resume()
  const r = await child.result
  t.same({ exitCode: r.exitCode, bytes: r.stdout.length }, { exitCode: 0, bytes: 16 * 1024 * 1024 }, 'the child ran to the end: no stall')
})

t.test('after the exit the pipes are read until EOF, for at most waitDelay', t => eachPath(t, '', async (t, { run }) => {
  const late = await run({ file: 'sh', args: ['-c', '(sleep 0.2; echo late) & echo early'] })
  t.same({ out: late.stdout.toString(), cut: late.waitDelayExpired }, { out: 'early\nlate\n', cut: false }, "a grandchild's output after the exit is kept")
  const held = await run({ file: 'sh', args: ['-c', 'sleep 30 & echo $!'], waitDelay: 100 })
  t.equal(held.waitDelayExpired, true, 'a pipe held past waitDelay is flagged')
  process.kill(Number(held.stdout.toString().trim()), 'SIGKILL')
}))

t.test('measure: true is the same child', async t => {
  for (const [api, run] of APIS) {
    // rlimits apply to the target, not the helper (which needs fds of its own to start it).
    const limited = await run({ file: 'sh', args: ['-c', 'ulimit -n'], rlimits: { nofile: 5 }, measure: true })
    t.same({ exitCode: limited.exitCode, out: limited.stdout.toString(), spawnError: limited.spawnError }, { exitCode: 0, out: '5\n', spawnError: null }, `${api}: rlimits nofile 5`)
    // Exec errors: the same errno, stage and pid rule as unmeasured.
    for (const launcher of LAUNCHERS) for (const file of ['x'.repeat(5000), '/nonexistent/program', '/etc/passwd']) {
      const spec: ChildSpec = { file, launcher }
      const plain = await run(spec)
      const measured = await run({ ...spec, measure: true })
      const pick = (r: ChildResult) => ({ exitCode: r.exitCode, spawnError: r.spawnError, diagnostic: r.diagnostic, pid: r.pid === 0 ? 0 : 'a pid' })
      t.same(pick(measured), pick(plain), `${api} ${launcher}: ${file.slice(0, 20)}: as unmeasured`)
    }
  }
  // SIGSTOP and SIGCONT reach the target, not the helper.
  const child = startChild({ file: 'sh', args: ['-c', 'echo ready; while :; do sleep 0.05; done'], measure: true })
  await new Promise(resolve => child.stdout.once('data', resolve))
  const state = () => fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]![0]
  t.equal(child.kill('SIGSTOP'), true)
  t.ok(await eventually(() => state() === 'T'), 'the target itself is stopped')
  t.equal(child.kill('SIGCONT'), true)
  t.ok(await eventually(() => state() !== 'T'), 'and continued')
  child.kill('SIGKILL')
  const r = await child.result
  t.same({ signal: r.signal, rusageSource: r.rusageSource }, { signal: 'SIGKILL', rusageSource: 'helper' })
  t.ok(r.rusage.maxRSS < 20 * 1024, `a SIGKILLed target's max RSS is its own (${r.rusage.maxRSS} KiB)`)
})

t.test('chaos: 500 children, random deadlines, aborts and kills racing their exits, never contradict', async t => {
  let seed = 12345
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const contradictions: string[] = []
  const runOne = async (i: number) => {
    const sleep = (random() * 0.03).toFixed(3)
    const spec: ChildSpec = { file: 'sh', args: ['-c', `sleep ${sleep}`], measure: random() < 0.3, launcher: random() < 0.5 ? 'fork' : 'posix_spawn' }
    const mode = Math.floor(random() * 3)
    const at = random() * 30
    let killed: boolean | null = null
    let r: ChildResult
    if (mode === 0) {
      r = await spawnChild({ ...spec, timeout: Math.max(1, at) })
    } else if (mode === 1) {
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), at)
      r = await spawnChild({ ...spec, signal: controller.signal })
      clearTimeout(timer)
    } else {
      const child = startChild(spec)
      const timer = setTimeout(() => { killed = child.kill() }, at)
      r = await child.result
      clearTimeout(timer)
    }
    const describe = `#${i} (${mode === 0 ? 'timeout' : mode === 1 ? 'abort' : 'kill'} at ${at.toFixed(1)} ms, sleep ${sleep}${spec.measure ? ', measured' : ''}): ${JSON.stringify({ exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, aborted: r.aborted, killed })}`
    const exited = r.exitCode === 0 && r.signal === null
    const bySigkill = r.exitCode === null && r.signal === 'SIGKILL'
    if (!exited && !bySigkill) contradictions.push(`neither an exit nor SIGKILL ${describe}`)
    if (exited && (r.timedOut || r.aborted)) contradictions.push(`exited, yet timed out or aborted ${describe}`)
    if (bySigkill && !(r.timedOut || r.aborted || killed === true)) contradictions.push(`SIGKILLed by nobody ${describe}`)
    if (r.timedOut && r.aborted) contradictions.push(`both timed out and aborted ${describe}`)
    if (r.timedOut && r.diagnostic !== 'Child timed out') contradictions.push(`diagnostic ${describe}`)
    // durationMs is the child's lifetime: no shorter than its sleep, nor than a deadline that acted.
    if (exited && r.durationMs < Number(sleep) * 1000) contradictions.push(`exited after ${r.durationMs} ms, before its sleep ended ${describe}`)
    if (r.timedOut && r.durationMs < Math.max(1, at)) contradictions.push(`timed out after ${r.durationMs} ms, before the deadline ${describe}`)
  }
  let next = 0
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < 500) await runOne(next++) }))
  t.same(contradictions, [], 'no result contradicts itself')
})

t.test('a measured child\'s session or group is in place when startChild returns: a kill at once reaches the group', async t => {
  // The helper reports the target only once it has exec'd, its setsid or setpgid done: a group
  // kill sent at once cannot find no group (and so miss the child), and /proc shows the group.
  const field = (pid: number, k: number) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[k])
  for (const [label, spec] of [['setsid', { setsid: true }], ['processGroup', { processGroup: true }]] as const) {
    const wrong: string[] = []
    for (let i = 0; i < 50; i++) {
      const child = startChild({ file: 'sleep', args: ['30'], measure: true, ...spec })
      const pgrp = field(child.pid, 2)
      const session = field(child.pid, 3)
      if (pgrp !== child.pid || (label === 'setsid' && session !== child.pid)) wrong.push(`#${i}: pid ${child.pid}, group ${pgrp}, session ${session}`)
      child.kill('SIGTERM')
      const r = await child.result
      if (r.signal !== 'SIGTERM') wrong.push(`#${i}: ${JSON.stringify({ exitCode: r.exitCode, signal: r.signal })}`)
    }
    t.same(wrong, [], `${label}: 50 measured children, each its group's leader at once, each killed by the group SIGTERM`)
  }
})

// A deadline's signal the child acts on only later (its trap runs when its `sleep` ends), while
// the loop is held (the caller's JavaScript) until the child has exited and its grace is over: in
// the next turn the loop runs its timers before it polls, so the grace's end came before the exit.
// An unmeasured child was then reported as one that "wouldn't die" (no status, no rusage), though
// it had exited, with its own status, inside its grace.
t.test("an exit inside the grace that the loop was too busy to see is the exit, not one that wouldn't die", async t => {
  for (const { launcher, measure, label } of WAYS) {
    const child = startChild({
      file: 'sh', args: ['-c', 'trap "exit 3" TERM; echo ready; while :; do sleep 0.5; done'],
      timeout: 100, killSignal: 'SIGTERM', graceTimeout: 50, launcher, measure,
    })
    await new Promise(resolve => child.stdout.once('data', resolve))  // the trap is set
    // After the deadline's timer (due earlier, run first), and from the loop's check phase, after
    // its poll: held past the grace, the next turn runs the timers (the grace's end) first.
    await new Promise(resolve => setTimeout(resolve, 120))
    await new Promise(resolve => setImmediate(resolve))
    t.ok(blockUntilExited(child.pid, measure, 100), `${label}: exited while the loop was held`)
    const r = await child.result
    t.same([r.timedOut, r.exitCode, r.diagnostic], [true, 3, 'Child timed out'], `${label}: timed out, and exited with its own status`)
  }
})

// SIGKILL ends a child only once it is scheduled: a graceTimeout shorter than that made the sync
// waiter call 39 of 40 `sleep`s killed with graceTimeout 0 ones that "wouldn't die" (the async
// waiter, whose timers count whole milliseconds, none). A child the SIGKILL has only to be
// scheduled to end (no thread in an uninterruptible sleep) is waited for past its grace.
t.test("graceTimeout 0: a SIGKILLed child is reported killed, on every path", t => eachPath(t, '', async (t, { run }) => {
  const results: string[] = []
  for (let i = 0; i < 10; i++) {
    const r = await run({ file: 'sleep', args: ['100'], timeout: 5, graceTimeout: 0 })
    results.push(`${r.signal} ${r.diagnostic}`)
  }
  t.same(results, Array(10).fill('SIGKILL Child timed out'), "killed and reaped, never one that wouldn't die")
}))

// A terminal's master left unread (startChild's `terminal` stream, backpressure) when the child
// exits and nothing holds the terminal: as for a pipe, what it holds is read into the result at
// the exit. It was left, cut at waitDelay, the result blaming a grandchild there was none of.
t.test("a terminal nobody reads, at the exit: the whole output", async t => {
  const before = getDefaultHighWaterMark(false)
  setDefaultHighWaterMark(false, 16384)
  try {
    // 17,000 bytes: past the reader's 16 KiB, and what is left of them within what a terminal
    // holds while nobody reads (20,000 were sometimes not: the child then waits on its reader, as
    // on a full pipe; the timeout keeps that from holding the suite).
    const results = await Promise.all(Array.from({ length: 10 }, () => startChild({ file: 'head', args: ['-c', '17000', '/dev/zero'], terminal: true, timeout: 30000 }).result))
    t.same(results.map(r => [r.stdout.length, r.waitDelayExpired]), Array(10).fill([17000, false]), 'each result has its 17,000 bytes, and no wait was cut')
  } finally {
    setDefaultHighWaterMark(false, before)
  }
})

// The same reader, and a grandchild that holds the stream past the child's exit, then lets go
// inside waitDelay: the rest was left unread, and the result came at waitDelay, cut at the
// reader's 16,384 bytes, blaming a grandchild that had gone long before. Now the hang-up is
// watched for, and the rest read then: the whole output, at once.
t.test("a grandchild that lets go of an unread stream inside waitDelay: the whole output, when it does", async t => {
  const dir = tempDir(t)
  const before = getDefaultHighWaterMark(false)
  setDefaultHighWaterMark(false, 16384)
  try {
    for (const terminal of [false, true]) {
      const gate = path.join(dir, `gate-${terminal}`)
      t.equal(spawnChildSync({ file: 'mkfifo', args: [gate] }).exitCode, 0)
      const child = startChild({
        // HUP ignored before the grandchild is forked: the terminal's hang-up at the child's exit
        // (a session leader's) must not end it before it could set a trap of its own.
        file: 'sh', args: ['-c', `trap "" HUP; head -c 17000 /dev/zero | tr "\\0" x; (read x < "${gate}"; echo END) &`],
        waitDelay: 30000, timeout: 60000, ...(terminal ? { terminal: true } : {}),
      })
      const pid = child.pid
      t.ok(await eventually(() => processState(pid) === 'gone'), `${terminal ? 'terminal' : 'pipe'}: the child has exited and been reaped`)
      fs.writeFileSync(gate, 'go\n')  // the grandchild writes END and exits
      const r = await child.result
      const text = r.stdout.toString()
      t.same([text.replace(/[^x]/g, '').length, text.includes('END'), r.waitDelayExpired], [17000, true, false], `${terminal ? 'terminal' : 'pipe'}: every byte, the grandchild's too, and no wait cut`)
    }
  } finally {
    setDefaultHighWaterMark(false, before)
  }
})

// kill(0) answers for a measured child's target as pid does: one whose program was not found
// never ran, and kill(0) said true for it (48 of 50) before its helper's report was taken, and
// (1 of 10, with both CPUs busy) after it, while the target that had failed its exec was still
// exiting: the helper's STARTED report now says it failed.
t.test('kill(0) on a measured child whose program does not exist: false', async t => {
  const answers: boolean[] = []
  for (let i = 0; i < 10; i++) {
    const child = startChild({ file: 'no-such-program-tileharness', measure: true })
    answers.push(child.kill(0))
    const r = await child.result
    t.equal(r.spawnError?.code, 'ENOENT')
  }
  t.same(answers, Array(10).fill(false), 'never a running child')
})

// A { path } target that could not be opened leaves no child: durationMs 0, not the 300 ms the
// open waited for a FIFO's reader until the deadline.
t.test('durationMs of a child that never started for its { path } target is 0', async t => {
  const dir = tempDir(t)
  for (const api of ['sync', 'async'] as const) {
    // A FIFO each: the release of a timed-out open (its other end, held open from another thread
    // until that open has returned) would let the next open of the same FIFO through.
    const fifo = path.join(dir, `fifo-${api}`)
    t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
    const spec: ChildSpec = { file: 'true', stdout: { path: fifo }, timeout: 100 }
    const r = api === 'sync' ? spawnChildSync(spec) : await spawnChild(spec)
    t.same([r.spawnError?.stage, r.spawnError?.code, r.pid, r.durationMs], ['open', 'ETIMEDOUT', 0, 0], `${api}: the open timed out, no child, no lifetime`)
  }
})
