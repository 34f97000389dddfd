// measure: true — the child's own maxRSS, not the spawner's; a SIGKILL at the deadline reaches the target.
// That a measured child is otherwise the same child is the behaviour tables' to show: every one of
// them runs through MEASURE (test/helpers.ts).
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { helperPath } from '../../lib/spawn/native.js'
import { eachPath, eventually, processState, tempDir, withRoomToStart } from '../helpers.js'
import { PACKAGE, nodeChildEnv, runNodeScript, slowHelperEnv } from '../reliability/helpers.js'

// The rows: what ends the child. maxRSS is the spawner's RSS unmeasured, and the child's own
// measured.
const endings: Array<[string, Partial<ChildSpec>]> = [
  ['exits by itself', { file: '/bin/true' }],
  ['killed at its deadline with SIGTERM', { file: 'sleep', args: ['10'], timeout: 100, killSignal: 'SIGTERM' }],
  ['killed at its deadline with SIGKILL', { file: 'sleep', args: ['10'], timeout: 100 }],
]

t.test("maxRSS is the child's own, even from a 2 GiB parent", async t => {
  const hold: Buffer[] = []
  for (let i = 0; i < 16; i++) hold.push(Buffer.alloc(128 * 1024 * 1024, 1))
  const rssKiB = process.memoryUsage().rss / 1024
  t.ok(rssKiB > 2 * 1024 * 1024, `precondition: parent RSS ${(rssKiB / 1048576).toFixed(2)} GiB`)
  // The reference: /usr/bin/time run from a shell, so /bin/true's pre-exec image is small.
  const ref = spawnChildSync({ file: 'sh', args: ['-c', '/usr/bin/time -f %M /bin/true'], env: { PATH: '/usr/bin:/bin' } })
  const reference = Number(ref.stderr.toString().trim())
  t.ok(reference > 0, `time(1) reports ${reference} KiB`)
  for (const [name, spec] of endings) await eachPath(t, name, async (t, { run, measure }) => {
    const r = await run({ file: '/bin/true', ...spec })
    const { maxRSS } = r.rusage
    if (!measure) t.ok(maxRSS > 2 * 1024 * 1024, `unmeasured: ${maxRSS} KiB (the spawner's RSS)`)
    else t.ok(Math.abs(maxRSS - reference) <= 2048, `measured: ${maxRSS} KiB, within 2 MiB of time(1)'s ${reference} KiB`)
  })
  hold.length = 0
})

t.test('a SIGKILL at the deadline reaches the target itself, whose rusage is still its own', t => eachPath(t, '', async (t, { run }) => {
  // The helper reports the target's pid when it starts it, and the harness signals the target
  // directly: SIGKILL included, which no helper could forward. The helper then reaps and reports.
  // The deadline is 200 ms, longer while a busy machine's shell had not printed its pid by then.
  const r = await withRoomToStart(run, { file: 'sh', args: ['-c', 'echo $$; exec sleep 100'], timeout: 200 })
  t.equal(r.timedOut, true)
  t.equal(r.signal, 'SIGKILL', "the target was killed by the deadline's SIGKILL")
  const target = Number(r.stdout.toString().trim())
  t.equal(r.pid, target, "the result's pid is the target's")
  t.equal(r.rusageSource, 'helper', "the rusage is the target's, from the helper's report")
  t.ok(r.rusage.maxRSS > 0 && r.rusage.maxRSS < 20 * 1024, `the target's own max RSS (${r.rusage.maxRSS} KiB), not this process's`)
  t.ok(await eventually(() => processState(target) !== 'alive'), 'the target is gone')
  const grouped = await withRoomToStart(run, { file: 'sh', args: ['-c', 'sleep 100 & echo $!; wait'], timeout: 200, setsid: true })
  const pid = Number(grouped.stdout.toString().trim())
  t.ok(pid > 0, 'the shell printed its background pid')
  t.ok(await eventually(() => processState(pid) !== 'alive'), 'with setsid the whole group goes')
}, { measure: [true] }))

