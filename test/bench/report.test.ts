// The printed forms of a benchmark (terminal summary, Markdown, CSV, JSON) and the progress line,
// from synthetic runs with known answers.
import t from 'tap'
import { FIGURES, displayUnit, formatValue, type Figures } from '../../lib/bench/figures.js'
import { renderProgress } from '../../lib/bench/progress.js'
import { machineLoad } from '../../lib/bench/machine.js'
import {
  BENCH_SCHEMA, buildReport, formatCsv, formatJson, formatMarkdown, formatText, type BenchOptionsRecord, type BenchRun,
} from '../../lib/bench/report.js'

const OPTIONS: BenchOptionsRecord = { runs: 4, warmup: 1, timeoutMs: 0, shell: false, measure: true, ignoreFailure: true, launcher: 'auto', rlimits: {} }

function runs(wall: number[], rss: number, failed: Partial<BenchRun> = {}): BenchRun[] {
  return wall.map((w, i) => {
    const figures = {} as Figures
    for (const f of FIGURES) figures[f.key] = i
    figures.wallMs = w
    figures.maxRSSKiB = rss
    return { round: i + 1, figures, exitCode: 0, signal: null, timedOut: false, diagnostic: '', ...(i === 0 ? failed : {}) }
  })
}

const report = buildReport([
  { command: 'ref', argv: ['ref'], runs: runs([1, 2, 3, 4], 1000) },
  { command: 'b, "quoted" | piped', argv: ['b'], runs: runs([3, 6, 9, 40], 3000, { exitCode: 1 }) },
  { command: 'slow', argv: ['slow'], runs: runs([10, 20, 30, 40], 1000, { exitCode: null, signal: 'SIGKILL', timedOut: true, diagnostic: 'Child timed out' }) },
], OPTIONS)

t.test('buildReport: summaries, paired ratios, failure counts', async t => {
  t.equal(report.schema, BENCH_SCHEMA)
  const [ref, b, slow] = report.commands
  t.equal(ref.reference, true)
  t.equal(ref.ratio, null)
  t.match(b.ratio!.wallMs, { median: 3, pairs: 4 }, 'every pair is 3x except the outlier run 4 (10x): median 3')
  t.match(b.ratio!.wallMs!.interval, { level: 0.95, low: 3 }, 'the bootstrap interval starts at 3')
  t.ok(b.ratio!.wallMs!.interval.high > 3 && b.ratio!.wallMs!.interval.high <= 10, 'and reaches toward the 10x pair')
  t.match(b.ratio!.wallMs!.test, { statistic: 10, n: 4, exact: true, pValue: 0.125, significant: false }, 'four pairs, all slower: p = 2/16, not enough runs to be significant')
  t.same(buildReport([{ command: 'ref', argv: ['ref'], runs: runs([1, 2, 3, 4], 1000) }, { command: 'b', argv: ['b'], runs: runs([3, 6, 9, 40], 3000) }], OPTIONS).commands[1].ratio,
    b.ratio, 'the same runs, the same intervals: the bootstrap is seeded')
  t.match(report.ratioInterval, { level: 0.95, resamples: 2000, seed: 18, method: /bootstrap/ })
  t.match(report.significance, { test: /Wilcoxon signed-rank/, alpha: 0.05 })
  t.match(report.outlierRule, { id: 'tukey-1.5-iqr', floor: /4 quanta/ })
  t.match(b.ratio!.maxRSSKiB, { median: 3 })
  t.match(slow.ratio!.wallMs, { median: 10 })
  t.same(b.summary.wallMs.outliers, [3], 'the 40 ms run is an outlier')
  t.match(b, { failedRuns: 1, timedOutRuns: 0 })
  t.match(slow, { failedRuns: 1, timedOutRuns: 1 })
  t.equal(report.outlierRule.id, 'tukey-1.5-iqr')
  t.same(Object.keys(report.units), FIGURES.map(f => f.key))
})

