// splitCommand: the package's one word splitter, a command string into argv words without a
// shell. `tileharness bench` splits its commands with it, the nvdisasm adapter its dump command
// and the ptxas adapter its option strings, so a quoted path comes out of each exactly as sh
// would hand it to a program.
//
// The rules are sh's quoting rules (dash and bash agree on them) without any expansion:
//   - blanks (space, tab, newline) separate words; runs of them count once;
//   - '...' keeps everything literally up to the next ';
//   - "..." keeps everything literally except \ before $ ` " \ or newline, which escapes it;
//   - an unquoted \ escapes the next character; \<newline> is a line continuation (removed);
//     a \ at the very end is kept literally, as dash does;
//   - '' and "" make an empty word.
// Nothing else is special: no $VAR, globs, ~, comments or operators. The one divergence from
// `sh -c` is that a newline separates words here instead of ending the command.

import { requireNoNul, requireString, unparsable } from './errors.js'

const BLANKS = new Set([' ', '\t', '\n'])
/** Characters a backslash escapes inside double quotes; before anything else it stays literal. */
const DQ_ESCAPABLE = new Set(['$', '`', '"', '\\', '\n'])

/**
 * Split `command` into argv words like sh would, without a shell.
 * `field` names the option the string came from; errors carry it as their `code`.
 */
export function splitCommand(command: string, field = 'command'): string[] {
  requireNoNul(field, requireString(field, command))
  const words: string[] = []
  let word = ''
  // A word has begun even when it is still empty: '' is a word, a run of blanks is not.
  let inWord = false
  let i = 0
  const n = command.length
  while (i < n) {
    const c = command[i]
    if (c === '\\' && command[i + 1] === '\n') {
      i += 2 // line continuation: joins, never starts or ends a word
      continue
    }
    if (BLANKS.has(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      i++
      continue
    }
    inWord = true
    if (c === '\\') {
      if (i + 1 >= n) {
        word += '\\'
        i++
      } else {
        word += command[i + 1]
        i += 2
      }
    } else if (c === "'") {
      const close = command.indexOf("'", i + 1)
      if (close < 0) throw unterminated(field, 'single', i)
      word += command.slice(i + 1, close)
      i = close + 1
    } else if (c === '"') {
      i++
      for (;;) {
        if (i >= n) throw unterminated(field, 'double', command.lastIndexOf('"', i))
        const d = command[i]
        if (d === '"') {
          i++
          break
        }
        if (d === '\\' && i + 1 < n && DQ_ESCAPABLE.has(command[i + 1])) {
          if (command[i + 1] !== '\n') word += command[i + 1]
          i += 2
          continue
        }
        word += d
        i++
      }
    } else {
      word += c
      i++
    }
  }
  if (inWord) words.push(word)
  return words
}

function unterminated(field: string, kind: 'single' | 'double', at: number): TypeError {
  return unparsable(field, `unterminated ${kind} quote (opened at offset ${at})`)
}

/**
 * Quote `value` so that splitCommand gives it back as exactly one word: double quotes with `"`
 * and `\` escaped, the form of ptxas's --nv-host path (docs/toolchain-contract.md, "The ptxas
 * argv"). Nothing else needs escaping because splitCommand expands nothing.
 */
export function quoteForSplit(value: string): string {
  requireString('value', value)
  return `"${value.replace(/["\\]/g, (m) => '\\' + m)}"`
}
