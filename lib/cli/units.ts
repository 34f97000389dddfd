// Duration and size parsers shared by the CLI commands: `500ms`, `5s`, `2m`, `1h`; `512K`, `2G`.

import { native } from '../spawn/native.js'
import { MAX_DELAY_MS } from '../spawn/normalize.js'
import { UsageError } from './options.js'

const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60000, h: 3600000 }

/** Milliseconds from `500ms`, `5s`, `1.5s`, `2m`, `1h`; a bare number is seconds (as coreutils timeout). */
export function parseDuration(text: string, what = 'duration'): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)?$/.exec(text.trim())
  if (!m) throw new UsageError(`invalid ${what} '${text}' (use e.g. 500ms, 5s, 2m)`)
  const ms = Number(m[1]) * DURATION_MS[m[2] ?? 's']
  // Every duration here becomes a timer, and a timer goes no further.
  if (!(ms <= MAX_DELAY_MS)) throw new UsageError(`invalid ${what} '${text}' (at most ${MAX_DELAY_MS}ms, about 24.8 days)`)
  return ms
}

const SIZE: Record<string, number> = { '': 1, B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }

/**
 * Bytes (or a count) from `512K`, `2G`, `1.5M`, `4096`, `10B`, `1KiB`, `1KB`; K/M/G/T are powers of
 * 1024. A whole number: `1.5` (of a count such as nofile) is refused, not rounded.
 */
export function parseSize(text: string, what = 'size'): number {
  const m = /^(\d+)(?:\.(\d+))?(?:([KMGT])(?:i?B)?|B)?$/i.exec(text.trim())
  if (!m) throw new UsageError(`invalid ${what} '${text}' (use e.g. 4096, 512K, 2G)`)
  // Whole or not is decided on the digits as written, not on a double ('64.0000000000000001' is
  // 64 as a double): the fraction times the unit must be a whole number of bytes.
  const unit = BigInt(SIZE[(m[3] ?? '').toUpperCase()])
  const fraction = m[2] ?? ''
  const scaled = BigInt(m[1] + fraction) * unit
  const divisor = 10n ** BigInt(fraction.length)
  if (scaled % divisor !== 0n) throw new UsageError(`invalid ${what} '${text}' (not a whole number)`)
  const value = scaled / divisor
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`invalid ${what} '${text}': too large`)
  return Number(value)
}

/** `name=VALUE` or `name=SOFT:HARD`, each value a size or `unlimited`. */
export function parseRlimit(text: string): [string, number | 'unlimited' | { soft: number | 'unlimited'; hard: number | 'unlimited' }] {
  const eq = text.indexOf('=')
  if (eq <= 0) throw new UsageError(`invalid --rlimit '${text}' (use NAME=VALUE, e.g. as=2G, nofile=256, core=unlimited)`)
  const name = text.slice(0, eq).toLowerCase().replace(/^rlimit_/, '')
  // The addon's own table of the C library's RLIMIT_* names, so the command line can name no other.
  if (!Object.hasOwn(native.rlimits, name)) throw new UsageError(`invalid --rlimit '${text}' (no resource '${name}'; one of ${Object.keys(native.rlimits).join(', ')})`)
  const one = (v: string) => (v === 'unlimited' || v === 'infinity' ? 'unlimited' as const : parseSize(v, `--rlimit ${name} value`))
  const value = text.slice(eq + 1)
  const colon = value.indexOf(':')
  if (colon < 0) return [name, one(value)]
  const soft = one(value.slice(0, colon)), hard = one(value.slice(colon + 1))
  if (hard !== 'unlimited' && (soft === 'unlimited' || soft > hard)) {
    throw new UsageError(`invalid --rlimit '${text}' (the soft limit ${soft} is above the hard limit ${hard})`)
  }
  return [name, { soft, hard }]
}

/** A CPU list as taskset -c takes it: `1`, `0,2`, `0-3,6`; the CPUs, ascending, each below `limit`. */
export function parseCpuList(text: string, option: string, limit: number): number[] {
  const cpus = new Set<number>()
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part)
    const lo = m ? Number(m[1]) : NaN
    const hi = m ? Number(m[2] ?? m[1]) : NaN
    if (!(lo <= hi && hi < limit)) throw new UsageError(`invalid ${option} '${text}' (CPU numbers below ${limit}: 1, 0,2 or 0-3)`)
    for (let cpu = lo; cpu <= hi; cpu++) cpus.add(cpu)
  }
  return [...cpus].sort((a, b) => a - b)
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`
}
