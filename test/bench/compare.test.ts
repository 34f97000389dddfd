// --compare: a baseline report read and checked, commands matched, each figure's verdict, and the
// table the summary prints. Synthetic runs with known answers.
import t from 'tap'
import {
  BaselineRefused, compareWithBaseline, formatComparison, parseBaseline, parseThreshold, type BaselineCommand,
} from '../../lib/bench/compare.js'
import { formatJson } from '../../lib/bench/report.js'
import { report } from './helpers.js'

/** Ten runs around `ms` (± 2%), in a fixed order. */
const around = (ms: number) => [1, 0.99, 1.02, 0.98, 1.01, 1.0, 0.985, 1.015, 0.995, 1.005].map(k => ms * k)
const RSS = [2048, 2048, 2052, 2048, 2056]

const baselineReport = report([['fast', around(1), RSS], ['steady', around(10), RSS], ['gone', around(5), RSS]])
const baseline = parseBaseline(formatJson(baselineReport))

t.test('parseBaseline: what --compare reads of a --json report', async t => {
  t.same(baseline.map(b => b.command), ['fast', 'steady', 'gone'])
  t.same(baseline[0].runs.wallMs, around(1))
  t.same(baseline[0].runs.maxRSSKiB, [...RSS, ...RSS])
  const withNull = JSON.parse(formatJson(baselineReport))
  withNull.commands[0].runs[0].figures.maxRSSKiB = null // NaN, as JSON writes it
  withNull.commands[1].name = 'steady one'
  const parsed = parseBaseline(JSON.stringify(withNull))
  t.ok(Number.isNaN(parsed[0].runs.maxRSSKiB[0]), 'null is a figure the run lacked')
  t.equal(parsed[1].name, 'steady one', 'a command name is kept')

  const json = (edit: (r: { schema?: unknown; commands: Array<Record<string, unknown>> }) => void) => {
    const r = JSON.parse(formatJson(baselineReport))
    edit(r)
    return JSON.stringify(r)
  }
  const rows: Array<[string, string, RegExp]> = [
    ['empty', '', /^is not JSON \(/],
    ['cut short', '{"commands": [', /^is not JSON \(/],
    ['an array', '[1, 2]', /^is not a 'tileharness bench --json' report \(no schema; expected 'tileharness-bench\/1'\)$/],
    ['null', 'null', /^is not a 'tileharness bench --json' report \(no schema/],
    ['another schema', '{"schema": "hyperfine"}', /^is not a 'tileharness bench --json' report \(schema "hyperfine"; expected 'tileharness-bench\/1'\)$/],
    ['no commands', json(r => { r.commands = [] }), /^has no commands$/],
    ['a command without its string', json(r => { delete r.commands[1].command }), /^has no command string at commands\[1\]$/],
    ['runs not an array', json(r => { r.commands[0].runs = {} }), /^has no runs at commands\[0\]$/],
    ['a figure not a number', json(r => { (r.commands[2].runs as Array<{ figures: Record<string, unknown> }>)[3].figures.wallMs = '1 ms' }), /^has no figures\.wallMs at commands\[2\]\.runs\[3\]$/],
    ['a run null', json(r => { (r.commands[0].runs as unknown[])[0] = null }), /^has no figures\.wallMs at commands\[0\]\.runs\[0\]$/],
  ]
  for (const [label, text, message] of rows) t.throws(() => parseBaseline(text), { constructor: BaselineRefused, message }, label)
})

t.test('compareWithBaseline: each baseline command serves once, and only a command with its parameter values', async t => {
  // A scan under one -c name (its commands differ only in their parameters) and two commands
  // alike: each now-command meets its own baseline command, in order, never the first one twice.
  const scan = (medians: [number, number]) => {
    const r = report([['sleeper', around(medians[0]), RSS], ['sleeper', around(medians[1]), RSS], ['twin', around(3), RSS], ['twin', around(30), RSS]])
    r.commands[0].parameters = { d: '0.01' }
    r.commands[1].parameters = { d: '0.06' }
    return r
  }
  const base = parseBaseline(formatJson(scan([10, 60])))
  t.same(base.map(b => b.parameters), [{ d: '0.01' }, { d: '0.06' }, {}, {}], 'the parameters are read')
  const c = compareWithBaseline(base, 'b', scan([10, 60]))
  t.same(c.commands.map(x => x.figures[0].baseline.median), [10, 60, 3, 30], 'each against its own: the scan by its values, the twins in order')
  t.same({ regressed: c.regressed, onlyInBaseline: c.onlyInBaseline, notInBaseline: c.notInBaseline }, { regressed: false, onlyInBaseline: [], notInBaseline: [] })
  // The same names with other values are other commands.
  const other = scan([10, 60])
  other.commands[1].parameters = { d: '0.5' }
  const o = compareWithBaseline(base, 'b', other)
  t.same({ notInBaseline: o.notInBaseline, onlyInBaseline: o.onlyInBaseline }, { notInBaseline: ['sleeper'], onlyInBaseline: ['sleeper'] })
  // A baseline's parameters that are not an object of strings: refused, naming where.
  const bad = JSON.parse(formatJson(scan([10, 60])))
  bad.commands[1].parameters = { d: 0.06 }
  t.throws(() => parseBaseline(JSON.stringify(bad)), { constructor: BaselineRefused, message: 'has parameters that are not an object of strings at commands[1]' })
})

t.test('parseThreshold: a percentage', async t => {
  const rows: Array<[string, number | null]> = [
    ['5%', 0.05], ['10%', 0.1], ['12.5%', 0.125], ['0%', 0], ['5', 0.05], ['150%', 1.5],
    ['', null], ['%', null], ['-5%', null], ['5 %', null], ['0.1x', null], ['five', null], ['1e2%', null],
  ]
  for (const [text, want] of rows) t.equal(parseThreshold(text), want, JSON.stringify(text))
})

t.test('compareWithBaseline: the verdict per figure', async t => {
  const now = report([
    ['fast', around(3), RSS], // 3x slower, every run: a regression
    ['steady', around(10.3), RSS.map(k => k * 1.5)], // +3% wall (within 5%), +50% max RSS: a regression
    ['new', around(1), RSS],
  ])
  const c = compareWithBaseline(baseline, 'base.json', now)
  t.match(c, { baseline: 'base.json', threshold: 0.05, alpha: 0.05, test: /Mann-Whitney/, regressed: true, notInBaseline: ['new'], onlyInBaseline: ['gone'] })
  const [fast, steady] = c.commands
  t.match(fast.figures[0], { figure: 'wallMs', verdict: 'slower', regression: true, baseline: { runs: 10, median: 1 }, now: { runs: 10, median: 3 } })
  t.ok(Math.abs(fast.figures[0].change - 2) < 1e-12, '+200%')
  t.ok(fast.figures[0].test.pValue < 0.001, 'ten runs against ten, no overlap: p far below 0.05')
  t.match(fast.figures[1], { figure: 'maxRSSKiB', verdict: 'within threshold', regression: false, change: 0 })
  t.match(steady.figures[0], { verdict: 'within threshold', regression: false })
  t.match(steady.figures[1], { verdict: 'larger', regression: true })

  // Better by far: faster and smaller, not regressions.
  const better = compareWithBaseline(baseline, 'b', report([['steady', around(2), RSS.map(k => k / 2)]]))
  t.match(better.commands[0].figures, [{ verdict: 'faster', regression: false }, { verdict: 'smaller', regression: false }])
  t.equal(better.regressed, false)

  // The same runs again: no change at all.
  const same = compareWithBaseline(baseline, 'b', report([['fast', around(1), RSS]]))
  t.match(same.commands[0].figures, [{ change: 0, verdict: 'within threshold' }, { change: 0, verdict: 'within threshold' }])
  t.equal(same.regressed, false)

  // Worse by more than the threshold, but three noisy runs against three: not significant.
  const noisy = compareWithBaseline(parseBaseline(formatJson(report([['x', [1, 5, 9], RSS]]))), 'b', report([['x', [2, 6, 10], RSS]]))
  t.match(noisy.commands[0].figures[0], { verdict: 'not significant', regression: false })
  t.ok(noisy.commands[0].figures[0].change > 0.05)

  // A higher threshold lets the 3x through.
  t.equal(compareWithBaseline(baseline, 'b', report([['fast', around(3), RSS]]), 2.5).regressed, false, '--threshold 250%')

  // No figure to compare: no data, not a regression.
  const empty: BaselineCommand[] = [{ command: 'fast', runs: { wallMs: [NaN, NaN], maxRSSKiB: [NaN, NaN] } }]
  t.match(compareWithBaseline(empty, 'b', report([['fast', around(3), RSS]])).commands[0].figures, [{ verdict: 'no data', regression: false }, { verdict: 'no data' }])
})

t.test('commands are matched by name when both have one, else by the command string', async t => {
  const named: BaselineCommand[] = [
    { command: 'prog --old-flag', name: 'prog', runs: { wallMs: around(1), maxRSSKiB: RSS } },
    { command: 'other', runs: { wallMs: around(1), maxRSSKiB: RSS } },
  ]
  const now = report([['prog --new-flag', around(1), RSS], ['other', around(1), RSS]])
  ;(now.commands[0] as { name?: string }).name = 'prog'
  const c = compareWithBaseline(named, 'b', now)
  t.same(c.commands.map(x => [x.command, x.baselineCommand]), [['prog', 'prog'], ['other', 'other']])
  t.same([c.notInBaseline, c.onlyInBaseline], [[], []])
})

t.test('formatComparison: baseline vs now, one row per command and figure, the verdicts', async t => {
  const now = report([['fast', around(3), RSS], ['steady', around(10), RSS], ['new', around(1), RSS]])
  const text = formatComparison(compareWithBaseline(baseline, 'base.json', now, 0.1))
  const lines = text.split('\n')
  t.match(lines[0], /^Compared with the baseline 'base\.json' \(medians; a regression is 10% worse and significant;$/)
  t.match(lines[1], /^ {2}p: Mann-Whitney U test, two-sided/)
  t.match(lines[2], /^ {2}command +figure +baseline +now +change +p {2}verdict$/)
  t.match(text, /^ {2}fast +wall +1\.00 ms +3\.00 ms +\+200% +<0\.001 {2}slower \(regression\)$/m)
  t.match(text, /^ {2}fast +max RSS +2\.00 MiB +2\.00 MiB +\+0\.00% +1\.00 {2}within threshold$/m)
  t.match(text, /^ {2}steady +wall +10\.0 ms +10\.0 ms +\+0\.00% +1\.00 {2}within threshold$/m)
  t.match(text, /^ {2}not in the baseline, not compared: 'new'$/m)
  t.match(text, /^ {2}only in the baseline: 'gone'$/m)
  t.match(text, /^ {2}regressed: fast wall \(exit status 1\)$/m)
  t.match(formatComparison(compareWithBaseline(baseline, 'b', report([['fast', around(1), RSS]]))), /^ {2}no regression$/m)
})
