// --runs-csv: every measured run, one row each, in raw units (ms, KiB, counts, as the JSON's
// `runs`), for a spreadsheet or a data frame, where the JSON's nesting is in the way. Parameters
// are columns `parameter_NAME`, as in hyperfine's CSV export.
import { FIGURES } from './figures.js'
import { csvField, parameterNames, type BenchReport } from './report.js'

export function formatRunsCsv(report: BenchReport): string {
  const names = parameterNames(report)
  const rows = [['command', ...names.map(n => `parameter_${n}`), 'round', ...FIGURES.map(f => f.key), 'exitCode', 'signal', 'timedOut'].map(csvField).join(',')]
  for (const c of report.commands) {
    const parameters = names.map(n => csvField(c.parameters[n] ?? ''))
    for (const r of c.runs) {
      rows.push([csvField(c.command), ...parameters, r.round, ...FIGURES.map(f => r.figures[f.key]), r.exitCode ?? '', r.signal ?? '', r.timedOut].join(','))
    }
  }
  return rows.join('\n') + '\n'
}
