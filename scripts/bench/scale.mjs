// Scale figures for the async API (run: npm run bench:scale [-- --children 1000]):
//  1. 1,000 concurrent `sleep 1` children: latency of fs.promises.readFile of a small file while
//     they run (the waits must not occupy the libuv threadpool).
//  2. 1,000 concurrent children, each with its own timeout (half finish, half time out): all
//     reaped with correct results; wall time.
//  3. Memory per running child (RSS and JS heap growth while 1,000 run, divided by 1,000).
// With --results (npm run bench:scale -- --results) the table also becomes the "## Async API at
// scale" section of bench/RESULTS.md, where the README's figures are read from.
import fs from 'node:fs'
import os from 'node:os'
import { spawnChild } from '../../dist/index.js'
import { RESULTS_FILE, writeSection } from './results-file.mjs'

const argIndex = process.argv.indexOf('--children')
const N = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 1000
const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = x => `${x.toFixed(2)} ms`

/** This process's children, as every thread's /proc children list has them. */
function childCount() {
  let n = 0
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      n += fs.readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).length
    } catch { /* the thread ended */ }
  }
  return n
}

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

const loadAtStart = os.loadavg()[0]
const startedAt = new Date().toISOString()
// 1 + 3: readFile latency and memory while N children run.
global.gc?.()
const rss0 = process.memoryUsage().rss, heap0 = process.memoryUsage().heapUsed
const idle = await readLatencies({ done: false }, 10)
const t0 = performance.now()
const state = { done: false }
const running = Array.from({ length: N }, () => spawnChild({ file: 'sleep', args: ['1'] }))
// The calls return before every child has started: all but the first few launches go to the
// launcher threads (native/launch-thread.h), in turn. Started: every child is one of this
// process's (a thread's /proc children list: the loop's and the launcher threads').
const callsMs = performance.now() - t0
while (childCount() < N) await new Promise(r => setTimeout(r, 1))
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
  [`${N.toLocaleString('en-US')} concurrent \`sleep 1\` children: the calls returned in / all started in`, `${ms(callsMs)} / ${ms(spawnMs)}`],
  [`\`fs.promises.readFile\` of a small file, idle (median / max of ${idle.length})`, `${ms(median(idle))} / ${ms(Math.max(...idle))}`],
  [`\`fs.promises.readFile\` of a small file while they run (median / max of ${busy.length})`, `${ms(median(busy))} / ${ms(Math.max(...busy))} (target: under 50 ms)`],
  ['children that exited 0', `${okSleep.toLocaleString('en-US')} of ${N.toLocaleString('en-US')}`],
  ['memory per running child (RSS / JS heap)', `${((rss1 - rss0) / N / 1024).toFixed(1)} KiB / ${((heap1 - heap0) / N / 1024).toFixed(1)} KiB`],
  [`${N.toLocaleString('en-US')} concurrent children with their own timeouts (half time out, half finish): wall`, ms(mixedMs)],
  ['results correct (timed out with SIGKILL / finished with 0)', `${timedOut} of ${N / 2} / ${finished} of ${N / 2}`],
]
const pass = Math.max(...busy) < 50 && okSleep === N && timedOut === N / 2 && finished === N / 2
const table = ['| figure | value |', '| --- | --- |', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n')
console.log(table)
console.log(pass ? '\nall targets met (readFile under 50 ms, every result correct)' : '\nTARGET MISSED')
if (process.argv.includes('--results')) {
  writeSection(RESULTS_FILE, 'Async API at scale', [
    '## Async API at scale',
    '',
    `**Machine:** ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `Linux ${os.release()}, Node ${process.version}, ${startedAt}, load average ${loadAtStart.toFixed(1)} at the start (other work on the machine slows the starts). Generated by \`npm run bench:scale -- --results\` ` +
      '(scripts/bench/scale.mjs): many children at once through the async API, whose waits must not hold the libuv threadpool.',
    '',
    table,
    '',
    `Verdict: ${pass ? '**passed**' : '**TARGET MISSED**'}.`,
  ].join('\n'))
  console.log('wrote the "## Async API at scale" section of bench/RESULTS.md')
}
process.exitCode = pass ? 0 : 1
