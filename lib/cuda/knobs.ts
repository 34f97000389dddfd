// The ptxas knob file (docs/toolchain-contract.md, "Knob files"). tileiras only forwards the path
// and ptxas does the parsing; this is a validator that lets the ptxas adapter reject a malformed
// file before spawning, with ptxas's own fatal messages.
//
//   <arbitrary preamble bytes>
//   [knobs]
//   <command-stream>
//
// ptxas reads the whole file into one NUL-terminated buffer and strstr()s for the case-sensitive
// "[knobs]"; everything before it is discarded, and nothing after a NUL byte is ever seen. After
// the header, commands are separated by whitespace, `~` or `;;`. A command is
//   INJECTSTRING <body> ;;   raw bytes up to the next `;;` (whitespace, `~` included)
//   WHEN=<clause>            a condition that scopes the next assignment; a `;` ends the clause
//                            and starts that assignment, as in WHEN=SH=0x1234;Knob=1
//   key=value | key          an assignment; a bare key sets a flag
// Identifiers are case-insensitive.
//
// Which type a knob has lives in ptxas's internal table, which we do not have. Without one, the
// value's type is inferred from its spelling (int, range N..M, list N1,N2, float, else string) and
// only the grammar is checked. With one (`knobTypes`), unknown names are "Invalid knob identifier"
// and each value is parsed as ptxas parses that type (strtol base 10, sscanf "%f"), with its
// messages.

import { readFileSync } from 'node:fs'
import { optionKeys, ownOptions, requireObject, requireString } from '../errors.js'

/** ptxas's fatal knob messages, verbatim (%s = the knobs file path or the knob text). */
export const KNOB_MESSAGES = {
  headerNotFound: 'Knobs header not found in %s',
  invalidIdentifier: 'Invalid knob identifier',
  invalidKnob: 'Invalid knob specified (%s)',
  invalidType: 'Invalid knob type',
  emptyInteger: 'Empty integer value',
  emptyRange: 'Empty integer range value',
  emptyList: 'Empty integer list value',
  listNotInteger: 'Integer list value is not an integer',
  listEnd: "End of integer range value is not ',' or null character",
  emptyFloat: 'Empty floating point value',
  invalidFloat: 'Invalid floating point value',
  emptyDouble: 'Empty double value',
  invalidDouble: 'Invalid double value',
} as const

export const KNOBS_HEADER = '[knobs]'

export type KnobErrorCode =
  | 'header-not-found'
  | 'invalid-identifier'
  | 'invalid-knob'
  | 'invalid-type'
  | 'invalid-value'
  | 'unreadable'

/** The only error parseKnobFile and validateKnobFile throw for any text. */
export class KnobFileError extends Error {
  readonly code: KnobErrorCode
  /** The knobs file path, or the name given to parseKnobFile. */
  readonly source: string
  /** Offset of the offending command in the text (latin1: byte offset of the file); -1 if none. */
  readonly offset: number
  /** 1-based line and column of `offset`; 0 when there is no offset. */
  readonly line: number
  readonly column: number
  /** The offending command as written, '' if none. */
  readonly command: string

  constructor(code: KnobErrorCode, message: string, at: { source: string; text?: string; offset?: number; command?: string }) {
    super(message)
    this.name = 'KnobFileError'
    this.code = code
    this.source = at.source
    this.offset = at.offset ?? -1
    this.command = at.command ?? ''
    const { line, column } = at.text !== undefined && this.offset >= 0 ? lineColumn(at.text, this.offset) : { line: 0, column: 0 }
    this.line = line
    this.column = column
  }
}

/** The value types of ptxas's knob table that a caller can declare. */
export type KnobType = 'bool' | 'int' | 'range' | 'list' | 'float' | 'double' | 'string'
export const KNOB_TYPES: readonly KnobType[] = ['bool', 'int', 'range', 'list', 'float', 'double', 'string']

