// Fuzzing the parsers that take outside text: splitCommand, the knob-file parser, the CLI's
// duration/size/rlimit parsers and `tileharness run`'s option parser. Whatever the input, each
// returns a well-formed value or throws its own typed error; nothing else escapes, nothing hangs.
// Short form here; TILEHARNESS_FUZZ=long (npm run fuzz:long) runs each property for minutes.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { quoteForSplit, splitCommand } from '../../lib/cuda/index.js'
import { KNOB_TYPES, KnobFileError, parseKnobFile, validateKnobFile } from '../../lib/cuda/knobs.js'
import { parseRunArgs } from '../../lib/cli/run.js'
import { HelpRequested, UsageError } from '../../lib/cli/options.js'
import { parseDuration, parseRlimit, parseSize } from '../../lib/cli/units.js'
import { MAX_DELAY_MS, normalizeSpec } from '../../lib/spawn/normalize.js'
import { tempDir } from '../helpers.js'
import { fuzz } from './budget.js'

/** The typed errors of the CUDA layer's argument checks (lib/errors.ts). */
function isCudaArgError(e: unknown, field: string): boolean {
  const err = e as { code?: unknown; field?: unknown }
  return (e instanceof TypeError || e instanceof RangeError) &&
    ['ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_OUT_OF_RANGE'].includes(err.code as string) && err.field === field
}

/** The harness's validation errors (lib/errors.ts). */
function isHarnessError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code
  return (e instanceof TypeError || e instanceof RangeError) && typeof code === 'string' && /^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE|OUT_OF_RANGE|UNKNOWN_SIGNAL|INVALID_FD|INCOMPATIBLE_OPTION_PAIR)$/.test(code)
}

