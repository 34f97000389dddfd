import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { parseKnobFile, validateKnobFile, KnobFileError, KNOB_MESSAGES, type KnobCommand } from '../../lib/cuda/index.js'
import { scratchDir } from '../fixtures/cuda/helpers.js'
import { withPollutedPrototype } from '../helpers.js'

/** The commands without positions, for compact table rows. */
function shapes(commands: KnobCommand[]): unknown[] {
  return commands.map((c) => {
    if (c.kind === 'assign') return { assign: c.key, name: c.name, value: c.value, ...(c.when.length > 0 ? { when: c.when } : {}) }
    if (c.kind === 'when') return { when: c.clause }
    return { inject: c.body }
  })
}

t.test('grammar: one row per rule of the knob-file grammar (docs/toolchain-contract.md)', async (t) => {
  const rows: Array<[string, string, unknown[]]> = [
    ['header only', '[knobs]', []],
    ['preamble before the header is discarded', 'anything ; [Knobs] here\n[knobs]\nA=1', [{ assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } }]],
    ['whitespace separates', '[knobs] A=1\tB=2\nC=3', [
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } },
      { assign: 'B', name: 'b', value: { type: 'int', value: 2, text: '2' } },
      { assign: 'C', name: 'c', value: { type: 'int', value: 3, text: '3' } },
    ]],
    ['~ separates', '[knobs]A=1~B=2', [
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } },
      { assign: 'B', name: 'b', value: { type: 'int', value: 2, text: '2' } },
    ]],
    [';; separates', '[knobs]A=1;;B=2;;', [
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } },
      { assign: 'B', name: 'b', value: { type: 'int', value: 2, text: '2' } },
    ]],
    ['bare key', '[knobs] IgnorePotentialMixedSizeProblems', [{ assign: 'IgnorePotentialMixedSizeProblems', name: 'ignorepotentialmixedsizeproblems', value: { type: 'flag' } }]],
    ['identifiers are case-insensitive', '[knobs] EmitLDCU=1 emitldcu=0', [
      { assign: 'EmitLDCU', name: 'emitldcu', value: { type: 'int', value: 1, text: '1' } },
      { assign: 'emitldcu', name: 'emitldcu', value: { type: 'int', value: 0, text: '0' } },
    ]],
    ['string / identifier value', '[knobs] DUMPIR=AllocateRegisters', [{ assign: 'DUMPIR', name: 'dumpir', value: { type: 'string', value: 'AllocateRegisters' } }]],
    ['negative int', '[knobs] K=-7', [{ assign: 'K', name: 'k', value: { type: 'int', value: -7, text: '-7' } }]],
    ['range N..M', '[knobs] R=3..9', [{ assign: 'R', name: 'r', value: { type: 'range', low: 3, high: 9, text: '3..9' } }]],
    ['range ..M (low is INT_MIN)', '[knobs] R=..9', [{ assign: 'R', name: 'r', value: { type: 'range', low: -2147483648, high: 9, text: '..9' } }]],
    ['range N.. (high is INT_MAX)', '[knobs] R=3..', [{ assign: 'R', name: 'r', value: { type: 'range', low: 3, high: 2147483647, text: '3..' } }]],
    ['range .. (both open)', '[knobs] R=..', [{ assign: 'R', name: 'r', value: { type: 'range', low: -2147483648, high: 2147483647, text: '..' } }]],
    ['list N1,N2,N3', '[knobs] L=1,-2,3', [{ assign: 'L', name: 'l', value: { type: 'list', values: [1, -2, 3], text: '1,-2,3' } }]],
    ['float', '[knobs] F=1.5e-3', [{ assign: 'F', name: 'f', value: { type: 'float', value: 1.5e-3, text: '1.5e-3' } }]],
    ['float without exponent', '[knobs] F=.25', [{ assign: 'F', name: 'f', value: { type: 'float', value: 0.25, text: '.25' } }]],
    ['hex is not inferred as an int', '[knobs] H=0x10', [{ assign: 'H', name: 'h', value: { type: 'string', value: '0x10' } }]],
    ['opcode list stays a string', '[knobs] Ops=FADD,FMUL', [{ assign: 'Ops', name: 'ops', value: { type: 'string', value: 'FADD,FMUL' } }]],
    ['empty value', '[knobs] S=', [{ assign: 'S', name: 's', value: { type: 'string', value: '' } }]],
    ['WHEN scopes the next assignment', '[knobs] WHEN=SH=0xDEADBEEF A=1 B=2', [
      { when: 'SH=0xDEADBEEF' },
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' }, when: ['SH=0xDEADBEEF'] },
      { assign: 'B', name: 'b', value: { type: 'int', value: 2, text: '2' } },
    ]],
    ['WHEN clause ends at ;', '[knobs]when=IH=5;A=1', [
      { when: 'IH=5' },
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' }, when: ['IH=5'] },
    ]],
    ['WHEN clauses accumulate (when-list)', '[knobs] WHEN=SH=1 WHEN=IH=2 A', [
      { when: 'SH=1' },
      { when: 'IH=2' },
      { assign: 'A', name: 'a', value: { type: 'flag' }, when: ['SH=1', 'IH=2'] },
    ]],
    ['INJECTSTRING body runs to ;; with blanks and ~ inside', '[knobs] INJECTSTRING  NOP ; ~ BAR  ;; A=1', [
      { inject: 'NOP ; ~ BAR' },
      { assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } },
    ]],
    ['injectstring is case-insensitive', '[knobs]injectstring x;;', [{ inject: 'x' }]],
    ['nothing after a NUL byte exists', '[knobs] A=1\0 B=@@@', [{ assign: 'A', name: 'a', value: { type: 'int', value: 1, text: '1' } }]],
  ]
  for (const [name, text, expected] of rows) t.same(shapes(parseKnobFile(text).commands), expected, name)
  t.equal(parseKnobFile('# comment\n[knobs]\nA=1').preamble, '# comment\n', 'preamble is kept for the caller')
})

