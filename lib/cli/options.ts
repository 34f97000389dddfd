// The one option parser of the `tileharness` commands. node:util's parseArgs splits the command
// line into tokens (--name, --name=value, --name value, -n value, -n10, grouped -ih, `--`); this
// layer holds what parseArgs leaves to its callers: each command's table of options, one-line
// usage errors in coreutils' words ("unknown option --x", "option --x needs a value"), options
// given more than once (each occurrence reaches the handler, in order), an option whose value is
// optional, an option that takes several words (`bench -P NAME LO HI`), and operands that end the
// options (`run`'s command and its arguments).

import { parseArgs } from 'node:util'

/**
 * A bad command line: the command's message, then coreutils' "Try 'tileharness CMD --help' for more
 * information.", on stderr; exit with the command's usage status (125; `compile`: 2).
 */
export class UsageError extends Error {
  code = 'ERR_USAGE'
}

/** -h or --help on a command line: its usage goes to stdout and the command exits 0, as coreutils' do. */
export class HelpRequested extends Error {
  code = 'ERR_HELP_REQUESTED'
}

/** Every command's -h, --help; the parser throws HelpRequested where it comes, before later options are read. */
export const HELP_OPTION: OptionSpec = { kind: 'flag', short: 'h' }

export interface OptionSpec {
  /**
   * 'value': takes a value (`--x V`, `--x=V`, `-xV`); 'flag': takes none; 'optional': takes one
   * inline (`--x=V`) or the next argument when `takesNext` accepts it, else none.
   */
  kind: 'value' | 'flag' | 'optional'
  /** A one-letter alias: `-n` for `--runs`. */
  short?: string
  /** Other long spellings of the same option (`--output-file` for `--output`); the handler gets the table's name. */
  aliases?: readonly string[]
  takesNext?: (next: string) => boolean
  /**
   * 'value' only: how many words it takes (default 1), the first as any value, the rest the
   * arguments that follow, taken as they are, so a `-5` among them is a word, not an option.
   */
  words?: number
}

/** A command's options, by long name without the dashes. */
export type OptionTable = Readonly<Record<string, OptionSpec>>

export interface CommandLineHandlers {
  /**
   * Each option as it comes; `rawName` is how it was written (`-n`, `--runs`), for messages;
   * `words`, its words: all of them for an option of several (`value` is then the first), else
   * `[value]`, or none.
   */
  option(name: string, value: string | undefined, rawName: string, words: string[]): void
  /** Each operand as it comes, in order among the options. */
  operand?(value: string): void
}

/**
 * Parse `argv` against `table`, calling the handlers in command-line order, so the first bad
 * argument is the one reported. Operands may come anywhere, or with `operands: 'command'` the
 * first one ends the options: it and everything after it are returned untouched. Returns the
 * operands.
 */
export function parseCommandLine(
  argv: readonly string[],
  table: OptionTable,
  handlers: CommandLineHandlers,
  { operands = 'anywhere' }: { operands?: 'anywhere' | 'command' } = {},
): string[] {
  const options = Object.fromEntries(Object.entries(table).flatMap(([name, spec]) => {
    const type = spec.kind === 'value' ? 'string' as const : 'boolean' as const
    return [
      [name, { type, ...(spec.short === undefined ? {} : { short: spec.short }) }],
      ...(spec.aliases ?? []).map((alias) => [alias, { type }]),
    ]
  }))
  // An alias is reported to the handler under the name its table entry has.
  const canonical = new Map(Object.entries(table).flatMap(([name, spec]) => (spec.aliases ?? []).map((alias) => [alias, name])))
  // The tokens of argv from `base` on: from 0, then again after each option of several words,
  // whose words parseArgs could not know it takes. Token indices are relative to `base`.
  let base = 0
  const tokenize = () => parseArgs({ args: argv.slice(base), options, strict: false, allowPositionals: true, tokens: true }).tokens
  let tokens = tokenize()
  const found: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    const token = { ...tokens[i], index: base + tokens[i].index }
    if (token.kind === 'option-terminator') {
      if (operands === 'command') return argv.slice(token.index + 1)
      continue
    }
    if (token.kind === 'positional') {
      if (operands === 'command') return argv.slice(token.index)
      found.push(token.value)
      handlers.operand?.(token.value)
      continue
    }
    const name = canonical.get(token.name) ?? token.name
    const spec = Object.hasOwn(table, name) ? table[name] : undefined
    // A short option in a group (-xyz) is reported as it was written.
    if (spec === undefined) throw new UsageError(`unknown option ${token.rawName.startsWith('--') ? token.rawName : argv[token.index]}`)
    let value = token.value
    if (spec.kind === 'value' && value === undefined) throw new UsageError(`option ${token.rawName} needs a value`)
    if (spec.kind === 'flag' && value !== undefined) throw new UsageError(`option ${token.rawName} takes no value`)
    if (spec === HELP_OPTION) throw new HelpRequested()
    if (spec.kind === 'optional' && value === undefined) {
      const next = tokens[i + 1]
      if (next?.kind === 'positional' && base + next.index === token.index + 1 && spec.takesNext?.(next.value) === true) {
        value = next.value
        i++
      }
    }
    const words = value === undefined ? [] : [value]
    if (spec.kind === 'value' && (spec.words ?? 1) > 1) {
      // The other words are the arguments after the option's first, whatever parseArgs made of
      // them; the arguments after those are tokenized anew.
      const next = token.index + (token.inlineValue ? 1 : 2)
      words.push(...argv.slice(next, next + spec.words! - 1))
      if (words.length < spec.words!) throw new UsageError(`option ${token.rawName} needs ${spec.words} values`)
      base = next + spec.words! - 1
      tokens = tokenize()
      i = -1
    }
    handlers.option(name, value, token.rawName, words)
  }
  return operands === 'command' ? [] : found
}

/** `value` when it is one of `choices`, else "invalid <option> '<value>' (a, b or c)". */
export function oneOf<T extends string>(value: string, choices: readonly T[], option: string): T {
  if ((choices as readonly string[]).includes(value)) return value as T
  const listed = choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}` : choices.join('')
  throw new UsageError(`invalid ${option} '${value}' (${listed})`)
}

export const LAUNCHERS = ['auto', 'posix_spawn', 'fork'] as const
