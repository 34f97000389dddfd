// hyperfine's parameters (-P/-D/-L) read, expanded and substituted, and the option parser's
// several-word options they are read with; tables of behaviour, no process started.
import t from 'tap'
import { MAX_COMBINATIONS, combinations, parametersOf, substitute, type ParameterOption } from '../../lib/cli/bench-parameters.js'
import { parseCommandLine, type OptionTable } from '../../lib/cli/options.js'

const scan = (lo: string, hi: string, name = 'x'): ParameterOption => ({ kind: 'scan', option: '-P', name, lo, hi })
const list = (values: string, name = 'x'): ParameterOption => ({ kind: 'list', option: '-L', name, list: values })
const step = (text: string) => ({ option: '-D', text })

t.test('parametersOf: scans and lists, their values as they will be substituted', async t => {
  const rows: Array<[string, ParameterOption[], ReturnType<typeof step> | null, string[][]]> = [
    ['whole numbers, step 1', [scan('1', '4')], null, [['1', '2', '3', '4']]],
    ['one value', [scan('3', '3')], null, [['3']]],
    ['negative', [scan('-2', '1')], null, [['-2', '-1', '0', '1']]],
    ['a step that does not land on HI', [scan('0', '10')], step('4'), [['0', '4', '8']]],
    ['decimals, exactly (no 0.30000000000000004)', [scan('0', '0.3')], step('0.1'), [['0.0', '0.1', '0.2', '0.3']]],
    ['as many decimals as the most precise of LO, HI, STEP', [scan('1', '2')], step('0.25'), [['1.00', '1.25', '1.50', '1.75', '2.00']]],
    ['negative decimals', [scan('-0.5', '0.5')], step('0.5'), [['-0.5', '0.0', '0.5']]],
    ['a list', [list('a,b,c')], null, [['a', 'b', 'c']]],
    ['a list with an empty value, as hyperfine', [list('a,,b')], null, [['a', '', 'b']]],
    ['several, in the order given', [list('a,b', 'l'), scan('1', '2', 'n')], null, [['a', 'b'], ['1', '2']]],
  ]
  for (const [what, given, s, values] of rows) {
    t.same(parametersOf(given, s).map(p => p.values), values, what)
  }
})

t.test('parametersOf: usage errors naming the option', async t => {
  const rows: Array<[string, ParameterOption[], ReturnType<typeof step> | null, RegExp]> = [
    ['LO not a number', [scan('a', '2')], null, /^invalid -P LO 'a' \(a number\)$/],
    ['HI not a number', [scan('1', '2x')], null, /^invalid -P HI '2x' \(a number\)$/],
    ['exponents are not hyperfine\'s numbers', [scan('1', '1e3')], null, /^invalid -P HI '1e3'/],
    ['an empty number', [scan('', '2')], null, /^invalid -P LO ''/],
    ['a lone point', [scan('.', '2')], null, /^invalid -P LO '\.'/],
    ['LO above HI', [scan('3', '1')], null, /^-P x: LO 3 is above HI 1$/],
    ['a step of 0', [scan('1', '2')], step('0'), /^invalid -D '0' \(a step > 0\)$/],
    ['a step of 0.00', [scan('1', '2')], step('0.00'), /^invalid -D '0\.00' \(a step > 0\)$/],
    ['a negative step', [scan('1', '2')], step('-1'), /^invalid -D '-1' \(a step > 0\)$/],
    ['a step not a number', [scan('1', '2')], step('x'), /^invalid -D 'x' \(a number\)$/],
    ['decimals without a step', [scan('1.5', '3')], null, /^invalid -P '1\.5' \(a whole number, unless a step is given with -D\)$/],
    ['-D without -P', [list('a')], step('1'), /^option -D needs a parameter scan/],
    ['-D with two scans', [scan('1', '2'), scan('1', '2', 'y')], step('1'), /^option -D with 2 parameter scans: give -P once$/],
    ['a name given twice', [scan('1', '2'), list('a', 'x')], null, /^parameter 'x' given twice$/],
    ['an empty name', [list('a', '')], null, /^invalid -L name '' \(not empty, no braces\)$/],
    ['a name with a brace', [list('a', 'x}')], null, /^invalid -L name 'x}'/],
    ['a scan too long', [scan('0', '1')], step('0.00001'), new RegExp(`^-P x 0 1: 100001 values \\(at most ${MAX_COMBINATIONS}\\)$`)],
    ['a product too large', [scan('1', '200', 'a'), scan('1', '100', 'b')], null, new RegExp(`^the parameters give 20000 combinations \\(at most ${MAX_COMBINATIONS}\\)$`)],
  ]
  for (const [what, given, s, message] of rows) {
    t.throws(() => parametersOf(given, s), { code: 'ERR_USAGE', message }, what)
  }
})

