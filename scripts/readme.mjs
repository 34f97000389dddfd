// The README's generated parts, each from its one source: the command synopses and compile's
// exit-status table from the CLI's own usage texts (dist/cli/, so npm run build:ts first), every
// performance figure from bench/RESULTS.md (npm run bench, npm run bench:scale -- --results).
//
// A block stands between `<!-- generated: NAME -->` and `<!-- /generated -->` on lines of their
// own; a figure inside a sentence between `<!-- figure: NAME -->` and `<!-- /figure -->`.
//
//   node scripts/readme.mjs                  rewrite README.md
//   node scripts/readme.mjs --check          exit 1 naming each part that differs from its source
//   ... --readme FILE --results FILE         another README or RESULTS.md (the test's copies)
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { COMMANDS, synopsis } from '../dist/cli/commands.js'
import { COMPILE_EXIT_STATUSES } from '../dist/cli/compile.js'
import { RESULTS_FILE, sectionOf } from './bench/results-file.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const option = name => { const i = process.argv.indexOf(name); return i < 0 ? null : process.argv[i + 1] }
/** Each command's usage text, by name (a command's module loads on demand). */
const USAGES = Object.fromEntries(await Promise.all(Object.entries(COMMANDS).map(async ([name, command]) => [name, (await command.load()).usage])))
const readmeFile = option('--readme') ?? path.join(ROOT, 'README.md')
const resultsFile = option('--results') ?? RESULTS_FILE

// ---- bench/RESULTS.md, read as tables ---------------------------------------------------------

/** The rows of every Markdown table in `text`, each an array of trimmed cells (rules left out). */
function tableRows(text) {
  return text.split('\n').filter(line => line.startsWith('|') && !/^\|\s*:?-/.test(line))
    .map(line => line.slice(1, -1).split(/(?<!\\)\|/).map(cell => cell.trim()))
}

function need(value, what) {
  if (value === undefined || value === null || value === '') throw new Error(`bench/RESULTS.md has no ${what}`)
  return value
}

/** `271 µs (mean 281 µs) — 1.08x` -> { value: '271 µs', ratio: '1.08x' }. */
function cell(text) {
  const m = /^([\d.,]+ \S+)(?: \(mean [^)]*\))?(?: — ([\d.]+x))?/.exec(text)
  return { value: need(m?.[1], `figure in '${text}'`), ratio: m?.[2] ?? null }
}

/** A ratio as the README prints it: two decimals below 10x, whole numbers from there. */
function ratio(text) {
  const x = Number.parseFloat(need(text, 'ratio'))
  return x >= 10 ? `${Math.round(x)}x` : `${x.toFixed(2)}x`
}

function microseconds(value) {
  const [n, unit] = value.split(' ')
  return Number.parseFloat(n) * { 'µs': 1, ms: 1000, s: 1e6 }[unit]
}

function thousands(text) {
  return text.replace(/\d{4,}/g, n => Number(n).toLocaleString('en-US'))
}

const THROUGHPUT_HEADING = '3. Throughput: 1000 `/bin/true`, 32 in flight'