export type KnobValue =
  /** A bare key whose type is not declared. */
  | { type: 'flag' }
  | { type: 'bool'; value: boolean; text: string | null }
  /** strtol semantics: decimal only, parsing stops at the first non-digit ("0x10" is 0). */
  | { type: 'int'; value: number; text: string }
  /** Either side may be omitted: INT_MIN / INT_MAX. A single number N is N..N. */
  | { type: 'range'; low: number; high: number; text: string }
  | { type: 'list'; values: number[]; text: string }
  | { type: 'float' | 'double'; value: number; text: string }
  | { type: 'string'; value: string }

export type KnobCommand =
  | { kind: 'assign'; key: string; name: string; value: KnobValue; when: string[]; offset: number; text: string }
  | { kind: 'when'; clause: string; offset: number; text: string }
  | { kind: 'inject'; body: string; offset: number; text: string }

export interface KnobFile {
  source: string
  /** Everything before [knobs] (discarded by ptxas). */
  preamble: string
  commands: KnobCommand[]
}

export interface ParseKnobOptions {
  /** Name used in messages ("Knobs header not found in <source>"); default '<input>'. */
  source?: string
  /** ptxas's type per knob name (case-insensitive). When given, names not in it are rejected. */
  knobTypes?: Readonly<Record<string, string>>
}

const PARSE_KNOB_KEYS = optionKeys<ParseKnobOptions>({ source: true, knobTypes: true })
const VALIDATE_KNOB_KEYS = optionKeys<Omit<ParseKnobOptions, 'source'>>({ knobTypes: true })

const INT_MIN = -2147483648
const INT_MAX = 2147483647
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Parse the text of a knobs file; throws KnobFileError for anything ptxas would reject. */
export function parseKnobFile(text: string, given: ParseKnobOptions = {}): KnobFile {
  requireString('text', text)
  // Its own fields only: an inherited knobTypes would refuse every knob it does not list.
  const options = ownOptions('options', given, PARSE_KNOB_KEYS)
  const source = options.source ?? '<input>'
  requireString('source', source)
  const knobTypes = normalizeKnobTypes(options.knobTypes)

  // ptxas sees a C string: nothing after the first NUL exists.
  const nul = text.indexOf('\0')
  const visible = nul < 0 ? text : text.slice(0, nul)
  const header = visible.indexOf(KNOBS_HEADER)
  if (header < 0) {
    throw new KnobFileError('header-not-found', KNOB_MESSAGES.headerNotFound.replace('%s', source), { source })
  }
  const bodyStart = header + KNOBS_HEADER.length
  const commands = parseCommandStream(visible, bodyStart, { source, text, knobTypes })
  return { source, preamble: visible.slice(0, header), commands }
}

/**
 * Read and parse a knobs file the way ptxas reads it (as bytes; offsets are byte offsets).
 * Throws KnobFileError, with code 'unreadable' when the file cannot be read.
 */
export function validateKnobFile(path: string, given: Omit<ParseKnobOptions, 'source'> = {}): KnobFile {
  requireString('path', path)
  // The name is the path: a `source` is no option here.
  const options = ownOptions('options', given, VALIDATE_KNOB_KEYS)
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO'
    throw new KnobFileError('unreadable', `Cannot read knobs file ${path} (${code})`, { source: path })
  }
  return parseKnobFile(bytes.toString('latin1'), { ...options, source: path })
}

interface ParseContext {
  source: string
  text: string
  knobTypes: Map<string, string> | null
}

/** Length of the command separator at `i`: whitespace or `~` (1), `;;` (2), or 0. */
function separatorAt(s: string, i: number): number {
  const c = s.charCodeAt(i)
  // space \t \n \v \f \r, as isspace() in the C locale
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x7e) return 1
  if (c === 0x3b && s.charCodeAt(i + 1) === 0x3b) return 2
  return 0
}