t.test('fatal messages, verbatim', async (t) => {
  const rows: Array<[string, string, string, string]> = [
    ['no header', 'A=1', 'header-not-found', 'Knobs header not found in <input>'],
    ['header is case-sensitive', '[KNOBS]\nA=1', 'header-not-found', 'Knobs header not found in <input>'],
    ['header after a NUL is not seen', 'x\0[knobs]', 'header-not-found', 'Knobs header not found in <input>'],
    ['identifier with a bad character', '[knobs] A-B=1', 'invalid-identifier', KNOB_MESSAGES.invalidIdentifier],
    ['identifier starting with a digit', '[knobs] 9A=1', 'invalid-identifier', 'Invalid knob identifier'],
    ['no key', '[knobs] =5', 'invalid-knob', 'Invalid knob specified (=5)'],
    ['INJECTSTRING without ;;', '[knobs] INJECTSTRING abc', 'invalid-knob', 'Invalid knob specified (INJECTSTRING abc)'],
    ['list with a trailing comma', '[knobs] L=1,2,', 'invalid-value', "End of integer range value is not ',' or null character"],
    ['list element followed by junk', '[knobs] L=1,2x', 'invalid-value', "End of integer range value is not ',' or null character"],
    ['list element that is not an integer', '[knobs] L=1,x', 'invalid-value', 'Integer list value is not an integer'],
    ['list with ,,', '[knobs] L=1,,2', 'invalid-value', 'Integer list value is not an integer'],
  ]
  for (const [name, text, code, message] of rows) {
    t.throws(() => parseKnobFile(text), { name: 'KnobFileError', code, message, source: '<input>' }, name)
  }
  t.throws(() => parseKnobFile('A', { source: '/etc/k.cfg' }), { message: 'Knobs header not found in /etc/k.cfg' }, '%s is the source')
  t.throws(() => parseKnobFile('[knobs]', null as unknown as object), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'options' }, 'options null (was a TypeError without a code)')
  try {
    parseKnobFile('pre\n[knobs]\nA=1\n  B-C=2')
    t.fail('should throw')
  } catch (error) {
    t.ok(error instanceof KnobFileError, 'a KnobFileError')
    t.match(error, { line: 4, column: 3, command: 'B-C=2', offset: 18 }, 'errors carry where they are')
  }
})

