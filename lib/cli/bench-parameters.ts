// hyperfine's parameterized benchmarks for `tileharness bench`: `-P NAME LO HI` (a scan of numbers,
// `-D STEP` apart, 1 by default), `-L NAME a,b,c` (a list), and `{NAME}` in a command replaced by
// each value. Several parameters give their cartesian product, the first given varying slowest.
// Read, checked and expanded here; bench.ts asks only for the combinations and substitutes them.
import { UsageError } from './options.js'

/** A parameter as given on the command line, before -D is known. */
export type ParameterOption =
  | { kind: 'scan'; option: string; name: string; lo: string; hi: string }
  | { kind: 'list'; option: string; name: string; list: string }

export interface Parameter {
  name: string
  values: string[]
}

/** One value of every parameter, by name, in the order they were given. */
export type ParameterValues = Record<string, string>

/** The most benchmarks one command line may ask for: a slip of -D (0.0001 for 1) is not a plan. */
export const MAX_COMBINATIONS = 10000

// Decimal numbers as hyperfine reads them: no exponents, no infinities, no hex.
const NUMBER = /^([-+]?)(\d*)(?:\.(\d*))?$/

/** A decimal as an integer of units 10^-scale, so a scan adds exactly (0.1 + 0.2 is 0.3 here). */
interface Fixed { units: bigint; scale: number }

function parseNumber(text: string, what: string): Fixed {
  const m = NUMBER.exec(text)
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) throw new UsageError(`invalid ${what} '${text}' (a number)`)
  const fraction = m[3] ?? ''
  return { units: BigInt(`${m[1] === '-' ? '-' : ''}${m[2] || '0'}${fraction}`), scale: fraction.length }
}

function rescale(n: Fixed, scale: number): bigint {
  return n.units * 10n ** BigInt(scale - n.scale)
}

/** `units` at `scale` as a decimal with exactly `scale` fraction digits (-D 0.25 from 0: 0.00, 0.25, ...). */
function formatFixed(units: bigint, scale: number): string {
  const sign = units < 0n ? '-' : ''
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0')
  return scale === 0 ? sign + digits : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}

/** The values of `-P NAME LO HI` with `step` (-D's text, or null: 1, and LO and HI whole numbers). */
function scanValues(p: Extract<ParameterOption, { kind: 'scan' }>, step: { option: string; text: string } | null): string[] {
  const lo = parseNumber(p.lo, `${p.option} LO`)
  const hi = parseNumber(p.hi, `${p.option} HI`)
  const delta = step === null ? { units: 1n, scale: 0 } : parseNumber(step.text, step.option)
  if (step === null) {
    for (const [end, text] of [[lo, p.lo], [hi, p.hi]] as const) {
      if (end.scale > 0) throw new UsageError(`invalid ${p.option} '${text}' (a whole number, unless a step is given with -D)`)
    }
  }
  if (delta.units <= 0n) throw new UsageError(`invalid ${step!.option} '${step!.text}' (a step > 0)`)
  const scale = Math.max(lo.scale, hi.scale, delta.scale)
  const [from, to, by] = [rescale(lo, scale), rescale(hi, scale), rescale(delta, scale)]
  if (from > to) throw new UsageError(`${p.option} ${p.name}: LO ${p.lo} is above HI ${p.hi}`)
  const count = (to - from) / by + 1n
  if (count > BigInt(MAX_COMBINATIONS)) throw new UsageError(`${p.option} ${p.name} ${p.lo} ${p.hi}: ${count} values (at most ${MAX_COMBINATIONS})`)
  const values: string[] = []
  for (let v = from; v <= to; v += by) values.push(formatFixed(v, scale))
  return values
}

/**
 * The parameters `given` (in command-line order) with `step` (-D) applied to the scan: checked
 * (a name given once, never empty nor holding a brace; -D only with -P), values expanded.
 */
export function parametersOf(given: readonly ParameterOption[], step: { option: string; text: string } | null): Parameter[] {
  const scans = given.filter(p => p.kind === 'scan')
  if (step !== null && scans.length === 0) throw new UsageError(`option ${step.option} needs a parameter scan (-P NAME LO HI)`)
  if (step !== null && scans.length > 1) throw new UsageError(`option ${step.option} with ${scans.length} parameter scans: give -P once`)
  const seen = new Set<string>()
  const parameters = given.map(p => {
    if (p.name === '' || /[{}]/.test(p.name)) throw new UsageError(`invalid ${p.option} name '${p.name}' (not empty, no braces)`)
    if (seen.has(p.name)) throw new UsageError(`parameter '${p.name}' given twice`)
    seen.add(p.name)
    return { name: p.name, values: p.kind === 'scan' ? scanValues(p, step) : p.list.split(',') }
  })
  const total = parameters.reduce((n, p) => n * p.values.length, 1)
  if (total > MAX_COMBINATIONS) throw new UsageError(`the parameters give ${total} combinations (at most ${MAX_COMBINATIONS})`)
  return parameters
}

/** Every combination of the parameters' values, the first parameter varying slowest; one empty
 * combination when there are no parameters. */
export function combinations(parameters: readonly Parameter[]): ParameterValues[] {
  let out: ParameterValues[] = [{}]
  for (const p of parameters) out = out.flatMap(partial => p.values.map(value => ({ ...partial, [p.name]: value })))
  return out
}

/** `template` with each `{NAME}` of `values` replaced, in one pass (a value holding `{x}` stays as
 * it is); a `{name}` that is no parameter is left alone, as hyperfine leaves it. */
export function substitute(template: string, values: ParameterValues): string {
  return template.replace(/\{([^{}]+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? values[name] : whole))
}