function parseCommandStream(s: string, from: number, ctx: ParseContext): KnobCommand[] {
  const commands: KnobCommand[] = []
  let pendingWhen: string[] = []
  let i = from
  // Where the word being read ends, once found: a WHEN= clause hands the rest of its word on as
  // the next command, which is not scanned again (a chain of clauses stays linear in its length).
  let wordEnd = -1
  while (i < s.length) {
    const sep = separatorAt(s, i)
    if (sep > 0) {
      i += sep
      continue
    }
    const start = i
    if (i < wordEnd) i = wordEnd
    else while (i < s.length && separatorAt(s, i) === 0) i++
    wordEnd = i
    const word = s.slice(start, i)

    if (word.length === 12 && word.toUpperCase() === 'INJECTSTRING') {
      const end = s.indexOf(';;', i)
      if (end < 0) throw invalidKnob(ctx, s.slice(start), start)
      const body = s.slice(i, end).replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '')
      commands.push({ kind: 'inject', body, offset: start, text: s.slice(start, end + 2) })
      i = end + 2
      continue
    }

    if (/^when=/i.test(word)) {
      const semicolon = word.indexOf(';', 5)
      const clause = semicolon < 0 ? word.slice(5) : word.slice(5, semicolon)
      const text = semicolon < 0 ? word : word.slice(0, semicolon)
      commands.push({ kind: 'when', clause, offset: start, text })
      pendingWhen.push(clause)
      // The rest after `;` is the assignment this clause scopes: parse it as the next command.
      if (semicolon >= 0) i = start + semicolon + 1
      continue
    }

    const eq = word.indexOf('=')
    const key = eq < 0 ? word : word.slice(0, eq)
    const valueText = eq < 0 ? null : word.slice(eq + 1)
    if (key === '') throw invalidKnob(ctx, word, start)
    if (!IDENTIFIER.test(key)) throw knobError(ctx, 'invalid-identifier', KNOB_MESSAGES.invalidIdentifier, word, start)
    let value: KnobValue
    if (ctx.knobTypes !== null) {
      const declared = ctx.knobTypes.get(key.toLowerCase())
      if (declared === undefined) throw knobError(ctx, 'invalid-identifier', KNOB_MESSAGES.invalidIdentifier, word, start)
      if (!(KNOB_TYPES as readonly string[]).includes(declared)) {
        throw knobError(ctx, 'invalid-type', KNOB_MESSAGES.invalidType, word, start)
      }
      value = parseDeclared(declared as KnobType, valueText, ctx, word, start)
    } else {
      value = inferValue(valueText, ctx, word, start)
    }
    commands.push({ kind: 'assign', key, name: key.toLowerCase(), value, when: pendingWhen, offset: start, text: word })
    pendingWhen = []
  }
  return commands
}

/** A value whose knob type is unknown: typed by its spelling; only lists are strictly checked. */
function inferValue(text: string | null, ctx: ParseContext, word: string, at: number): KnobValue {
  if (text === null) return { type: 'flag' }
  if (/^[+-]?\d+$/.test(text)) return { type: 'int', value: Number.parseInt(text, 10), text }
  if (/^([+-]?\d+)?\.\.([+-]?\d+)?$/.test(text)) return parseRange(text, ctx, word, at)
  // A comma after a leading number can only be an integer list (opcode lists start with a name).
  if (/^[-\d]/.test(text) && text.includes(',')) return parseList(text, ctx, word, at)
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+(?=[eE]))([eE][+-]?\d+)?$/.test(text)) return { type: 'float', value: Number(text), text }
  return { type: 'string', value: text }
}

function parseDeclared(type: KnobType, text: string | null, ctx: ParseContext, word: string, at: number): KnobValue {
  const fail = (message: string) => knobError(ctx, 'invalid-value', message, word, at)
  switch (type) {
    case 'bool':
      return { type: 'bool', value: text === null ? true : strtol(text, 0).value !== 0, text }
    case 'int':
      if (text === null || text === '') throw fail(KNOB_MESSAGES.emptyInteger)
      return { type: 'int', value: strtol(text, 0).value, text }
    case 'range':
      if (text === null || text === '') throw fail(KNOB_MESSAGES.emptyRange)
      return parseRange(text, ctx, word, at)
    case 'list':
      if (text === null || text === '') throw fail(KNOB_MESSAGES.emptyList)
      return parseList(text, ctx, word, at)
    case 'float':
    case 'double': {
      const isFloat = type === 'float'
      if (text === null || text === '') throw fail(isFloat ? KNOB_MESSAGES.emptyFloat : KNOB_MESSAGES.emptyDouble)
      const value = scanFloat(text)
      if (value === null) throw fail(isFloat ? KNOB_MESSAGES.invalidFloat : KNOB_MESSAGES.invalidDouble)
      return { type, value: isFloat ? Math.fround(value) : value, text }
    }
    case 'string':
      return { type: 'string', value: text ?? '' }
  }
}