// Text with every kind of character the parsers treat specially, plus anything at all.
const shellish = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\t', '\n', "'", '"', '\\', '$', '`', '\0', 'é', '😀', '#', ';'), maxLength: 40 })
const anyText = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), shellish)

t.test('splitCommand', async t => {
  await fuzz(t, 'any input: words or a typed error', fc.property(fc.oneof(anyText, fc.anything()), input => {
    let words: string[]
    try {
      words = splitCommand(input as string, 'cmd')
    } catch (e) {
      if (isCudaArgError(e, 'cmd')) return
      throw e
    }
    if (!Array.isArray(words) || words.some(w => typeof w !== 'string' || w.includes('\0'))) throw new Error(`bad words ${JSON.stringify(words)}`)
  }), 3000)

  await fuzz(t, 'text without quotes or backslashes splits on blanks', fc.property(
    fc.string({ unit: fc.constantFrom('a', 'é', '-', '=', '$', '*', ' ', '\t', '\n'), maxLength: 40 }), input => {
      const expected = input.split(/[ \t\n]+/).filter(w => w !== '')
      return JSON.stringify(splitCommand(input)) === JSON.stringify(expected)
    }), 2000)

  await fuzz(t, 'quoteForSplit round-trips any NUL-free string list', fc.property(
    fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }).filter(s => !s.includes('\0')), { maxLength: 6 }), words => {
      return JSON.stringify(splitCommand(words.map(quoteForSplit).join(' '))) === JSON.stringify(words)
    }), 2000)
})

// Knob files: a grammar-shaped generator (so the parser gets past the header and into every
// command kind) mixed with raw text.
const ident = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/)
const knobValue = fc.oneof(
  fc.integer().map(String), fc.stringMatching(/^[+-]?\d{0,12}$/), fc.stringMatching(/^-?\d{0,4}\.\.-?\d{0,4}$/),
  fc.stringMatching(/^[-\d][\d,-]{0,12}$/), fc.stringMatching(/^[+-]?(\d+\.\d*|\.\d+|0[xX][0-9a-fA-F.]*[pP]?-?\d?|inf|INF|nan|NaN)$/),
  fc.string({ maxLength: 10 }),
)
const separator = fc.constantFrom(' ', '\n', '\t', '~', ';;', '\r\n', '\v', '  ')
const command = fc.oneof(
  fc.tuple(ident, fc.option(knobValue, { nil: undefined })).map(([k, v]) => (v === undefined ? k : `${k}=${v}`)),
  fc.tuple(fc.string({ maxLength: 12 }), ident, knobValue).map(([c, k, v]) => `WHEN=${c};${k}=${v}`),
  fc.string({ maxLength: 20 }).map(body => `INJECTSTRING ${body};;`),
  fc.constantFrom('INJECTSTRING', 'WHEN=', '=', '==', ';', '[knobs]', '\0'),
  fc.string({ maxLength: 8 }),
)
const knobText = fc.oneof(
  fc.tuple(fc.string({ maxLength: 10 }), fc.array(fc.tuple(command, separator), { maxLength: 10 }))
    .map(([pre, cmds]) => `${pre}[knobs]${cmds.map(([c, s]) => c + s).join('')}`),
  fc.string({ unit: 'binary', maxLength: 120 }).map(s => `[knobs]${s}`),
  anyText,
)
const knobTypes = fc.option(fc.dictionary(fc.oneof(ident, fc.string({ maxLength: 4 })), fc.oneof(fc.constantFrom(...KNOB_TYPES), fc.string({ maxLength: 5 })), { maxKeys: 6 }), { nil: undefined })

function checkKnobOutcome(text: string, parse: () => ReturnType<typeof parseKnobFile>): void {
  let file
  try {
    file = parse()
  } catch (e) {
    if (!(e instanceof KnobFileError)) throw e
    if (e.offset < -1 || e.offset > text.length) throw new Error(`offset ${e.offset} outside the text`)
    if (e.offset >= 0 && !(e.line >= 1 && e.column >= 1)) throw new Error(`line/column ${e.line}:${e.column} for offset ${e.offset}`)
    return
  }
  for (const c of file.commands) {
    if (!text.startsWith(c.text, c.offset)) throw new Error(`command ${JSON.stringify(c.text)} is not at offset ${c.offset}`)
  }
}

t.test('knob files', async t => {
  await fuzz(t, 'parseKnobFile: a KnobFile or a KnobFileError', fc.property(knobText, knobTypes, (text, types) => {
    checkKnobOutcome(text, () => parseKnobFile(text, types === undefined ? {} : { knobTypes: types }))
  }), 4000)

  await fuzz(t, 'parseKnobFile: arguments of the wrong type are a TypeError', fc.property(fc.anything(), fc.anything(), (text, options) => {
    try {
      parseKnobFile(text as string, options as object)
    } catch (e) {
      if (e instanceof KnobFileError || e instanceof TypeError) return
      throw e
    }
  }), 1000)

  const dir = tempDir(t, 'tileharness-fuzz-knobs-')
  const file = path.join(dir, 'knobs')
  await fuzz(t, 'validateKnobFile: the same on the bytes of a file', fc.property(fc.uint8Array({ maxLength: 200 }), knobText, (bytes, text) => {
    const content = Buffer.concat([Buffer.from(text, 'latin1'), bytes])
    fs.writeFileSync(file, content)
    checkKnobOutcome(content.toString('latin1'), () => validateKnobFile(file))
  }), 500)
})

t.test('CLI units', async t => {
  const unitText = fc.oneof(
    anyText,
    fc.tuple(fc.stringMatching(/^\s{0,2}(\d{0,20}(\.\d{0,20})?|\.\d{1,4})$/), fc.constantFrom('', 'ms', 's', 'm', 'h', 'K', 'M', 'G', 'T', 'B', 'KiB', 'kB', 'x', 'e3'), fc.constantFrom('', ' ', '\n'))
      .map(([n, u, ws]) => n + u + ws),
  )
  const usageOnly = (f: () => void) => {
    try {
      f()
    } catch (e) {
      if (e instanceof UsageError) return
      throw e
    }
  }
  const refused = (f: () => unknown) => {
    try {
      f()
      return false
    } catch (e) {
      if (e instanceof UsageError) return true
      throw e
    }
  }
  await fuzz(t, 'parseDuration: a finite number >= 0 or a UsageError', fc.property(unitText, text => usageOnly(() => {
    const ms = parseDuration(text)
    if (!(Number.isFinite(ms) && ms >= 0 && ms <= MAX_DELAY_MS)) throw new Error(`parseDuration(${JSON.stringify(text)}) = ${ms}`)
  })), 4000)
  await fuzz(t, 'parseSize: a safe integer >= 0 or a UsageError', fc.property(unitText, text => usageOnly(() => {
    const n = parseSize(text)
    if (!(Number.isSafeInteger(n) && n >= 0)) throw new Error(`parseSize(${JSON.stringify(text)}) = ${n}`)
  })), 4000)
  await fuzz(t, 'parseDuration and parseSize read back what they are given', fc.property(
    fc.nat({ max: 1e9 }), fc.constantFrom<[string, number]>(['ms', 1], ['s', 1000], ['', 1000], ['m', 60000], ['h', 3600000]),
    fc.nat({ max: 1 << 22 }), fc.constantFrom<[string, number]>(['', 1], ['K', 1024], ['k', 1024], ['M', 1024 ** 2], ['G', 1024 ** 3], ['KiB', 1024]),
    // A duration a timer cannot take is refused, not cut short.
    (n, [du, df], s, [su, sf]) => (n * df <= MAX_DELAY_MS ? parseDuration(`${n}${du}`) === n * df : refused(() => parseDuration(`${n}${du}`))) &&
      parseSize(`${s}${su}`) === s * sf,
  ), 2000)
  const limitValue = fc.oneof(unitText, fc.constantFrom('unlimited', 'infinity'))
  await fuzz(t, 'parseRlimit: [name, value] or a UsageError', fc.property(
    fc.oneof(anyText, fc.tuple(fc.oneof(ident, fc.constantFrom('as', 'RLIMIT_NOFILE', 'core', '')), limitValue, fc.option(limitValue, { nil: undefined }))
      .map(([n, a, b]) => (b === undefined ? `${n}=${a}` : `${n}=${a}:${b}`))),
    text => usageOnly(() => {
      const [name, value] = parseRlimit(text)
      const ok = (v: unknown) => v === 'unlimited' || (Number.isSafeInteger(v) && (v as number) >= 0)
      const ordered = (v: { soft: unknown; hard: unknown }) => v.hard === 'unlimited' || (v.soft !== 'unlimited' && (v.soft as number) <= (v.hard as number))
      if (typeof name !== 'string' || !(ok(value) || (typeof value === 'object' && ok(value.soft) && ok(value.hard) && ordered(value)))) {
        throw new Error(`parseRlimit(${JSON.stringify(text)}) = ${JSON.stringify([name, value])}`)
      }
    })), 4000)
})

t.test('tileharness run: option parsing, then spec validation', async t => {
  const option = fc.oneof(
    fc.constantFrom('--timeout', '--kill-after', '--signal', '--rlimit', '--cwd', '--env', '--launcher', '--setsid',
      '--merge-stderr', '--usage', '--json', '--help', '-h', '--', '-', '--bogus', '--timeout=', '--rlimit=nofile=64', '--signal=TERM', '--env=A=1', '--launcher=fork'),
    fc.constantFrom('5s', '100ms', 'x', 'TERM', 'SIGKILL', 'KILL', 'nofile=64', 'as=2G:4G', 'core=unlimited', 'bogus=1', '/tmp', 'A=B', '=', 'fork', 'posix_spawn', 'true'),
    anyText,
  )
  await fuzz(t, 'parseRunArgs: options, a UsageError or -h/--help; the spec: valid or a typed error', fc.property(fc.array(option, { maxLength: 8 }), argv => {
    let options
    try {
      options = parseRunArgs(argv)
    } catch (e) {
      if (e instanceof UsageError || e instanceof HelpRequested) return
      throw e
    }
    try {
      normalizeSpec(options.spec, 'async')
    } catch (e) {
      if (!isHarnessError(e)) throw e
    }
  }), 3000)
})
