// The report's forms that hyperfine's options shape: --runs-csv (every run, its parameters),
// --time-unit and --sort in the terminal summary and the Markdown table; synthetic runs.
import t from 'tap'
import { FIGURES, type Figures } from '../../lib/bench/figures.js'
import { buildReport, displayOrder, formatCsv, formatMarkdown, formatText, type BenchOptionsRecord, type BenchRun } from '../../lib/bench/report.js'
import { formatRunsCsv } from '../../lib/bench/runs-csv.js'

const OPTIONS: BenchOptionsRecord = { runs: 2, warmup: 0, timeoutMs: 0, shell: false, measure: true, ignoreFailure: true, launcher: 'auto', rlimits: {} }

function runs(wall: number[], last: Partial<BenchRun> = {}): BenchRun[] {
  return wall.map((w, i) => {
    const figures = {} as Figures
    for (const f of FIGURES) figures[f.key] = i + 1
    figures.wallMs = w
    return { round: i + 1, figures, exitCode: 0, signal: null, timedOut: false, diagnostic: '', ...(i === wall.length - 1 ? last : {}) }
  })
}

const commands = [
  { command: 'ref', argv: ['ref'], runs: runs([20, 20]) },
  { command: 'sleep 0.5', argv: ['sleep', '0.5'], parameters: { t: '0.5', 'a,b': 'x' }, runs: runs([500, 500]) },
  { command: 'say "hi", quickly', argv: ['say'], parameters: { t: '0.1' }, runs: runs([10, 12], { exitCode: null, signal: 'SIGKILL', timedOut: true }) },
]

t.test('formatRunsCsv: one row per run, parameters as columns, raw figures', async t => {
  const csv = formatRunsCsv(buildReport(commands, OPTIONS)).split('\n')
  t.equal(csv.at(-1), '', 'ends with a newline')
  t.equal(csv[0], `command,parameter_t,"parameter_a,b",round,${FIGURES.map(f => f.key).join(',')},exitCode,signal,timedOut`)
  const rest = (round: number) => FIGURES.map(f => (f.key === 'wallMs' ? '' : round)).join(',')
  t.same(csv.slice(1, -1), [
    `ref,,,1,${rest(1).replace(/^/, '20')},0,,false`,
    `ref,,,2,${rest(2).replace(/^/, '20')},0,,false`,
    `sleep 0.5,0.5,x,1,${rest(1).replace(/^/, '500')},0,,false`,
    `sleep 0.5,0.5,x,2,${rest(2).replace(/^/, '500')},0,,false`,
    `"say ""hi"", quickly",0.1,,1,${rest(1).replace(/^/, '10')},0,,false`,
    `"say ""hi"", quickly",0.1,,2,${rest(2).replace(/^/, '12')},,SIGKILL,true`,
  ])
  t.equal(formatRunsCsv(buildReport([commands[0]], OPTIONS)).split('\n')[0].split(',')[1], 'round', 'no parameters: no parameter columns')
})

t.test('the JSON report carries each command\'s parameters ({} when none)', async t => {
  t.same(buildReport(commands, OPTIONS).commands.map(c => c.parameters), [{}, { t: '0.5', 'a,b': 'x' }, { t: '0.1' }])
})

t.test('--time-unit: times on the terminal and in Markdown in that unit; CSV raw, as hyperfine', async t => {
  const rows: Array<[BenchOptionsRecord['timeUnit'], RegExp, RegExp]> = [
    [null, /^ {2}wall +20\.0 ms /m, /\| Wall median \[ms\] \|/],
    ['second', /^ {2}wall +0\.02 s /m, /\| Wall median \[s\] \|/],
    ['microsecond', /^ {2}wall +20000 µs /m, /\| Wall median \[µs\] \|/],
    ['millisecond', /^ {2}wall +20\.0 ms /m, /\| Wall median \[ms\] \|/],
  ]
  for (const [timeUnit, text, markdown] of rows) {
    const report = buildReport(commands, { ...OPTIONS, timeUnit })
    t.match(formatText(report), text, `${timeUnit}: terminal`)
    t.match(formatMarkdown(report), markdown, `${timeUnit}: Markdown`)
    t.match(formatCsv(report), /^ref,,,true,wallMs,ms,2,20,/m, `${timeUnit}: CSV in ms (the scan's two parameter columns empty for ref)`)
  }
})

t.test('--sort: the Summary\'s and the Markdown table\'s order', async t => {
  const rows: Array<[BenchOptionsRecord['sort'], string[], string[]]> = [
    [undefined, ['ref', 'sleep 0.5', 'say "hi", quickly'], ['ref', 'sleep 0.5', 'say "hi", quickly']],
    ['command', ['ref', 'sleep 0.5', 'say "hi", quickly'], ['ref', 'sleep 0.5', 'say "hi", quickly']],
    ['auto', ['say "hi", quickly', 'ref', 'sleep 0.5'], ['ref', 'sleep 0.5', 'say "hi", quickly']],
    ['mean-time', ['say "hi", quickly', 'ref', 'sleep 0.5'], ['say "hi", quickly', 'ref', 'sleep 0.5']],
  ]
  for (const [sort, summary, table] of rows) {
    const report = buildReport(commands, { ...OPTIONS, sort })
    t.same(displayOrder(report, 'summary').map(c => c.command), summary, `${sort}: summary`)
    t.same(displayOrder(report, 'table').map(c => c.command), table, `${sort}: table`)
    const text = formatText(report)
    const lines = text.slice(text.indexOf('Summary:')).split('\n').filter(l => / wall [\d.]+x/.test(l)).map(l => l.trim().replace(/ +wall .*/, ''))
    t.same(lines, summary.filter(c => c !== 'ref'), `${sort}: the Summary's lines, the reference not among them`)
    const md = formatMarkdown(report).trim().split('\n').slice(2).map(row => /^\| `([^`]*)`/.exec(row)![1])
    t.same(md, table.map(c => c.replace(/"/g, '"')), `${sort}: the Markdown rows`)
  }
})

t.test('formatCsv: the parameters as columns too, so the rows of a scan can be told apart', async t => {
  const csv = formatCsv(buildReport(commands, OPTIONS)).split('\n')
  t.equal(csv[0], 'command,parameter_t,"parameter_a,b",reference,figure,unit,runs,min,q1,median,q3,max,mean,stddev,outliers,ratio_to_reference,ratio_ci_low,ratio_ci_high,p_value,significant')
  t.match(csv.find(l => l.startsWith('sleep 0.5,')), /^sleep 0\.5,0\.5,x,false,wallMs,ms,2,500,/)
  t.match(csv.find(l => l.startsWith('ref,')), /^ref,,,true,wallMs,ms,2,20,/, 'a command without them: empty cells')
  // One -c name for every value of a scan: only the parameter columns differ.
  const scan = [0.01, 0.06].map(d => ({ command: 'sleeper', argv: ['sleep', String(d)], parameters: { d: String(d) }, runs: runs([d * 1000, d * 1000]) }))
  const rows = formatCsv(buildReport(scan, OPTIONS)).split('\n').filter(l => l.includes(',wallMs,'))
  t.same(rows.map(l => l.split(',').slice(0, 2).join(',')), ['sleeper,0.01', 'sleeper,0.06'])
})