/** N..M, either side optional (INT_MIN / INT_MAX); a lone N is N..N. */
function parseRange(text: string, ctx: ParseContext, word: string, at: number): KnobValue {
  const low = strtol(text, 0)
  if (low.end === text.length) return { type: 'range', low: low.value, high: low.value, text }
  if (text.startsWith('..', low.end)) {
    const highStart = low.end + 2
    const high = strtol(text, highStart)
    if (high.end === text.length) {
      return {
        type: 'range',
        low: low.end === 0 ? INT_MIN : low.value,
        high: high.end === highStart ? INT_MAX : high.value,
        text,
      }
    }
  }
  throw invalidKnob(ctx, word, at)
}

/** N1,N2,...: each element starts with a digit or '-', and is followed by ',' or the end. */
function parseList(text: string, ctx: ParseContext, word: string, at: number): KnobValue {
  const values: number[] = []
  let i = 0
  for (;;) {
    if (!/[-\d]/.test(text[i] ?? '')) throw knobError(ctx, 'invalid-value', KNOB_MESSAGES.listNotInteger, word, at)
    const { value, end } = strtol(text, i)
    values.push(value)
    if (end === text.length) break
    // A trailing comma is rejected with the same message as any other bad terminator.
    if (text[end] !== ',' || end + 1 === text.length) {
      throw knobError(ctx, 'invalid-value', KNOB_MESSAGES.listEnd, word, at)
    }
    i = end + 1
  }
  return { type: 'list', values, text }
}

/** strtol(s + from, &end, 10): optional sign, decimal digits; no digits = 0 with end = from. */
function strtol(s: string, from: number): { value: number; end: number } {
  const m = /^[+-]?\d+/.exec(s.slice(from))
  if (m === null) return { value: 0, end: from }
  return { value: Number.parseInt(m[0], 10), end: from + m[0].length }
}

/** sscanf(s, "%f") == 1: the longest C floating-point prefix, or null when there is none. */
function scanFloat(s: string): number | null {
  const t = s.replace(/^[ \t\n\v\f\r]+/, '')
  const m = /^([+-]?)(?:(inf(?:inity)?)|(nan)(?:\([0-9A-Za-z_]*\))?|0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))/i.exec(t)
  if (m === null) return null
  const sign = m[1] === '-' ? -1 : 1
  if (m[2] !== undefined) return sign * Infinity
  if (m[3] !== undefined) return NaN
  if (m[7] !== undefined) return sign * Number(m[7])
  // Hex float: 0x<int>.<frac>p<exp>; with no hex digits at all sscanf reads just the "0".
  const int = m[4] ?? ''
  const frac = m[5] ?? ''
  if (int === '' && frac === '') return sign * 0
  let mantissa = int === '' ? 0 : Number.parseInt(int, 16)
  if (frac !== '') mantissa += Number.parseInt(frac, 16) / 16 ** frac.length
  return sign * mantissa * 2 ** Number(m[6] ?? 0)
}

function normalizeKnobTypes(table: Readonly<Record<string, string>> | undefined): Map<string, string> | null {
  if (table === undefined) return null
  requireObject('knobTypes', table)
  return new Map(Object.entries(table).map(([name, type]) => [name.toLowerCase(), type]))
}

function invalidKnob(ctx: ParseContext, word: string, at: number): KnobFileError {
  return knobError(ctx, 'invalid-knob', KNOB_MESSAGES.invalidKnob.replace('%s', word), word, at)
}

function knobError(ctx: ParseContext, code: KnobErrorCode, message: string, command: string, offset: number): KnobFileError {
  return new KnobFileError(code, message, { source: ctx.source, text: ctx.text, offset, command })
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, column: offset - lineStart + 1 }
}
