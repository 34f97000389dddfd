// Scale figures for the async API (run: npm run bench:scale [-- --children 1000]):
//  1. 1,000 concurrent `sleep 1` children: latency of fs.promises.readFile of a small file while
//     they run (the waits must not occupy the libuv threadpool).
//  2. 1,000 concurrent children, each with its own timeout (half finish, half time out): all
//     reaped with correct results; wall time.
//  3. Memory per running child (RSS and JS heap growth while 1,000 run, divided by 1,000).
import fs from 'node:fs'
import os from 'node:os'
import { spawnChild } from '../../dist/index.js'

const argIndex = process.argv.indexOf('--children')
const N = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 1000
const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = x => `${x.toFixed(2)} ms`

async function readLatencies(while_, samples = 20) {
  const out = []
  for (let i = 0; i < samples && !while_.done; i++) {
    const t0 = performance.now()
    await fs.promises.readFile(new URL(import.meta.url))
    out.push(performance.now() - t0)
    await new Promise(r => setTimeout(r, 20))
  }
  return out
}

// 1 + 3: readFile latency and memory while N children run.
global.gc?.()
const rss0 = process.memoryUsage().rss, heap0 = process.memoryUsage().heapUsed
const idle = await readLatencies({ done: false }, 10)
const t0 = performance.now()
const state = { done: false }
const running = Array.from({ length: N }, () => spawnChild({ file: 'sleep', args: ['1'] }))
const spawnMs = performance.now() - t0
const rss1 = process.memoryUsage().rss, heap1 = process.memoryUsage().heapUsed
const during = readLatencies(state)
const results = await Promise.all(running)
state.done = true
const busy = await during
const okSleep = results.filter(r => r.exitCode === 0).length

// 2: each child its own timeout.
const t1 = performance.now()
const mixed = await Promise.all(Array.from({ length: N }, (_, i) =>
  i % 2 ? spawnChild({ file: 'sleep', args: ['5'], timeout: 300 + (i % 50) }) : spawnChild({ file: 'sleep', args: ['0.2'], timeout: 5000 })))
const mixedMs = performance.now() - t1
const timedOut = mixed.filter((r, i) => i % 2 && r.timedOut && r.signal === 'SIGKILL').length
const finished = mixed.filter((r, i) => !(i % 2) && !r.timedOut && r.exitCode === 0).length

const rows = [
  ['machine', `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`],
  [`${N} concurrent \`sleep 1\`: started in`, ms(spawnMs)],
  [`readFile latency, idle (median / max of ${idle.length})`, `${ms(median(idle))} / ${ms(Math.max(...idle))}`],
  [`readFile latency while ${N} children run (median / max of ${busy.length})`, `${ms(median(busy))} / ${ms(Math.max(...busy))}`],
  [`children that exited 0`, `${okSleep} of ${N}`],
  [`memory per running child (RSS / JS heap)`, `${((rss1 - rss0) / N / 1024).toFixed(1)} KiB / ${((heap1 - heap0) / N / 1024).toFixed(1)} KiB`],
  [`${N} concurrent, own timeouts: wall`, ms(mixedMs)],
  [`  timed out as expected (SIGKILL) / finished as expected`, `${timedOut} of ${N / 2} / ${finished} of ${N / 2}`],
]
console.log('| figure | value |\n| --- | --- |')
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`)
const pass = Math.max(...busy) < 50 && okSleep === N && timedOut === N / 2 && finished === N / 2
console.log(pass ? '\nall targets met (readFile under 50 ms, every result correct)' : '\nTARGET MISSED')
process.exitCode = pass ? 0 : 1
