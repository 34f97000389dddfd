// `tileharness bench --svg`: the per-run distribution of wall time and max RSS, one panel each,
// one row per command. Each row is a box plot (quartiles, median, whiskers to the furthest runs
// inside Tukey's fences) over a strip of every run, with the command's name to its left, so the
// reader never looks up a legend. Plain SVG 1.1, no scripts, no external fonts.
import { displayUnit, formatValue, type DisplayUnit, type FigureKind } from './figures.js'
import type { BenchReport } from './report.js'
import { OUTLIER_RULE, type Summary } from './statistics.js'

export interface StripSeries {
  name: string
  values: readonly number[]
  summary: Summary
}

export interface StripPanel {
  /** e.g. 'Wall time'. */
  title: string
  /** e.g. 'wall time'; the unit follows it in brackets. */
  axisLabel: string
  kind: FigureKind
  series: StripSeries[]
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf']
const WIDTH = 780
const MARGIN = 16
const ROW = 34
const NAME_CHARS = 36
/** Width of one character of the 12 px monospace names, a little generous. */
const CHAR_WIDTH = 7.4
const VALUE_LABEL_WIDTH = 124

export function escapeXml(text: string): string {
  // Characters XML 1.0 forbids outright are replaced: a command name can contain anything.
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

function shorten(name: string): string {
  const chars = [...name]
  return chars.length <= NAME_CHARS ? name : chars.slice(0, NAME_CHARS - 1).join('') + '…'
}

const num = (v: number) => (Math.round(v * 10) / 10).toString()

/** Round steps (1, 2, 2.5, 5 x 10^k) covering [lo, hi] with about `target` intervals. */
export function niceTicks(lo: number, hi: number, target = 6): { lo: number; hi: number; step: number; ticks: number[] } {
  if (!(hi > lo)) {
    const span = hi === 0 ? 1 : Math.abs(hi) * 0.5
    lo = Math.max(0, lo - span)
    hi = hi + span
  }
  const rough = (hi - lo) / target
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 2.5, 5, 10].map(m => m * power).find(s => s >= rough)!
  const first = Math.floor(lo / step + 1e-9) * step
  const last = Math.ceil(hi / step - 1e-9) * step
  const ticks: number[] = []
  for (let v = first; v <= last + step / 2; v += step) ticks.push(Number(v.toPrecision(12)))
  return { lo: first, hi: last, step, ticks }
}

/** A tick value with as many decimals as its step needs (0.25 steps: two; 5 steps: none). */
function tickLabel(value: number, step: number): string {
  let decimals = 0
  while (decimals < 6 && Math.abs(Math.round(step * 10 ** decimals) - step * 10 ** decimals) > 1e-9 * 10 ** decimals) decimals++
  return value.toFixed(decimals)
}

interface Axis {
  /** Where a displayed value sits, 0 (left) to 1 (right). */
  at(value: number): number
  ticks: Array<{ value: number; label: string }>
  /** Said after the axis label when the axis is not a plain one from zero. */
  note: string
}

/** Values spanning more than this factor get a log axis, so that one slow run cannot flatten the rest. */
const LOG_SPAN = 20

function chooseAxis(lo: number, hi: number): Axis {
  if (lo > 0 && hi / lo > LOG_SPAN) {
    const values: number[] = []
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of [1, 2, 5]) values.push(Number((m * 10 ** e).toPrecision(3)))
    }
    const first = values.filter(v => v <= lo).pop()!
    const last = values.find(v => v >= hi)!
    const l0 = Math.log10(first), l1 = Math.log10(last)
    return {
      at: v => (Math.log10(v) - l0) / (l1 - l0),
      ticks: values.filter(v => v >= first && v <= last).map(v => ({ value: v, label: String(v) })),
      note: ', log scale',
    }
  }
  // From zero the eye can compare commands by length; when every value is in the top half of the
  // range that would squash the spread flat, so the axis starts near the data instead.
  const fromZero = lo <= 0.5 * hi || hi <= 0
  const nice = niceTicks(fromZero ? 0 : lo, hi)
  return {
    at: v => (v - nice.lo) / (nice.hi - nice.lo),
    ticks: nice.ticks.map(v => ({ value: v, label: tickLabel(v, nice.step) })),
    note: fromZero ? '' : ' — axis does not start at zero',
  }
}

/** Deterministic vertical jitter in [-0.5, 0.5): the golden-ratio sequence spreads runs evenly. */
function jitter(i: number): number {
  return ((i * 0.6180339887) % 1) - 0.5
}