function readResults(file) {
  const doc = fs.readFileSync(file, 'utf8')
  const section = heading => need(sectionOf(doc, heading), `section '## ${heading}'`)
  const rowsOf = (heading, label) => tableRows(section(heading)).filter(r => label.test(r[0]))
  const sizes = rowsOf('1. Spawn+wait of `/bin/true`, sync API', /MiB/)
  const [row1, gap] = [sizes.slice(0, 3), sizes.slice(3, 6)]
  const async = rowsOf('2. The same through the async API, and the fork path', /MiB/)
  // Row 2's tables in order: spawnChild by size, where its gap is, the parent's CPU, the fork path.
  const [asyncRows, asyncGap, asyncCpu, forkRows] = [async.slice(0, 3), async.slice(3, 6), async.slice(6, 9), async.slice(9, 12)]
  need(forkRows.length === 3 ? forkRows : null, "row 2's four tables of three sizes")
  const find = (heading, label) => need(tableRows(section(heading)).find(r => r[0].includes(label)), `row '${label}' in '${heading}'`)
  const machine = need(/^\*\*Machine:\*\* (\d+) cores \(.*?\), ([\d.]+) GiB RAM, Linux (\d+\.\d+)[^,]*, glibc ([\d.]+), Node v([\d.]+)/m.exec(doc), 'machine line')
  const minutes = need(/ in ([\d.]+) min\./.exec(doc), 'run time')[1]
  const scale = tableRows(sectionOf(doc, 'Async API at scale') ?? '').filter(r => r[0] !== 'figure')
  const accuracy = tableRows(sectionOf(doc, '7. `tileharness bench` against hyperfine') ?? '').filter(r => r[0].startsWith('`'))
  const scaleMachine = /^## Async API at scale\n\n\*\*Machine:\*\* (\d+) cores \(.*?\), ([\d.]+) GiB RAM, Linux [^,]*, Node v([\d.]+), [^,]*(?:, load average ([\d.]+))?/m.exec(doc)
  const farmHeading = need(/^## (9\. Compile farm: .*)$/m.exec(doc), 'row 9 heading')[1]
  const delayHeading = need(/^## (8\. Event-loop delay .*)$/m.exec(doc), 'row 8 heading')[1]
  // Row 8's verdict line: the target as run.mjs states it, and whether it was met.
  const delayTarget = need(/^Target: tileharness's p99 delay (≤ [\d.]+ ms) .*\*\*(met|MISSED)\*\*$/m.exec(section(delayHeading)), 'row 8 target line')
  const asyncSection = section('2. The same through the async API, and the fork path')
  // Row 3's two tables: the batch against the floor, then where its gap is.
  const throughputGap = need(rowsOf(THROUGHPUT_HEADING, /MB/)[1], "row 3's breakdown")
  return { row1, gap, asyncRows, asyncGap, asyncCpu, asyncSection, forkRows, throughputGap, find, machine, minutes, scale, scaleMachine, accuracy, farmHeading, delayHeading, delayTarget }
}

// ---- what each generated part says ----------------------------------------------------------

function sizeLabel(text) {
  const mib = Number.parseFloat(text)
  return mib >= 1024 && mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`
}

function codeBlock(text) {
  return ['```', text, '```'].join('\n')
}

function parts(results) {
  const r = results
  const columns = r.row1.map(row => row[0])
  const spawnSync4g = cell(r.row1[2][3]).value
  const harnessMax = Math.max(...r.row1.map(row => microseconds(cell(row[2]).value)))
  const range = values => {
    const sorted = values.map(v => Number.parseFloat(v)).sort((a, b) => a - b)
    return sorted[0] === sorted.at(-1) ? ratio(sorted[0]) : `${ratio(sorted[0])} to ${ratio(sorted.at(-1))}`
  }
  const throughput = r.find(THROUGHPUT_HEADING, 'MB')
  // size, (a) floor -a -j, (a′) floor -A -j, (n) the minimal addon, (b) native.spawnAsync, spawnChild
  const throughputGap = (i) => need(/ — ([\d.]+x)$/.exec(r.throughputGap[i])?.[1], `ratio in '${r.throughputGap[i]}'`)
  const captureRow = label => r.find('4. Capture: 1 GiB through a stdout pipe', label)
  const capture = label => cell(captureRow(label)[1]).value
  const lateness = label => r.find('5. Timeout accuracy: 200 `sleep 10`, 50 ms timeouts, 100 at once (async API)', label)
  const exited = lateness('tileharness: exited')
  const delivered = lateness('tileharness: result delivered to JS')
  const nodeTimer = lateness('child_process.spawn({ timeout })')
  const ptxas = r.find('6. ptxas through the harness vs run directly', 'through spawnChildSync')
  const perSecond = /\((\d+) spawns\/s\)/.exec(throughput[1])?.[1]
  const delay = label => r.find(r.delayHeading, label)
  const farm = label => r.find(r.farmHeading, label)
  const blocks = {
    'synopsis run': codeBlock(synopsis(USAGES.run)),
    'synopsis bench': codeBlock(synopsis(USAGES.bench)),
    'synopsis compile': codeBlock(synopsis(USAGES.compile)),
    'compile exit statuses': [
      '| status | when |',
      '| --- | --- |',
      ...COMPILE_EXIT_STATUSES.map(([status, when]) => `| ${status} | ${when} |`),
    ].join('\n'),
    'spawn table': [
      `| spawn + wait of \`/bin/true\`, per spawn | ${columns.map(c => `${sizeLabel(c)} parent`).join(' | ')} |`,
      `| --- | ${columns.map(() => '---').join(' | ')} |`,
      `| C floor (posix_spawn + wait4) | ${r.row1.map(row => cell(row[1]).value).join(' | ')} |`,
      `| \`spawnChildSync\` (target ≤ 1.10x) | ${r.row1.map(row => `${cell(row[2]).value} (${ratio(cell(row[2]).ratio)})`).join(' | ')} |`,
      `| \`spawnChildSync\`, posix_spawn path (\`launcher: 'posix_spawn'\`) | ${r.forkRows.map(row => ratio(row[5])).join(' | ')} |`,
      `| \`spawnChild\` (sequential awaits) | ${r.asyncRows.map(row => ratio(cell(row[2]).ratio)).join(' | ')} |`,
      `| \`child_process.spawnSync\` | ${r.row1.map(row => ratio(cell(row[3]).ratio)).join(' | ')} |`,
      `| \`execaSync\` | ${r.row1.map(row => ratio(cell(row[4]).ratio)).join(' | ')} |`,
    ].join('\n'),
    'other rows': [
      '| other rows | result |',
      '| --- | --- |',
      `| throughput, 1,000 \`/bin/true\` with 32 in flight | ${cell(throughput[1]).value} with \`spawnChild\` (${Number(perSecond).toLocaleString('en-US')}/s), ${cell(throughput[2]).value} with \`child_process.spawn\`, ${cell(throughput[3]).value} for the C floor (target: tileharness ${throughput[5]}); of that floor, the async system calls in C are ${throughputGap(1)}, with the exit clock's thread ${throughputGap(2)}, the same launch from a minimal addon ${throughputGap(3)}, and the addon's call alone from Node ${throughputGap(4)} |`,
      `| capture 1 GiB through a stdout pipe, kept in memory | ${thousands(capture('spawnChildSync'))} (\`spawnChildSync\`; against the floor: ${captureRow('spawnChildSync')[4]}), ${thousands(capture('child_process.spawnSync'))} (\`child_process.spawnSync\`), ${thousands(capture('floor:'))} (the floor, \`head \\| cat > /dev/null\`, which keeps nothing), ${thousands(capture('floor -c'))} (the harness's capture done in C: what keeping the bytes costs the kernel) |`,
      `| timeout lateness, 200 \`sleep 10\` with 50 ms deadlines, 100 at once | killed child exited: median ${exited[1]}, p99 ${exited[3]}; result in JS: median ${delivered[1]} (\`child_process\`'s 'exit' event: median ${nodeTimer[1]}); deadlines are never early |`,
      `| ptxas through the harness vs run directly | ${ratio(ptxas[2])} |`,
      `| fork path vs posix_spawn path at 4 GiB (target ≤ 1.5x) | ${ratio(r.forkRows[2][2])} |`,
      `| ${r.farmHeading.replace(/^9\. Compile farm: /, 'compile farm: ')} | \`compileMany\` ${farm('compileMany')[1]} vs \`xargs -P ptxas\` ${farm('xargs')[1]} (${farm('compileMany')[4]} CPU; target: wall ${farm('compileMany')[3]}) |`,
      `| event-loop delay from a 4 GiB parent, 100 children in flight, one start per turn | \`spawnChild\`: p50 ${delay('tileharness')[4]}, p99 ${delay('tileharness')[5]}; \`child_process.spawn\`: p50 ${delay('child_process')[4]}, p99 ${delay('child_process')[5]}; floor (this loop idle, the same children started by \`xargs\`): p99 ${delay('floor')[5]} (target: p99 ${r.delayTarget[1]}: **${r.delayTarget[2]}**) |`,
    ].join('\n'),
    'bench accuracy': r.accuracy.length === 0
      ? '(no row 7 in bench/RESULTS.md yet: npm run bench, with hyperfine installed)'
      : [
          '| median of one run | `hyperfine -N` | `tileharness bench` | `bench --no-measure` |',
          '| --- | --- | --- | --- |',
          ...r.accuracy.map(row => `| ${row[0].replace(/ \(\d+\)$/, '')} | ${row[1]} | ${row[2]} | ${row[3]} |`),
        ].join('\n'),
    'scale table': r.scale.length === 0
      ? '(no "## Async API at scale" section in bench/RESULTS.md yet: npm run bench:scale -- --results)'
      : ['| figure | value |', '| --- | --- |', ...r.scale.map(([k, v]) => `| ${k} | ${v} |`)].join('\n'),
  }
  const figures = {
    'spawnSync at 4 GiB': `${Math.round(microseconds(spawnSync4g) / 1000)} ms`,
    'spawnChildSync at any size': `${(harnessMax / 1000).toFixed(1)} ms`,
    'bench minutes': `${r.minutes} min`,
    machine: `${r.machine[1]} cores, ${r.machine[2]} GiB, Linux ${r.machine[3]}, glibc ${r.machine[4]}, Node ${r.machine[5]}`,
    'addon call ratios': range(r.gap.map(row => cell(row[2]).ratio)),
    'replayed syscalls ratios': range(r.gap.map(row => cell(row[1]).ratio)),
    'async ratios': range(r.asyncRows.map(row => cell(row[2]).ratio)),
    // Row 2's breakdown: size, (a) floor -a, (a′) floor -A, (n) the minimal addon, (b) native.spawnAsync, spawnChild, (c), (c) minus (b).
    'async addon call ratios': range(r.asyncGap.map(row => cell(row[4]).ratio)),
    'async minimal addon ratios': range(r.asyncGap.map(row => cell(row[3]).ratio)),
    // Row 2's parent CPU: size, floor, (a), (a′), (n), (b), spawnChild.
    'async parent cpu': (() => {
      const column = i => {
        const values = r.asyncCpu.map(row => Number(need(/^(\d+) µs$/.exec(row[i])?.[1], `CPU in '${row[i]}'`))).sort((a, b) => a - b)
        return values[0] === values.at(-1) ? `${values[0]} µs` : `${values[0]} to ${values.at(-1)} µs`
      }
      return `${column(1)} for the C floor, ${column(3)} for its async sequence with the exit clock's thread, ${column(4)} for the minimal addon, ${column(6)} for \`spawnChild\``
    })(),
    'async replayed syscalls ratios': range(r.asyncGap.map(row => cell(row[1]).ratio)),
    'async replayed syscalls with the clock ratios': range(r.asyncGap.map(row => cell(row[2]).ratio)),
    'post-launch work added': (() => {
      const added = r.asyncGap.map(row => Number(need(/^\+(\d+) µs$/.exec(row[7])?.[1], `added time in '${row[7]}'`))).sort((a, b) => a - b)
      const work = need(/\(c\) \(b\) \+ (\d+) µs of JS after the launch/.exec(r.asyncSection)?.[1], "row 2's post-launch work column")
      return `${work} µs of JavaScript run right after each launch adds ${added[0] === added.at(-1) ? added[0] : `${added[0]} to ${added.at(-1)}`} µs`
    })(),
    'scale machine': r.scaleMachine === null ? '(not measured yet)'
      : `${r.scaleMachine[1]} cores, ${Math.round(Number(r.scaleMachine[2]))} GiB, Node ${r.scaleMachine[3]}${r.scaleMachine[4] === undefined ? '' : `, load average ${r.scaleMachine[4]} from other work`}`,
  }
  return { blocks, figures }
}

// ---- the README's marked places ---------------------------------------------------------------

const BLOCK = /(<!-- generated: ([^>]+?) -->\n)([\s\S]*?)(<!-- \/generated -->)/g
const FIGURE = /(<!-- figure: ([^>]+?) -->)([\s\S]*?)(<!-- \/figure -->)/g

/** The README with every marked place filled from `source`; `stale` lists those that changed. */
export function render(readme, source) {
  const stale = []
  const seen = new Set()
  const fill = (kind, table) => (_, open, name, old, close) => {
    if (!Object.hasOwn(table, name)) throw new Error(`README.md: no source for the ${kind} '${name}'`)
    seen.add(`${kind} ${name}`)
    if (old !== table[name]) stale.push(`${kind} '${name}'`)
    return open + table[name] + close
  }
  const blocks = Object.fromEntries(Object.entries(source.blocks).map(([name, text]) => [name, text + '\n']))
  const text = readme.replace(BLOCK, fill('block', blocks)).replace(FIGURE, fill('figure', source.figures))
  const unused = [...Object.keys(source.blocks).map(n => `block ${n}`), ...Object.keys(source.figures).map(n => `figure ${n}`)].filter(k => !seen.has(k))
  for (const k of unused) stale.push(`${k.replace(' ', " '")}' (not in the README)`)
  return { text, stale }
}

const readme = fs.readFileSync(readmeFile, 'utf8')
const { text, stale } = render(readme, parts(readResults(resultsFile)))
if (process.argv.includes('--check')) {
  if (stale.length > 0) {
    console.error(`${path.relative(process.cwd(), readmeFile)} differs from its sources in: ${stale.join(', ')} (node scripts/readme.mjs rewrites it)`)
    process.exit(1)
  }
  console.log(`${path.relative(process.cwd(), readmeFile)}: every generated part matches its source`)
} else if (text !== readme) {
  fs.writeFileSync(readmeFile, text)
  console.log(`rewrote ${stale.join(', ')} in ${path.relative(process.cwd(), readmeFile)}`)
}
