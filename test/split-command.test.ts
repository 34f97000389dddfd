import t from 'tap'
import { execFileSync } from 'node:child_process'
import fc from 'fast-check'
import { splitCommand, quoteForSplit } from '../lib/index.js'

// One row per rule of sh's quoting, as splitCommand implements it.
const rows: Array<[string, string, string[]]> = [
  ['empty string', '', []],
  ['blanks only', ' \t \n ', []],
  ['one word', 'nvdisasm', ['nvdisasm']],
  ['the default dumpSassCommand', 'nvdisasm -c', ['nvdisasm', '-c']],
  ['runs of blanks count once', '  a \t\t b\n\nc  ', ['a', 'b', 'c']],
  ['single quotes keep blanks', "'a b'  c", ['a b', 'c']],
  ['single quotes keep backslashes and double quotes', `'a\\"b'`, ['a\\"b']],
  ['double quotes keep blanks', '"a  b" c', ['a  b', 'c']],
  ['\\" and \\\\ inside double quotes', '"a\\"b\\\\c"', ['a"b\\c']],
  ['\\$ and \\` inside double quotes', '"\\$x\\`"', ['$x`']],
  ['other backslashes inside double quotes stay', '"a\\b\\n"', ['a\\b\\n']],
  ['unquoted backslash escapes anything', 'a\\ b \\"c\\\' \\\\', ['a b', '"c\'', '\\']],
  ['line continuation joins', 'ab\\\ncd', ['abcd']],
  ['line continuation between words', 'a \\\n b', ['a', 'b']],
  ['line continuation inside double quotes', '"a\\\nb"', ['ab']],
  ['trailing backslash is literal (dash)', 'a\\', ['a\\']],
  ['empty quotes make an empty word', "'' \"\" x", ['', '', 'x']],
  ['adjacent quoted parts concatenate', `a'b c'"d e"f`, ['ab cd ef']],
  ['newline inside quotes is kept', "'a\nb'", ['a\nb']],
  ['no expansion of $, globs, ~ or #', '$HOME * ~ #c', ['$HOME', '*', '~', '#c']],
  ['--nv-host form', '--nv-host="/tmp/a b/\\"q\\"\\\\x"', ['--nv-host=/tmp/a b/"q"\\x']],
  ['non-ASCII passes through', 'é "ü ß"', ['é', 'ü ß']],
]

t.test('splitCommand: table of quoting rules', async (t) => {
  for (const [name, input, words] of rows) t.same(splitCommand(input), words, name)
})

t.test('splitCommand: bad input', async (t) => {
  const bad: Array<[string, unknown, string, string | RegExp]> = [
    ['unterminated single quote', "a 'b", 'ERR_INVALID_ARG_VALUE', /unterminated single quote/],
    ['unterminated double quote', 'a "b\\"', 'ERR_INVALID_ARG_VALUE', /unterminated double quote/],
    ['NUL byte', 'a\0b', 'ERR_INVALID_ARG_VALUE', /NUL/],
    ['not a string', 42, 'ERR_INVALID_ARG_TYPE', /must be a string/],
  ]
  for (const [name, input, code, message] of bad) {
    t.throws(() => splitCommand(input as string), { code, field: 'command', message }, name)
  }
  t.throws(() => splitCommand("'", 'basePtxOptions'), { code: 'ERR_INVALID_ARG_VALUE', field: 'basePtxOptions' }, 'the caller names the field')
})

// The reference: what sh hands printf for the same text. The sentinel word X keeps printf from
// printing its format once with no arguments when the input has no words.
function shWords(input: string): string[] | null {
  try {
    const out = execFileSync('sh', ['-c', `printf '%s\\0' X ${input}`], { env: { PATH: process.env.PATH, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'ignore'] })
    return out.toString('utf8').split('\0').slice(1, -1)
  } catch {
    return null
  }
}

t.test('splitCommand agrees with sh -c printf on random inputs', async (t) => {
  // Characters sh would expand or treat as syntax ($ ` * ? [ ~ # ; & | < > ( ) and newline) are
  // left out: splitCommand deliberately does none of that.
  const unit = fc.constantFrom('a', 'b', '-', '=', '.', '/', '%', 'é', ' ', ' ', '\t', "'", "'", '"', '"', '\\', '\\')
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 24 }), (input) => {
      let ours: string[] | null
      try {
        ours = splitCommand(input)
      } catch {
        ours = null
      }
      const theirs = shWords(input)
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
        throw new Error(`input ${JSON.stringify(input)}: splitCommand ${JSON.stringify(ours)} vs sh ${JSON.stringify(theirs)}`)
      }
    }),
    { numRuns: 300 },
  )
  t.pass('300 random inputs agree')
})

t.test('quoteForSplit gives any string back as exactly one word', async (t) => {
  for (const value of [null, 5, undefined]) {
    t.throws(() => quoteForSplit(value as unknown as string), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'value' }, `${value} (was a TypeError without a code)`)
  }
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\t', '\n', '"', "'", '\\', '$', '`', 'é'), maxLength: 20 }), (s) => {
      const words = splitCommand(`x ${quoteForSplit(s)} y`)
      return words.length === 3 && words[1] === s
    }),
    { numRuns: 500 },
  )
  t.equal(quoteForSplit('/tmp/a "b"\\c'), '"/tmp/a \\"b\\"\\\\c"', "the contract's form: \" and \\ escaped, wrapped in \"")
})