t.test('formatText: every figure, outliers named with their rule, ratios, failures', async t => {
  const text = formatText(report)
  for (const f of FIGURES) t.match(text, new RegExp(`^  ${f.label.replace('.', '\\.')}`, 'm'), f.label)
  t.match(text, /^Benchmark 1: ref {2}\(reference\)$/m)
  t.match(text, /outliers beyond 1\.5 IQR of the quartiles \(Tukey's fences\): wall 1 of 4 \(run 4\)/)
  const interval = (r: { interval: { low: number; high: number } } | null) => `\\[${r!.interval.low.toFixed(2)}–${r!.interval.high.toFixed(2)}\\]`
  t.match(text, new RegExp(`^ {2}b, "quoted" \\| piped +wall 3\\.00x ${interval(report.commands[1].ratio!.wallMs)} p=0\\.13 not significant +max RSS 3\\.00x \\[3\\.00–3\\.00\\] p=0\\.13 not significant$`, 'm'))
  t.match(text, /in brackets its 95% confidence interval, by the bootstrap with seed 18;\n {2}p: Wilcoxon signed-rank test/)
  t.match(text, /warning: 1 of 4 runs failed, 1 of them timed out/)
  // A command far faster than the reference: two significant digits, not 0.00x [0.00–0.00].
  const fast = formatText(buildReport([{ command: 'ref', argv: ['ref'], runs: runs([600, 600, 600, 600], 1000) }, { command: 'fast', argv: ['fast'], runs: runs([0.72, 0.72, 0.72, 0.72], 1000) }], OPTIONS))
  t.match(fast, /^ {2}fast +wall 0\.0012x \[0\.0012–0\.0012\]/m, 'a ratio below 0.1 keeps two significant digits')
  const faster = formatText(buildReport([{ command: 'ref', argv: ['ref'], runs: runs([600, 600, 600, 600], 1000) }, { command: 'fast', argv: ['fast'], runs: runs([0.000072, 0.000072, 0.000072, 0.000072], 1000) }], OPTIONS))
  t.match(faster, /^ {2}fast +wall 0\.00000012x /m, 'below 1e-6 too, not 1.2e-7x')
  const single = formatText(buildReport([{ command: 'only', argv: ['only'], runs: runs([1, 2], 10) }], OPTIONS))
  t.notMatch(single, /Summary|reference/, 'one command: no comparison')
})

t.test('significance: many pairs, always slower, is significant', async t => {
  const wall = Array.from({ length: 20 }, (_, i) => 1 + i / 10)
  const r = buildReport([
    { command: 'ref', argv: ['ref'], runs: runs(wall, 1000) },
    { command: 'slower', argv: ['slower'], runs: runs(wall.map(w => w * 1.2), 1000) },
  ], OPTIONS)
  t.match(r.commands[1].ratio!.wallMs, { median: 1.2, interval: { low: 1.2, high: 1.2 }, test: { significant: true, exact: true } })
  t.match(r.commands[1].ratio!.maxRSSKiB, { median: 1, test: { n: 0, pValue: 1, significant: false } }, 'no pair differs: nothing to test')
  t.match(formatText(r), /^ {2}slower +wall 1\.20x \[1\.20–1\.20\] p<0\.001 significant +max RSS 1\.00x \[1\.00–1\.00\] p=1\.00 not significant$/m)
})

t.test('the busy-machine warning, from injected load readings', async t => {
  const reading = (loadAverage: number, parallelism = 2) => ({ loadAverage, parallelism })
  const rows: Array<[number, number, number, boolean]> = [
    // [load at start, at end, CPUs, busy]
    [0.2, 1.1, 2, false], // the end's load is the benchmark's own
    [0.9, 1.9, 2, false],
    [1.5, 1.2, 2, true], // before any run, more than one of two CPUs was taken
    [0.3, 2.5, 2, true], // by the end, others came
    [6, 6.5, 8, false],
    [7.5, 3, 8, true],
    [1.2, 0.5, 1, true], // one CPU: another task at all is one too many
    [0.6, 1.8, 1, false],
  ]
  for (const [start, end, cpus, busy] of rows) {
    const load = machineLoad(reading(start, cpus), reading(end, cpus))
    t.equal(load.busy, busy, `load ${start} -> ${end} on ${cpus}: ${busy ? 'busy' : 'quiet'}`)
    t.equal(load.warning === null, !busy, 'a warning exactly when busy')
  }
  const one = [{ command: 'only', argv: ['only'], runs: runs([1, 2], 10) }]
  const busy = buildReport(one, OPTIONS, { load: { start: reading(3.5), end: reading(3.9) } })
  t.match(busy.machine, { busy: true, start: { loadAverage: 3.5, parallelism: 2 }, end: { loadAverage: 3.9 } })
  t.match(formatText(busy), /^warning: the machine was busy: load average 3\.50 at the start and 3\.90 at the end on 2 CPUs; other work competed with the runs/m)
  t.equal(JSON.parse(formatJson(busy)).machine.busy, true, 'in the JSON too')
  const quiet = buildReport(one, OPTIONS, { load: { start: reading(0.1), end: reading(1) } })
  t.match(quiet.machine, { busy: false, warning: null })
  t.notMatch(formatText(quiet), /warning/)
  t.equal(buildReport(one, OPTIONS).machine, null, 'no readings: null')
})

t.test('formatMarkdown: one row per command, pipes escaped', async t => {
  const lines = formatMarkdown(report).trim().split('\n')
  t.equal(lines.length, 2 + 3)
  const cells = (line: string) => line.split(/(?<!\\)\|/).length
  for (const line of lines) t.equal(cells(line), cells(lines[0]), `same number of cells: ${line}`)
  t.match(lines[2], /^\| `ref` \(reference\) \|/)
  t.match(lines[3], /`b, "quoted" \\\| piped`/)
  t.match(lines[3], /\| 3\.00x \| 3\.00x \| \[3\.00–[\d.]+\] \| 0\.13 \| \[3\.00–3\.00\] \| 0\.13 \|$/, 'ratios, their intervals and p-values')
  t.match(lines[0], /\| Relative wall \| Relative max RSS \| Wall ratio 95% CI \| Wall p \| Max RSS ratio 95% CI \| Max RSS p \|$/)
  t.match(lines[2], /\| 1\.00x \| 1\.00x \| {2}\| {2}\| {2}\| {2}\|$/, 'the reference has no interval nor p')
})

t.test('formatCsv: long format, quoted fields, parseable', async t => {
  const lines = formatCsv(report).trim().split('\n')
  t.equal(lines[0], 'command,reference,figure,unit,runs,min,q1,median,q3,max,mean,stddev,outliers,ratio_to_reference,ratio_ci_low,ratio_ci_high,p_value,significant')
  t.equal(lines.length, 1 + 3 * FIGURES.length)
  const wallB = lines.find(l => l.startsWith('"b, ""quoted"" | piped",false,wallMs,'))
  t.ok(wallB, 'a command with commas and quotes is one quoted field')
  t.match(wallB, /,ms,4,3,/)
  t.match(wallB, /,1,3,3,[\d.]+,0\.125,false$/, 'one outlier, ratio 3, its interval from 3, p 0.125, not significant')
  t.match(lines.find(l => l.startsWith('ref,true,wallMs,')), /,,,,,$/, 'the reference: no ratio, no interval, no test')
})

t.test('formatJson round-trips', async t => {
  const back = JSON.parse(formatJson(report))
  t.equal(back.commands[1].runs[0].exitCode, 1)
  t.equal(back.commands[2].runs[0].timedOut, true)
  t.equal(back.commands[0].runs.length, 4)
})

t.test('display units and values', async t => {
  const rows: Array<[Parameters<typeof displayUnit>[0], number, number, string]> = [
    ['time', 0.5, 0.25, '250 µs'],
    ['time', 12, 3.456, '3.46 ms'],
    ['time', 2500, 1234, '1.23 s'],
    ['memory', 900, 512, '512 KiB'],
    ['memory', 3000, 1536, '1.50 MiB'],
    ['memory', 5 * 1024 ** 2, 2 * 1024 ** 2, '2.00 GiB'],
    ['count', 100, 42, '42'],
    ['count', 100, 1.25, '1.25'],
    ['count', 1000, 123.4, '123.4'],
  ]
  for (const [kind, largest, value, want] of rows) t.equal(formatValue(value, displayUnit(kind, largest), kind), want, `${kind} ${value}`)
})

t.test('renderProgress: one line within the width', async t => {
  const line = renderProgress({ phase: 'measuring', done: 5, total: 20, elapsedMs: 5000, command: 'sleep 1' }, 80)
  t.match(line, /^measuring █{6}░{18} 5\/20 {2}ETA 0:15 {2}sleep 1$/)
  t.notMatch(line, /[\r\n\x1b]/)
  const long = renderProgress({ phase: 'warmup', done: 0, total: 3, elapsedMs: 0, command: 'x'.repeat(200) }, 60)
  t.ok([...long].length <= 59, 'cut to the terminal width')
  t.match(long, /^warmup {4}░{24} 0\/3 {2}x+…$/)
  t.match(renderProgress({ phase: 'measuring', done: 1, total: 2, elapsedMs: 4e6, command: 'c' }), /ETA 1:06:40/)
})