t.test('declared knob types parse as ptxas parses them', async (t) => {
  const knobTypes = { EmitLDCU: 'bool', SchedLimit: 'int', Band: 'range', Ids: 'list', Scale: 'float', Ratio: 'double', DumpIR: 'string', Odd: 'opcode-pair' }
  const ok: Array<[string, string, unknown]> = [
    ['0x prefix silently parses as 0', 'schedlimit=0x10', { type: 'int', value: 0, text: '0x10' }],
    ['decimal int', 'SchedLimit=42', { type: 'int', value: 42, text: '42' }],
    ['bool bare key', 'EmitLDCU', { type: 'bool', value: true, text: null }],
    ['bool =0', 'EmitLDCU=0', { type: 'bool', value: false, text: '0' }],
    ['range, one number', 'Band=4', { type: 'range', low: 4, high: 4, text: '4' }],
    ['list', 'Ids=5', { type: 'list', values: [5], text: '5' }],
    ['float via sscanf %f (prefix)', 'Scale=2.5x', { type: 'float', value: 2.5, text: '2.5x' }],
    ['float inf', 'Scale=-inf', { type: 'float', value: -Infinity, text: '-inf' }],
    ['float hex', 'Scale=0x1.8p1', { type: 'float', value: 3, text: '0x1.8p1' }],
    ['double', 'Ratio=1e-300', { type: 'double', value: 1e-300, text: '1e-300' }],
    ['string with commas', 'DumpIR=a,b', { type: 'string', value: 'a,b' }],
  ]
  for (const [name, text, value] of ok) {
    const [command] = parseKnobFile(`[knobs] ${text}`, { knobTypes }).commands
    t.same(command.kind === 'assign' ? command.value : command, value, name)
  }
  const bad: Array<[string, string, string]> = [
    ['unknown name', 'Nope=1', 'Invalid knob identifier'],
    ['unknown type tag', 'Odd=1', 'Invalid knob type'],
    ['empty int', 'SchedLimit=', 'Empty integer value'],
    ['empty range', 'Band', 'Empty integer range value'],
    ['bad range', 'Band=1..x', 'Invalid knob specified (Band=1..x)'],
    ['empty list', 'Ids=', 'Empty integer list value'],
    ['list with + sign', 'Ids=+1', 'Integer list value is not an integer'],
    ['empty float', 'Scale=', 'Empty floating point value'],
    ['invalid float', 'Scale=abc', 'Invalid floating point value'],
    ['empty double', 'Ratio', 'Empty double value'],
    ['invalid double', 'Ratio=.', 'Invalid double value'],
  ]
  for (const [name, text, message] of bad) {
    t.throws(() => parseKnobFile(`[knobs] ${text}`, { knobTypes }), { name: 'KnobFileError', message }, name)
  }
})