t.test('combinations: the cartesian product, the first parameter varying slowest', async t => {
  t.same(combinations([]), [{}], 'no parameters: one benchmark per command')
  t.same(combinations([{ name: 'a', values: ['1', '2'] }, { name: 'b', values: ['x', 'y', 'z'] }]), [
    { a: '1', b: 'x' }, { a: '1', b: 'y' }, { a: '1', b: 'z' },
    { a: '2', b: 'x' }, { a: '2', b: 'y' }, { a: '2', b: 'z' },
  ])
})

t.test('substitute: {NAME} replaced, anything else left as it is', async t => {
  const values = { n: '3', 'two words': 'a b', v: '{n}' }
  const rows: Array<[string, string]> = [
    ['sleep {n}', 'sleep 3'],
    ['{n}{n} {n}', '33 3'],
    ['{two words}', 'a b'],
    ['{unknown} {n}', '{unknown} 3'],
    ['{v}', '{n}'],
    ['{{n}}', '{3}'],
    ['awk \'{print $1}\'', 'awk \'{print $1}\''],
    ['{}', '{}'],
    ['{__proto__} {constructor}', '{__proto__} {constructor}'],
  ]
  for (const [template, expected] of rows) t.equal(substitute(template, values), expected, template)
})

t.test('parseCommandLine: an option of several words takes them as they are', async t => {
  const table: OptionTable = { scan: { kind: 'value', short: 'P', words: 3 }, flag: { kind: 'flag', short: 'f' } }
  const read = (argv: string[]) => {
    const seen: Array<[string, string[]]> = []
    const operands = parseCommandLine(argv, table, { option(name, _value, raw, words) { seen.push([`${raw} ${name}`, words]) } })
    return { seen, operands }
  }
  const rows: Array<[string[], Array<[string, string[]]>, string[]]> = [
    [['-P', 'x', '1', '5', 'cmd'], [['-P scan', ['x', '1', '5']]], ['cmd']],
    [['--scan', 'x', '-5', '-1', 'cmd'], [['--scan scan', ['x', '-5', '-1']]], ['cmd']],
    [['--scan=x', '1', '--', 'cmd'], [['--scan scan', ['x', '1', '--']]], ['cmd']],
    [['-Px', '1', '2', '-f', 'cmd'], [['-P scan', ['x', '1', '2']], ['-f flag', []]], ['cmd']],
    [['-fP', 'x', '1', '2'], [['-f flag', []], ['-P scan', ['x', '1', '2']]], []],
    [['a', '-P', 'x', '-f', '--scan', 'b'], [['-P scan', ['x', '-f', '--scan']]], ['a', 'b']],
  ]
  for (const [argv, seen, operands] of rows) t.same(read(argv), { seen, operands }, argv.join(' '))
  t.throws(() => read(['-P', 'x', '1']), { code: 'ERR_USAGE', message: 'option -P needs 3 values' })
  t.throws(() => read(['--scan=x']), { code: 'ERR_USAGE', message: 'option --scan needs 3 values' })
})