t.test("durationMs is the target's own: the helper's start is not counted, and a deadline starts with the target", async t => {
  // A helper that takes 400 ms to start (a wrapper that sleeps, then execs the real one), beside a
  // copy of the addon, which takes its helper from its own directory. Whatever the machine's
  // load, the call then lasts at least 400 ms longer than the target lives: the target's own
  // durationMs is below the call's time less that, where launch-to-exit would be above it.
  const env = slowHelperEnv(t, 400)
  const rows = runNodeScript<Array<{ api: string; callMs: number; durationMs: number; exitCode: number | null; timedOut: boolean; rusageSource: string }>>(`
    const { spawnChild, spawnChildSync } = require(${PACKAGE})
    ;(async () => {
      const rows = []
      for (const api of ['sync', 'async']) for (const spec of [{ file: '/bin/true' }, { file: 'sleep', args: ['10'], timeout: 300 }]) {
        const t0 = performance.now()
        const full = { ...spec, measure: true }
        const r = api === 'sync' ? spawnChildSync(full) : await spawnChild(full)
        rows.push({ api, callMs: performance.now() - t0, durationMs: r.durationMs, exitCode: r.exitCode, timedOut: r.timedOut, rusageSource: r.rusageSource })
      }
      console.log(JSON.stringify(rows))
    })()
  `, { env })
  t.equal(rows.length, 4)
  for (const r of rows) {
    const label = `${r.api}, ${r.timedOut ? 'timed out' : 'exits'}: durationMs ${r.durationMs.toFixed(1)}, call ${r.callMs.toFixed(1)} ms`
    t.equal(r.rusageSource, 'helper', `${label}: measured`)
    t.ok(r.durationMs <= r.callMs - 400, `${label}: the helper's 400 ms start is not in durationMs`)
    // The deadline counts from when the target exists, so a measured child that timed out lived
    // at least its timeout (from the call, the slow helper would have used most of it up).
    if (r.timedOut) t.ok(r.durationMs >= 300, `${label}: lived its whole timeout`)
    else t.equal(r.exitCode, 0, label)
  }
})

