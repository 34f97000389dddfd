// Class 7: stdio redirected to a FIFO nobody opens. (a) spawnChildSync of cat with stdin
// { path: fifo } and a 300 ms timeout returns within the deadline + 2 s with timedOut, on both
// launch paths; (b) the same with stdout { path: fifo }; (c) spawnChild: the event loop keeps
// turning while it is pending (a 10 ms interval ticks more than 5 times) and the result is
// timedOut; (d) spawnChild with an AbortSignal aborted after 100 ms and no timeout settles with
// aborted; (e) with a real peer (a writer started first) cat gets 'data'. Every run is a node
// process of its own, all at once, each with a 10 s safety timeout (a hang is killed, and reported).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { assertFreshBuild, assertHealthy, runAll, runFixture, tempDir } from './helpers.js'

assertFreshBuild(t)

const DEADLINE = 300
const SLACK = 2000
const LAUNCHERS = ['posix_spawn', 'fork']
const CASES: Array<[string, string]> = [
  ...['sync-stdin', 'sync-stdout', 'async-stdin', 'async-abort', 'peer-sync', 'peer-async'].flatMap(c => LAUNCHERS.map(l => [c, l] as [string, string])),
]

function canMkfifo(dir: string): string | false {
  const r = spawnSync('mkfifo', [path.join(dir, 'probe')])
  if (r.error) return `mkfifo cannot run here (${r.error.message})`
  if (r.status !== 0) return `mkfifo fails here: ${String(r.stderr).trim()}`
  return false
}

const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-hostile-mkfifo-'))
const noFifo = canMkfifo(probeDir)
fs.rmSync(probeDir, { recursive: true, force: true })

t.test('FIFO stdio', { skip: noFifo }, async t => {
  const dir = tempDir(t)
  const runs = await runAll(CASES.map(([which, launcher]) => () => {
    const fifo = path.join(dir, `${which}-${launcher}.fifo`) // one FIFO per run: no run is another's peer
    spawnSync('mkfifo', [fifo])
    return runFixture('fifo.mjs', [which, launcher, fifo], { timeoutMs: 10000 })
  }), CASES.length)
  for (const r of runs) {
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.equal(j.error, undefined, 'the call did not throw', { error: j.error })
      const bound = (ms: number) => t.ok(j.elapsedMs <= ms, `settled within ${ms} ms (took ${j.elapsedMs})`)
      switch (j.which) {
        case 'sync-stdin':
        case 'sync-stdout':
          bound(DEADLINE + SLACK)
          t.equal(j.timedOut, true, 'timedOut', { result: j })
          break
        case 'async-stdin':
          bound(DEADLINE + SLACK)
          t.equal(j.timedOut, true, 'timedOut', { result: j })
          // Any tick at all: an event loop frozen in open(2) could not run the interval before the
          // result (and a FIFO with no peer would never give one). How many is the machine's load.
          t.ok(j.ticks >= 1, `the event loop kept turning while it was pending (${j.ticks} ticks of 10 ms)`)
          break
        case 'async-abort':
          bound(100 + SLACK)
          t.equal(j.aborted, true, 'settled with aborted: true', { result: j })
          break
        default:
          t.same([j.exitCode, j.timedOut, j.spawnError, j.stdout], [0, false, null, 'data\n'], "cat got the writer's data")
          t.same(j.writer, { code: 0, signal: null }, 'the writer finished')
      }
    })
  }
})