t.test('validateKnobFile reads the file as ptxas does', async (t) => {
  const dir = scratchDir(t)
  const good = join(dir, 'good.cfg')
  writeFileSync(good, '; tuned for sm_100\n[knobs]\nSchedNumBB_Limit=100\nDisableCSE=1\n')
  const parsed = validateKnobFile(good)
  t.equal(parsed.source, good)
  t.same(parsed.commands.map((c) => (c.kind === 'assign' ? c.key : c.kind)), ['SchedNumBB_Limit', 'DisableCSE'])

  const headerless = join(dir, 'headerless.cfg')
  writeFileSync(headerless, 'SchedNumBB_Limit=100\n')
  t.throws(() => validateKnobFile(headerless), { code: 'header-not-found', message: `Knobs header not found in ${headerless}` })

  const latin1 = join(dir, 'bytes.cfg')
  writeFileSync(latin1, Buffer.from([0xff, 0xfe, 0x0a, ...Buffer.from('[knobs] A=1 \xe9-=2', 'latin1')]))
  t.throws(() => validateKnobFile(latin1), { code: 'invalid-identifier', offset: 15 }, 'offsets are byte offsets')

  t.throws(() => validateKnobFile(join(dir, 'missing.cfg')), { name: 'KnobFileError', code: 'unreadable', message: /ENOENT/ })
  t.throws(() => validateKnobFile(dir), { name: 'KnobFileError', code: 'unreadable', message: /EISDIR/ })
  t.throws(() => validateKnobFile(42 as unknown as string), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'path' })
})

t.test('fuzz: no text makes the parser throw anything but a KnobFileError', async (t) => {
  const unit = fc.constantFrom('[knobs]', '[', ']', 'knobs', 'A', 'b', '_', '9', '-', '+', '=', '.', '..', ',', ';', ';;', '~', ' ', '\n', '\t', '\0', 'WHEN=', 'INJECTSTRING', 'x', 'e', '0x', 'é')
  const knobTypes = { a: 'int', b: 'range', x: 'list', e: 'float', ab: 'double', aa: 'bool', bb: 'string', a_: 'bogus' }
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 40 }), fc.boolean(), (text, typed) => {
      try {
        parseKnobFile(text, typed ? { knobTypes } : {})
      } catch (error) {
        if (!(error instanceof KnobFileError)) throw error
      }
    }),
    { numRuns: 5000 },
  )
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      try {
        parseKnobFile(`[knobs]${text}`)
      } catch (error) {
        if (!(error instanceof KnobFileError)) throw error
      }
    }),
    { numRuns: 2000 },
  )
  t.pass('only KnobFileError escapes')
})

// Each WHEN= clause handed the rest of its word on, which was scanned again to its end (and
// upper-cased): a chain of n clauses in one word cost n² (81 s at 240 KB; a million characters,
// as here, about 20 minutes, so this test fails by tap's timeout on that code). Now linear.
t.test('a word of 160,000 chained WHEN= clauses: every clause, and the assignment they scope', async (t) => {
  const n = 160_000
  const commands = parseKnobFile('[knobs]\n' + 'WHEN=SH=1;'.repeat(n) + 'K=1').commands
  t.equal(commands.length, n + 1)
  t.same(commands[n - 1], { kind: 'when', clause: 'SH=1', offset: 8 + 10 * (n - 1), text: 'WHEN=SH=1' })
  const last = commands[n] as Extract<KnobCommand, { kind: 'assign' }>
  t.same([last.key, last.when.length, last.when[0], last.offset], ['K', n, 'SH=1', 8 + 10 * n])
})

t.test('options are read by their own fields: an inherited source or knobTypes is not the caller\'s', async (t) => {
  const dir = scratchDir(t)
  const file = join(dir, 'k.cfg')
  writeFileSync(file, '[knobs]\nSchedNumBB_Limit=100\n')
  const inherited = { source: 'EVIL', knobTypes: { OtherKnob: 'int' } }
  const parsed = await withPollutedPrototype(inherited, () => [parseKnobFile('[knobs]\nSchedNumBB_Limit=100\n'), validateKnobFile(file)]).catch((error: unknown) => error)
  t.same(parsed, [parseKnobFile('[knobs]\nSchedNumBB_Limit=100\n'), validateKnobFile(file)], 'no inherited table refuses the knob, and the source is <input> or the file')
  const missing = await withPollutedPrototype(inherited, () => parseKnobFile('no header')).then(() => 'parsed', (error: unknown) => error)
  t.match(missing, { code: 'header-not-found', message: 'Knobs header not found in <input>' }, 'the message names <input>, not an inherited source')
})