t.test("the helper holds none of the target's fds once it runs: a target closing its stdin, stdout or an extra fd is seen to", async t => {
  const { startChild } = await import('../../lib/index.js')
  const fs = await import('node:fs')
  for (const launcher of ['posix_spawn', 'fork'] as const) {
    const extra = fs.openSync('/dev/null', 'r')
    const child = startChild({ file: 'sleep', args: ['30'], stdin: 'pipe', fds: { 3: extra }, measure: true, launcher })
    fs.closeSync(extra)
    const helper = Number(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
    const held = fs.readdirSync(`/proc/${helper}/fd`).map(fd => fs.readlinkSync(`/proc/${helper}/fd/${fd}`))
    t.equal(held.length, 1, `${launcher}: the helper (${helper}) keeps its report pipe alone: ${held.join(', ')}`)
    child.kill('SIGKILL')
    const r = await child.result
    t.same([r.signal, r.rusageSource], ['SIGKILL', 'helper'], `${launcher}: and still reports the target`)
  }
  // What that gives: a target that closes its stdin makes the next write fail with EPIPE.
  const child = startChild({ file: 'sh', args: ['-c', 'exec 0<&-; echo closed; exec sleep 30'], stdin: 'pipe', measure: true })
  await new Promise(resolve => child.stdout.once('data', resolve))
  const error = await new Promise<NodeJS.ErrnoException | null | undefined>(resolve => child.stdin!.write(Buffer.alloc(1 << 20), resolve))
  t.equal(error?.code, 'EPIPE', 'a write to a measured target that closed its stdin gets EPIPE')
  child.kill('SIGKILL')
  await child.result
})

// The helper forwards the signals that reach it to its target. One that came after it had reaped
// the target was forwarded to the target's pid all the same, which by then may be another
// process's. The helper now waits for the exit without reaping (WNOWAIT), stops forwarding, and
// only then reaps. Shown with strace, which delays the return of the helper's wait4 (the reap) by
// 2 s: the target's pid is gone meanwhile, and the helper is sent SIGUSR1 then.
t.test('a signal that reaches the helper after it has reaped its target is not forwarded to its pid', { skip: haveStrace() }, async t => {
  for (let attempt = 1; ; attempt++) {
    const log = path.join(tempDir(t), 'strace.log')
    const tracer = spawn('strace', ['-f', '-qq', '-o', log, '-e', 'trace=kill,wait4', '-e', 'inject=wait4:delay_exit=2000000', helperPath, '--', 'sh', 'sh', '-c', 'echo $$'], { stdio: ['ignore', 'pipe', 'inherit', 'pipe'] })
    const ended = once(tracer, 'close')
    const [line] = await once(tracer.stdout, 'data') as [Buffer]
    const target = Number(line.toString().trim())
    const helper = Number(fs.readFileSync(`/proc/${tracer.pid}/task/${tracer.pid}/children`, 'utf8').trim())
    await eventually(() => !fs.existsSync(`/proc/${target}`), 10000)  // reaped: its pid is free
    let sent = fs.existsSync(`/proc/${helper}`)
    if (sent) try { process.kill(helper, 'SIGUSR1') } catch { sent = false }
    await ended
    const forwarded = fs.readFileSync(log, 'utf8').split('\n').filter(l => /\bkill\(/.test(l))
    if (!sent && attempt < 3) continue  // the helper was gone before it could be signalled: again
    t.ok(sent, `the helper was signalled between its reap and its exit (attempt ${attempt})`)
    t.same(forwarded, [], 'and it forwarded nothing to the reaped pid')
    break
  }
})

function haveStrace(): string | false {
  const r = spawnSync('strace', ['-V'], { stdio: 'ignore' })
  return r.error || r.status !== 0 ? 'strace is not installed (Debian: strace)' : false
}

// The measured target is in the group the unmeasured child is in, in a pid namespace too (whose
// init, this node, is in a group led from outside it: getpgrp() is 0 there). A helper that moved to
// a group of its own and put the target back by that id left the target in a group of its own.
t.test('in a pid namespace, a measured child is in the group an unmeasured one is in', async t => {
  const probe = spawnChildSync({ file: 'unshare', args: ['-pf', '--mount-proc', 'true'] })
  if (probe.exitCode !== 0) return t.skip(`unshare -pf cannot make a pid namespace here: ${probe.stderr.toString().trim() || probe.diagnostic}`)
  const script = `
    const { spawnChildSync } = require(${PACKAGE})
    const spec = { file: 'sh', args: ['-c', 'cut -d" " -f5 /proc/$$/stat'] }
    console.log(JSON.stringify([false, true].map((measure) => spawnChildSync({ ...spec, measure }).stdout.toString().trim())))
  `
  const r = spawnChildSync({ file: 'unshare', args: ['-pf', '--mount-proc', process.execPath, '-e', script], env: nodeChildEnv() })
  t.equal(r.exitCode, 0, r.stderr.toString())
  const [plain, measured] = JSON.parse(r.stdout.toString()) as [string, string]
  t.equal(measured, plain, `the same process group as the unmeasured child (${plain})`)
})

// The measuring helper stays in this process's group. In a group of its own (tried, 2ef264f), its
// link to the target kept this process's group from being orphaned, and the target's exit orphaned
// it: with any member stopped, the kernel sent SIGHUP (and SIGCONT) to the whole group. A CI run
// died of it (npm test: Hangup) while another test had a child stopped.
t.test("a measured child's exit sends no SIGHUP to this process's group while a member of it is stopped", async t => {
  const out = runNodeScript<{ stopped: boolean; hup: number }>(`
    const { spawnChildSync } = require(${PACKAGE})
    const { spawn } = require('node:child_process')
    const fs = require('node:fs')
    let hup = 0
    process.on('SIGHUP', () => { hup++ })
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' })  // in this process's group
    process.kill(sleeper.pid, 'SIGSTOP')
    const state = () => { try { const s = fs.readFileSync('/proc/' + sleeper.pid + '/stat', 'utf8'); return s.slice(s.lastIndexOf(')') + 2)[0] } catch { return '?' } }
    ;(async () => {
      for (let i = 0; i < 1000 && state() !== 'T'; i++) await new Promise(r => setTimeout(r, 5))
      const stopped = state() === 'T'
      spawnChildSync({ file: 'true', measure: true })
      // A SIGHUP the exit caused is pending already: a poll phase delivers it (two check phases).
      for (let i = 0; i < 2; i++) await new Promise(r => setImmediate(r))
      sleeper.kill('SIGKILL')
      console.log(JSON.stringify({ stopped, hup }))
    })()
  `, { setsid: true })
  t.equal(out.stopped, true, 'a member of the group was stopped')
  t.equal(out.hup, 0, 'no SIGHUP came')
})

t.test("a measured child whose helper someone else kills: the result's pid is still the target's", async t => {
  const child = startChild({ file: 'sleep', args: ['30'], measure: true })
  const targetPid = child.pid  // once the helper has reported the target
  const helper = Number(fs.readFileSync(`/proc/${targetPid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1])
  process.kill(helper, 'SIGKILL')
  const result = await child.result
  t.same([result.pid, result.signal, result.rusageSource], [targetPid, 'SIGKILL', 'unavailable'], `pid ${targetPid} as child.pid said, the helper's SIGKILL, no rusage of the target's`)
})