function panelSvg(panel: StripPanel, top: number, x0: number, x1: number): { svg: string[]; height: number } {
  const all = panel.series.flatMap(s => [...s.values])
  const dataLo = Math.min(...all), dataHi = Math.max(...all)
  const unit: DisplayUnit = displayUnit(panel.kind, dataHi)
  const axis = chooseAxis(dataLo / unit.divisor, dataHi / unit.divisor)
  const x = (raw: number) => x0 + axis.at(raw / unit.divisor) * (x1 - x0)
  const out: string[] = []
  const titleY = top + 16
  out.push(`<text x="${MARGIN}" y="${titleY}" class="panel">${escapeXml(panel.title)}</text>`)
  const rowsTop = top + 28
  const rowsBottom = rowsTop + panel.series.length * ROW
  // Grid and axis.
  out.push('<g class="axis">')
  for (const tick of axis.ticks) {
    const tx = num(x(tick.value * unit.divisor))
    out.push(`<line x1="${tx}" y1="${rowsTop}" x2="${tx}" y2="${rowsBottom}" class="grid"/>`)
    out.push(`<line x1="${tx}" y1="${rowsBottom}" x2="${tx}" y2="${rowsBottom + 5}"/>`)
    out.push(`<text x="${tx}" y="${rowsBottom + 18}" text-anchor="middle">${tick.label}</text>`)
  }
  out.push(`<line x1="${num(x0)}" y1="${rowsBottom}" x2="${num(x1)}" y2="${rowsBottom}"/>`)
  const unitName = unit.suffix || 'count'
  out.push(`<text x="${num((x0 + x1) / 2)}" y="${rowsBottom + 36}" text-anchor="middle" class="label">${escapeXml(`${panel.axisLabel} (${unitName})${axis.note}`)}</text>`)
  out.push('</g>')
  panel.series.forEach((s, row) => {
    const color = PALETTE[row % PALETTE.length]
    const cy = rowsTop + row * ROW + ROW / 2
    const sm = s.summary
    const inside = s.values.filter(v => v >= sm.lowerFence && v <= sm.upperFence)
    const whiskerLo = Math.min(...inside), whiskerHi = Math.max(...inside)
    const outliers = new Set(sm.outliers)
    out.push(`<g class="series">`)
    out.push(`<title>${escapeXml(`${s.name}: median ${formatValue(sm.median, unit, panel.kind)}, ${s.values.length} runs`)}</title>`)
    out.push(`<text x="${num(x0 - 10)}" y="${cy + 4}" text-anchor="end" class="name">${escapeXml(shorten(s.name))}</text>`)
    out.push(`<line x1="${num(x(whiskerLo))}" y1="${cy}" x2="${num(x(whiskerHi))}" y2="${cy}" stroke="${color}"/>`)
    for (const w of [whiskerLo, whiskerHi]) out.push(`<line x1="${num(x(w))}" y1="${cy - 6}" x2="${num(x(w))}" y2="${cy + 6}" stroke="${color}"/>`)
    const boxX = x(sm.q1), boxW = Math.max(1, x(sm.q3) - boxX)
    out.push(`<rect x="${num(boxX)}" y="${cy - 9}" width="${num(boxW)}" height="18" fill="${color}" fill-opacity="0.18" stroke="${color}"/>`)
    out.push(`<line x1="${num(x(sm.median))}" y1="${cy - 11}" x2="${num(x(sm.median))}" y2="${cy + 11}" stroke="${color}" stroke-width="3"/>`)
    s.values.forEach((v, i) => {
      const cx = num(x(v)), dy = num(cy + jitter(i) * 14)
      out.push(outliers.has(i)
        ? `<circle cx="${cx}" cy="${dy}" r="3.5" fill="#fff" stroke="${color}" stroke-width="1.5"/>`
        : `<circle cx="${cx}" cy="${dy}" r="2.4" fill="${color}" fill-opacity="0.75"/>`)
    })
    out.push(`<text x="${num(x1 + 10)}" y="${cy + 4}" class="value">${escapeXml(`median ${formatValue(sm.median, unit, panel.kind)}`)}</text>`)
    out.push('</g>')
  })
  return { svg: out, height: rowsBottom + 44 - top }
}

/** A stand-alone SVG document of `panels`, stacked, under `title` and its `notes` (one line each). */
export function stripPlotSvg(title: string, notes: string[], panels: StripPanel[]): string {
  const longest = Math.max(8, ...panels.flatMap(p => p.series.map(s => [...shorten(s.name)].length)))
  const x0 = MARGIN + Math.ceil(longest * CHAR_WIDTH) + 14
  const x1 = WIDTH - MARGIN - VALUE_LABEL_WIDTH
  const body: string[] = []
  const legend = [
    'Dots: runs. Box: quartiles; thick line: median; whiskers: furthest runs inside the fences.',
    `Hollow dots: outliers, ${OUTLIER_RULE}.`,
  ]
  const lines = [...notes, ...legend]
  let y = 42 + lines.length * 16
  for (const panel of panels) {
    const p = panelSvg(panel, y, x0, x1)
    body.push(...p.svg)
    y += p.height + 14
  }
  const height = y
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img">`,
    `<title>${escapeXml(title)}</title>`,
    '<style>',
    'text { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; font-size: 12px; fill: #222; }',
    '.title { font-size: 16px; font-weight: bold; } .panel { font-size: 14px; font-weight: bold; }',
    '.note { fill: #555; } .name { font-family: ui-monospace, Menlo, Consolas, monospace; } .value { fill: #444; }',
    '.axis line { stroke: #444; } .axis line.grid { stroke: #ddd; } .label { fill: #444; }',
    '</style>',
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="${MARGIN}" y="24" class="title">${escapeXml(title)}</text>`,
    ...lines.map((line, i) => `<text x="${MARGIN}" y="${44 + i * 16}" class="note">${escapeXml(line)}</text>`),
    ...body,
    '</svg>',
    '',
  ].join('\n')
}

/** The two-panel figure of a benchmark: wall time and max RSS per run, per command. */
export function benchSvg(report: BenchReport): string {
  const panel = (title: string, axisLabel: string, kind: FigureKind, key: 'wallMs' | 'maxRSSKiB'): StripPanel => ({
    title,
    axisLabel,
    kind,
    series: report.commands.map(c => ({ name: c.command, values: c.runs.map(r => r.figures[key]), summary: c.summary[key] })),
  })
  const runs = report.commands[0]?.runs.length ?? 0
  const how = report.options.measure
    ? 'max RSS is the command\'s own (through the measuring helper)'
    : 'max RSS as the parent sees it (--no-measure: at least the parent\'s own)'
  return stripPlotSvg('tileharness bench', [`${runs} runs per command, interleaved A B A B; ${how}.`], [
    panel('Wall time', 'wall time', 'time', 'wallMs'),
    panel('Max RSS', 'max RSS', 'memory', 'maxRSSKiB'),
  ])
}
