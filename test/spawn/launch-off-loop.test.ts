// spawnChild launches on the addon's launch threads (native/launch-queue.h), not on the event
// loop's thread: a launch holds its thread until the child has exec'd, which on a busy machine is
// as long as the child waits for a CPU. startChild launches on the loop, so that its pid is there
// when it returns. What arrives while a launch is under way is acted on once it is done: an abort
// or kill() reaches the child, an abort of a launch that fails is moot; and the deadline counts
// from when the child runs.
//
// Which thread launched a child is read from /proc/self/task/<tid>/children, where the kernel
// lists each thread's own children.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChild, startChild } from '../../lib/index.js'
import { LAUNCHERS, MEASURE, childPids, openFds, tempDir } from '../helpers.js'
import { execFileSync } from 'node:child_process'

function childrenOfThread(tid: number): number[] {
  const text = fs.readFileSync(`/proc/self/task/${tid}/children`, 'utf8').trim()
  return text ? text.split(/\s+/).map(Number) : []
}

/** Who started pid: 'loop' (this, the main thread), 'other thread', or 'none'. */
function launchedBy(pid: number): string {
  if (childrenOfThread(process.pid).includes(pid)) return 'loop'
  return childPids().includes(pid) ? 'other thread' : 'none'
}

const WAYS = LAUNCHERS.flatMap(launcher => MEASURE.map(measure => ({ launcher, measure, label: `${launcher}${measure ? ' measured' : ''}` })))

t.test('spawnChild launches off the loop thread, startChild on it', async t => {
  const dir = tempDir(t)
  for (const { launcher, measure, label } of WAYS) {
    // The child reports its pid through a FIFO (read without blocking the loop), then sleeps.
    const fifo = path.join(dir, `pid-${label.replace(' ', '-')}`)
    execFileSync('mkfifo', [fifo])
    const ac = new AbortController()
    const result = spawnChild({ file: 'sh', args: ['-c', 'echo $$ > "$0"; exec sleep 30', fifo], launcher, measure, signal: ac.signal })
    const pid = Number((await fs.promises.readFile(fifo, 'utf8')).trim())
    t.ok(pid > 0, `${label}: the child reported its pid`)
    // Measured, the program runs under the helper: the helper is the launched child.
    const launched = measure ? childPids().find(p => fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).map(Number).includes(pid)) ?? -1 : pid
    t.equal(launchedBy(launched), 'other thread', `${label}: spawnChild's child is a launch thread's, not the loop thread's`)
    ac.abort()
    const r = await result
    t.same({ aborted: r.aborted, signal: r.signal }, { aborted: true, signal: 'SIGKILL' }, `${label}: then aborted`)

    const child = startChild({ file: 'sleep', args: ['30'], launcher, measure })
    const own = measure ? childPids().find(p => fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).map(Number).includes(child.pid)) ?? -1 : child.pid
    t.equal(launchedBy(own), 'loop', `${label}: startChild's child is the loop thread's (its pid is there when it returns)`)
    child.kill()
    await child.result
  }
})

t.test('an abort or kill while spawnChild is launching reaches the child once it runs', async t => {
  for (const { launcher, measure, label } of WAYS) {
    // Aborted in the same tick as the call: the launch thread has the child still.
    const ac = new AbortController()
    const pending = spawnChild({ file: 'sleep', args: ['30'], launcher, measure, signal: ac.signal })
    ac.abort()
    const r = await pending
    t.same({ aborted: r.aborted, signal: r.signal, exitCode: r.exitCode, diagnostic: r.diagnostic },
      { aborted: true, signal: 'SIGKILL', exitCode: null, diagnostic: 'Child aborted' }, `${label}: aborted during the launch`)

    const gentle = new AbortController()
    const term = spawnChild({ file: 'sleep', args: ['30'], launcher, measure, killSignal: 'SIGTERM', signal: gentle.signal })
    gentle.abort()
    const rt = await term
    t.same({ aborted: rt.aborted, signal: rt.signal }, { aborted: true, signal: 'SIGTERM' }, `${label}: with its killSignal`)

    // Already aborted before the call: the same.
    const before = await spawnChild({ file: 'sleep', args: ['30'], launcher, measure, signal: AbortSignal.abort() })
    t.same({ aborted: before.aborted, signal: before.signal }, { aborted: true, signal: 'SIGKILL' }, `${label}: aborted before the call`)

    // A launch that fails started nothing for the abort to end: its result is the failure.
    const missing = new AbortController()
    const failing = spawnChild({ file: '/nonexistent/tileharness-no-such-program', launcher, measure, signal: missing.signal })
    missing.abort()
    const rf = await failing
    t.same({ aborted: rf.aborted, stage: rf.spawnError?.stage, code: rf.spawnError?.code }, { aborted: false, stage: 'exec', code: 'ENOENT' },
      `${label}: an abort during a launch that fails is moot`)
  }
})

t.test('a deadline counts from when the child runs, and one that passes during the launch acts once it runs', async t => {
  for (const { launcher, measure, label } of WAYS) {
    const r = await spawnChild({ file: 'sleep', args: ['30'], launcher, measure, timeout: 1 })
    t.same({ timedOut: r.timedOut, signal: r.signal }, { timedOut: true, signal: 'SIGKILL' }, `${label}: a 1 ms deadline kills it`)
    t.ok(r.durationMs >= 1, `${label}: after it lived its timeout (${r.durationMs} ms)`)
  }
})

t.test('many launches at once: every result arrives, nothing is left behind', async t => {
  const fdsBefore = openFds()
  const results = await Promise.all(Array.from({ length: 240 }, (_, i) => {
    const { launcher, measure } = WAYS[i % WAYS.length]!
    const file = i % 5 === 0 ? '/nonexistent/tileharness-no-such-program' : 'sh'
    return spawnChild({ file, args: ['-c', `echo ${i}; exit ${i % 7}`], launcher, measure, stdout: 'pipe' })
  }))
  for (const [i, r] of results.entries()) {
    if (i % 5 === 0) {
      if (r.spawnError?.code !== 'ENOENT') t.fail(`#${i}: ENOENT expected, got ${JSON.stringify(r.spawnError)}`)
    } else if (r.exitCode !== i % 7 || r.stdout.toString() !== `${i}\n`) {
      t.fail(`#${i}: exit ${r.exitCode} output ${JSON.stringify(r.stdout.toString())}`)
    }
  }
  t.pass('240 results, each its own child\'s')
  t.same(openFds(), fdsBefore, 'the same fds open before and after')
  t.same(childPids(), [], 'no child left, zombie or not')
})
