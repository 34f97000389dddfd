// The printer: a module using every part of the model prints exactly as expected and assembles;
// immediates print exactly; every kind of malformed input is an error naming its field.
import t from 'tap'
import {
  addr, emitPtx, f32, f64, imm, ins, local, printModule, vec, type Operand, type PtxEntry, type PtxModule,
  type PtxVariable, type Statement,
} from '../../lib/ptx/index.js'
import { withPollutedPrototype } from '../helpers.js'
import { goldenModule, goldenText } from './golden.js'
import { assemble, isElf, skipWithoutPtxas } from './ptxas.js'

t.test('the golden module prints exactly', async (t) => {
  t.equal(printModule(goldenModule), goldenText)
  t.same(emitPtx(goldenModule).warnings, [])
})

t.test('the golden module assembles', { skip: skipWithoutPtxas }, async (t) => {
  const { result, cubin, stderr } = assemble(goldenText, 'sm_100')
  t.equal(result.exitCode, 0, 'ptxas exits 0', { stderr })
  t.equal(stderr, '', 'without a warning')
  t.ok(isElf(cubin), 'and writes an ELF cubin')
})

/** Prints one instruction inside a minimal kernel and returns its line. */
function printed(operand: Operand): string {
  const text = printModule(kernel([ins('mov.b32', '%r1', operand)]))
  const line = text.split('\n').find((l) => l.startsWith('\tmov.b32'))
  return line?.replace('\tmov.b32 %r1, ', '').replace(/;$/, '') ?? ''
}

function kernel(body: Statement[], extra: Partial<PtxEntry> = {}): PtxModule {
  return { target: 'sm_90', functions: [{ kind: 'entry', name: 'k', params: [], body, ...extra }] }
}

t.test('immediates print exactly', async (t) => {
  const rows: [Operand, string][] = [
    [imm(0), '0'],
    [imm(-1), '-1'],
    [imm(Number.MAX_SAFE_INTEGER), '9007199254740991'],
    [imm(2n ** 64n - 1n), '18446744073709551615'],
    [imm(-(2n ** 63n)), '-9223372036854775808'],
    [f32(1), '0f3F800000'],
    [f32(1.5), '0f3FC00000'],
    [f32(0.1), '0f3DCCCCCD'], // rounded once, to the nearest single
    [f32(-0), '0f80000000'],
    [f32(Infinity), '0f7F800000'],
    [f32(-Infinity), '0fFF800000'],
    [f32(NaN), '0f7FC00000'],
    [f32(1e-45), '0f00000001'], // the smallest subnormal
    [f64(1), '0d3FF0000000000000'],
    [f64(0.1), '0d3FB999999999999A'],
    [f64(-2), '0dC000000000000000'],
    [addr('%rd1'), '[%rd1]'],
    [addr('%rd1', 0), '[%rd1]'],
    [addr('%rd1', 12), '[%rd1+12]'],
    [addr('%rd1', -4), '[%rd1+-4]'],
    [vec('%r1', '%r2', 3), '{%r1, %r2, 3}'],
    [{ kind: 'reg', name: '%ctaid.y' }, '%ctaid.y'],
  ]
  for (const [operand, text] of rows) t.equal(printed(operand), text, text)
})

interface BadRow {
  name: string
  module: unknown
  error: { name: string; code: string; message: RegExp }
}

const entry = (fields: Record<string, unknown>): unknown => ({
  target: 'sm_90', functions: [{ kind: 'entry', name: 'k', params: [], body: [], ...fields }],
})
const body = (...statements: unknown[]): unknown => entry({ body: statements })
const inst = (opcode: unknown, ...operands: unknown[]): unknown => ({ kind: 'inst', opcode, operands })

/** `leaf` wrapped `depth` times (a stack overflow, with no code, past a few thousand). */
const nested = (depth: number, wrap: (inner: unknown) => unknown, leaf: unknown): unknown => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = wrap(value)
  return value
}
const range = (code: string, message: RegExp) => ({ name: 'RangeError', code, message })
const type = (message: RegExp) => ({ name: 'TypeError', code: 'ERR_PTX_INVALID_ARG_TYPE', message })

const bad: BadRow[] = [
  { name: 'module not an object', module: null, error: type(/^module: /) },
  { name: 'unknown target', module: { target: 'sm_89', functions: [] }, error: range('ERR_PTX_UNKNOWN_TARGET', /^target: unknown GPU target "sm_89"/) },
  { name: 'functions not an array', module: { target: 'sm_90', functions: {} }, error: type(/^functions: /) },
  { name: 'address size 32', module: { target: 'sm_90', addressSize: 32, functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^addressSize: only 64/) },
  { name: 'unknown function kind', module: { target: 'sm_90', functions: [{ kind: 'kernel', name: 'k' }] }, error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.kind: /) },
  { name: 'function name with a dash', module: entry({ name: 'my-kernel' }), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.name: "my-kernel" is not a PTX identifier/) },
  { name: 'function name starting with a digit', module: entry({ name: '1k' }), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.name: /) },
  { name: 'lone underscore', module: entry({ name: '_' }), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.name: /) },
  { name: 'function name not a string', module: entry({ name: 7 }), error: type(/^functions\[0\]\.name: /) },
  { name: 'bad linkage', module: entry({ linkage: 'static' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.linkage: /) },
  { name: 'param type', module: entry({ params: [{ name: 'p', type: 'u128' }] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.params\[0\]\.type: "u128" is not a PTX fundamental type/) },
  { name: 'param alignment', module: entry({ params: [{ name: 'p', type: 'b8', align: 3, length: 4 }] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.params\[0\]\.align: alignment must be a power of two/) },
  { name: '.ptr on a 32-bit param', module: entry({ params: [{ name: 'p', type: 'u32', ptr: { space: 'global' } }] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.params\[0\]\.ptr: \.ptr needs a 64-bit/) },
  { name: '.ptr on a func param', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', params: [{ name: 'p', type: 'u64', ptr: { space: 'global' } }] }] }, error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.params\[0\]\.ptr: \.ptr is only allowed on \.entry/) },
  { name: '.ptr space', module: entry({ params: [{ name: 'p', type: 'u64', ptr: { space: 'texture' } }] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.params\[0\]\.ptr\.space: /) },
  { name: 'duplicate function', module: { target: 'sm_90', functions: [{ kind: 'entry', name: 'k', params: [], body: [] }, { kind: 'entry', name: 'k', params: [], body: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[1\]\.name: "k" is declared twice/) },
  { name: 'variable clashing with a function', module: { target: 'sm_90', variables: [{ space: 'global', name: 'k', type: 'u32' }], functions: [{ kind: 'entry', name: 'k', params: [], body: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[0\]\.name: /) },
  { name: 'module-level .local', module: { target: 'sm_90', variables: [{ space: 'local', name: 'v', type: 'u32' }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.space: \.local is not allowed here/) },
  { name: 'initialized .shared', module: { target: 'sm_90', variables: [{ space: 'shared', name: 'v', type: 'u32', init: [1] }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.init: \.shared variables cannot be initialized/) },
  { name: 'initialized .extern', module: { target: 'sm_90', variables: [{ space: 'global', linkage: 'extern', name: 'v', type: 'u32', init: [1] }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.init: an \.extern/) },
  { name: 'too many initializers', module: { target: 'sm_90', variables: [{ space: 'const', name: 'v', type: 'u32', length: 2, init: [1, 2, 3] }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.init: 3 initializers for 2 elements/) },
  { name: 'initializer beyond 64 bits', module: { target: 'sm_90', variables: [{ space: 'const', name: 'v', type: 'u64', init: [2n ** 64n] }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.init\[0\]\.value: /) },
  { name: 'array length 0', module: { target: 'sm_90', variables: [{ space: 'global', name: 'v', type: 'u32', length: 0 }], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^variables\[0\]\.length: /) },
  { name: 'body not an array', module: entry({ body: 'ret;' }), error: type(/^functions\[0\]\.body: /) },
  { name: 'statement kind', module: body({ kind: 'asm', text: 'ret;' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.kind: unknown statement kind "asm"/) },
  { name: 'opcode with a space', module: body(inst('ret; exit')), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.opcode: /) },
  { name: 'opcode in upper case', module: body(inst('RET')), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.opcode: /) },
  { name: 'opcode not a string', module: body(inst(undefined)), error: type(/^functions\[0\]\.body\[0\]\.opcode: /) },
  { name: 'register with a semicolon', module: body(inst('mov.u32', { kind: 'reg', name: '%r1;' }, { kind: 'imm', value: 1 })), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.body\[0\]\.operands\[0\]\.name: /) },
  { name: 'operand kind', module: body(inst('mov.u32', { kind: 'label' })), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.operands\[0\]\.kind: /) },
  { name: 'unsafe integer', module: body(inst('mov.u64', { kind: 'reg', name: '%rd1' }, { kind: 'imm', value: 2 ** 53 })), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.operands\[1\]\.value: expected a safe integer/) },
  { name: 'fractional integer', module: body(inst('mov.u32', { kind: 'reg', name: '%r1' }, { kind: 'imm', value: 0.5 })), error: range('ERR_PTX_INVALID_VALUE', /operands\[1\]\.value: /) },
  { name: 'bigint float', module: body(inst('mov.f32', { kind: 'reg', name: '%f1' }, { kind: 'imm', value: 1n, type: 'f32' })), error: type(/operands\[1\]\.value: expected a number for an f32 immediate/) },
  { name: 'immediate type', module: body(inst('mov.f32', { kind: 'reg', name: '%f1' }, { kind: 'imm', value: 1, type: 'f16' })), error: range('ERR_PTX_INVALID_VALUE', /operands\[1\]\.type: /) },
  { name: 'address offset', module: body(inst('ld.u32', { kind: 'reg', name: '%r1' }, { kind: 'addr', base: '%rd1', offset: 1.5 })), error: range('ERR_PTX_INVALID_VALUE', /operands\[1\]\.offset: /) },
  { name: 'nested vector element', module: body(inst('mov.b64', { kind: 'vec', elems: [{ kind: 'reg', name: 'bad name' }] })), error: range('ERR_PTX_INVALID_IDENTIFIER', /operands\[0\]\.elems\[0\]\.name: /) },
  { name: 'guard null', module: body({ kind: 'inst', opcode: 'ret', operands: [], guard: null }), error: type(/^functions\[0\]\.body\[0\]\.guard: /) },
  { name: '.func pragmas not an array', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', params: [], pragmas: 'nounroll' }] }, error: type(/^functions\[0\]\.pragmas: /) },
  { name: 'blocks 1,001 deep', module: body(nested(1001, (inner) => ({ kind: 'block', body: [inner] }), { kind: 'inst', opcode: 'ret', operands: [] })), error: range('ERR_PTX_INVALID_VALUE', /: blocks nest deeper than 1000$/) },
  { name: 'vectors 1,001 deep', module: body(inst('mov.b32', { kind: 'reg', name: '%r1' }, nested(1001, (inner) => ({ kind: 'vec', elems: [inner] }), { kind: 'reg', name: '%r2' }))), error: range('ERR_PTX_INVALID_VALUE', /: operands nest deeper than 1000$/) },
  { name: 'guard register', module: body({ kind: 'inst', opcode: 'ret', operands: [], guard: { pred: '!%p1' } }), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.body\[0\]\.guard\.pred: /) },
  { name: 'register count 0', module: body({ kind: 'reg', type: 'b32', name: '%r', count: 0 }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.count: /) },
  { name: 'label name', module: body({ kind: 'label', name: 'L 1' }), error: range('ERR_PTX_INVALID_IDENTIFIER', /^functions\[0\]\.body\[0\]\.name: /) },
  { name: 'pragma with a quote', module: body({ kind: 'pragma', value: 'nounroll"; ret; //' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.value: a pragma must be/) },
  { name: 'empty pragma', module: entry({ pragmas: [''] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.pragmas\[0\]: /) },
  { name: 'module pragma with a newline', module: { target: 'sm_90', pragmas: ['a\nb'], functions: [] }, error: range('ERR_PTX_INVALID_VALUE', /^pragmas\[0\]: /) },
  { name: 'two-line comment', module: body({ kind: 'comment', text: 'a\nret;' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.text: a comment must be one line/) },
  // ptxas: "Unexpected non-ASCII character encountered", and a NUL is its "Unexpected EOF".
  { name: 'non-ASCII comment', module: body({ kind: 'comment', text: 'héllo ✓' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.text: a comment must be printable ASCII/) },
  { name: 'comment with U+2028', module: body({ kind: 'comment', text: 'a\u2028b' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.text: a comment must be printable ASCII/) },
  { name: 'comment with a NUL', module: body({ kind: 'comment', text: 'a\0b' }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.text: a comment must be printable ASCII/) },
  // A .func's prototype may precede its definition (below), with the same head; nothing else repeats.
  { name: 'a prototype, then a definition with another head', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', params: [{ name: 'x', type: 'u32' }] }, { kind: 'func', name: 'f', params: [], body: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[1\]\.name: "f" is declared with another head than its prototype's \(\.func f\(/) },
  { name: 'a definition, then a prototype', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', params: [], body: [] }, { kind: 'func', name: 'f', params: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[1\]\.name: "f" is declared twice/) },
  { name: 'two definitions after a prototype', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', params: [] }, { kind: 'func', name: 'f', params: [], body: [] }, { kind: 'func', name: 'f', params: [], body: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[2\]\.name: "f" is declared twice/) },
  { name: 'an entry named as a prototype', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'k', params: [] }, { kind: 'entry', name: 'k', params: [], body: [] }] }, error: range('ERR_PTX_DUPLICATE_NAME', /^functions\[1\]\.name: "k" is declared twice/) },
  { name: 'local .global variable', module: body({ kind: 'var', variable: { space: 'global', name: 'g', type: 'u32' } }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.variable\.space: \.global is not allowed here/) },
  { name: 'nested block statement', module: body({ kind: 'block', body: [{ kind: 'inst', opcode: 'r e t', operands: [] }] }), error: range('ERR_PTX_INVALID_VALUE', /^functions\[0\]\.body\[0\]\.body\[0\]\.opcode: /) },
  { name: 'too-old version', module: { target: 'sm_110', version: '8.8', functions: [] }, error: range('ERR_PTX_VERSION_TOO_OLD', /^version: PTX ISA 8\.8 is too old for target sm_110/) },
  // A hole is an element not given, refused as undefined is: the functions hole threw an uncoded
  // TypeError, the others printed an empty slot (`mov.b32 , %r1`, `= {, 7}`) that ptxas refuses.
  /* eslint-disable no-sparse-arrays */
  { name: 'a hole in functions', module: { target: 'sm_90', functions: [, { kind: 'entry', name: 'k', params: [], body: [] }] }, error: type(/^functions\[0\]: expected an entry or func object, got undefined/) },
  { name: 'a hole in params', module: entry({ params: [, { name: 'p', type: 'u32' }] }), error: type(/^functions\[0\]\.params\[0\]: expected a param object, got undefined/) },
  { name: 'a hole in operands', module: body({ kind: 'inst', opcode: 'mov.b32', operands: [, { kind: 'reg', name: '%r1' }] }), error: type(/^functions\[0\]\.body\[0\]\.operands\[0\]: expected an operand object, got undefined/) },
  { name: 'a hole in vector elements', module: body(inst('mov.b64', { kind: 'vec', elems: [, { kind: 'reg', name: '%r1' }] })), error: type(/^functions\[0\]\.body\[0\]\.operands\[0\]\.elems\[0\]: expected an operand object/) },
  { name: 'a hole in a body', module: entry({ body: [, { kind: 'inst', opcode: 'ret', operands: [] }] }), error: type(/^functions\[0\]\.body\[0\]: expected a statement object, got undefined/) },
  { name: 'a hole in init', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'u32', length: 2, init: [, 7] }], functions: [] }, error: type(/^variables\[0\]\.init\[0\]\.value: expected a number or bigint, got undefined/) },
  { name: 'a hole in variables', module: { target: 'sm_90', variables: [, { space: 'global', name: 'g', type: 'u32' }], functions: [] }, error: type(/^variables\[0\]: expected a variable object, got undefined/) },
  { name: 'a hole in pragmas', module: { target: 'sm_90', pragmas: [, 'nounroll'], functions: [] }, error: type(/^pragmas\[0\]: expected a pragma string/) },
  /* eslint-enable no-sparse-arrays */
]

t.test('malformed modules are errors naming the field', async (t) => {
  for (const row of bad) t.throws(() => printModule(row.module as PtxModule), row.error, row.name)
})

t.test("a hole is never read from a polluted Array.prototype", async (t) => {
  const prototype = Array.prototype as unknown as Record<number, unknown>
  prototype[0] = { name: 'injected', type: 'u32' }
  try {
    // eslint-disable-next-line no-sparse-arrays
    t.throws(() => printModule(entry({ params: [, { name: 'p', type: 'u32' }] }) as PtxModule), type(/^functions\[0\]\.params\[0\]: /), 'refused, not Array.prototype[0] printed as a param')
  } finally {
    delete prototype[0]
  }
})

t.test('blocks and operands 1,000 deep print', async (t) => {
  t.doesNotThrow(() => printModule(body(nested(1000, (inner) => ({ kind: 'block', body: [inner] }), { kind: 'inst', opcode: 'ret', operands: [] })) as PtxModule))
  t.doesNotThrow(() => printModule(body(inst('mov.b32', { kind: 'reg', name: '%r1' }, nested(1000, (inner) => ({ kind: 'vec', elems: [inner] }), { kind: 'reg', name: '%r2' }))) as PtxModule))
})

// Functions that call each other need a prototype first (printModule refused it as a duplicate).
t.test('a .func prototype, repeated, then its definition: printed, and ptxas assembles it', async (t) => {
  const module: PtxModule = { target: 'sm_90', functions: [
    { kind: 'func', name: 'f', params: [] },
    { kind: 'func', name: 'f', params: [] },
    { kind: 'func', name: 'g', params: [], body: [ins('call', 'f'), ins('ret')] },
    { kind: 'entry', name: 'k', params: [], body: [ins('call', 'g'), ins('ret')] },
    { kind: 'func', name: 'f', params: [], body: [ins('call', 'g'), ins('ret')] },
  ] }
  const text = printModule(module)
  t.equal(text.split('\n').filter((line) => line.startsWith('.func f(')).length, 3, 'two prototypes and the definition')
  if (skipWithoutPtxas !== false) return
  const { result, stderr } = assemble(text, 'sm_90', ['-c'])
  t.equal(result.exitCode, 0, 'ptxas assembles it', { stderr })
})

// Every optional field of the model, inherited from a polluted Object.prototype: none is the
// module's own, so none is printed (a `.weak` linkage, a module `.pragma`, a body given to a
// prototype, a guard on every instruction had been) and none is refused (a `version` of 7.0).
t.test('fields inherited from a polluted Object.prototype are never printed', async (t) => {
  const inherited = {
    version: '7.0', addressSize: 32, pragmas: ['unroll'], variables: [{ space: 'global', name: 'injected', type: 'u32' }],
    linkage: 'weak', returns: [{ name: 'injected', type: 'u32' }], body: [], launchBounds: { maxnreg: 1 },
    maxntid: 1, reqntid: 32, minnctapersm: 2, maxnreg: 1, reqnctapercluster: 2, explicitcluster: true, maxclusterrank: 2, blocksareclusters: true,
    count: 9, guard: { pred: '%p1' }, negate: true, align: 64, length: 5, ptr: { space: 'global' }, init: [1], offset: 4, type: 'f64',
  }
  const emitted = await withPollutedPrototype(inherited, () => emitPtx(goldenModule)).catch((error: unknown) => error)
  t.same(emitted, { ptx: goldenText, version: '8.6', warnings: [] }, 'the golden module prints exactly, without a warning')
})

/**
 * Declarations ptxas 13.0 refuses, each refused here with the field named: `module` is what a
 * caller gives, `printed` the line it had printed, `ptxas` what ptxas says of that line. Beside
 * them, `accepted`: the nearby forms ptxas takes, which are still printed.
 */
const refusedDeclarations: { name: string; module: PtxModule; error: RegExp; printed: string; ptxas: RegExp }[] = [
  {
    name: 'an .extern entry', module: kernel([ins('ret')], { linkage: 'extern' }),
    error: /^functions\[0\]\.linkage: \.extern declares an entry defined in another module/,
    printed: '.extern .entry k()\n{\n\tret;\n}', ptxas: /Function definition conflicts with '\.extern' declaration for function 'k'/,
  },
  {
    name: 'an .extern .func with a body', module: { target: 'sm_90', functions: [{ kind: 'func', name: 'f', linkage: 'extern', params: [], body: [ins('ret')] }] },
    error: /^functions\[0\]\.linkage: \.extern declares a function defined in another module/,
    printed: '.extern .func f()\n{\n\tret;\n}', ptxas: /Function definition conflicts with '\.extern' declaration for function 'f'/,
  },
  {
    name: '.common on a .shared variable', module: { target: 'sm_90', variables: [{ space: 'shared', linkage: 'common', name: 'g', type: 'u32' }], functions: [] },
    error: /^variables\[0\]\.linkage: \.common is only for \.global variables, not \.shared/,
    printed: '.common .shared .u32 g;', ptxas: /\.common variables must be declared in \.global space/,
  },
  {
    name: 'a .pred variable', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'pred' }], functions: [] },
    error: /^variables\[0\]\.type: a variable cannot be \.pred/,
    printed: '.global .pred g;', ptxas: /Predicate variable 'g' must be in register state space/,
  },
  {
    name: 'a .pred variable in a body', module: kernel([local({ space: 'local', name: 'p', type: 'pred' }), ins('ret')]),
    error: /^functions\[0\]\.body\[0\]\.variable\.type: a variable cannot be \.pred/,
    printed: '.entry k()\n{\n\t.local .pred p;\n\tret;\n}', ptxas: /Predicate variable 'p' must be in register state space/,
  },
  {
    name: 'a linkage in a body', module: kernel([local({ space: 'shared', linkage: 'extern', name: 's', type: 'u32', length: 'unsized' }), ins('ret')]),
    error: /^functions\[0\]\.body\[0\]\.variable\.linkage: a variable in a body takes no linkage/,
    printed: '.entry k()\n{\n\t.extern .shared .u32 s[];\n\tret;\n}', ptxas: /Parsing error near '\.shared'/,
  },
  {
    name: 'an unsized array neither .extern nor initialized', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'u32', length: 'unsized' }], functions: [] },
    error: /^variables\[0\]\.length: an 'unsized' array is \.extern \(defined in another module\) or initialized/,
    printed: '.global .u32 g[];', ptxas: /Non-external variable 'g' has incomplete type/,
  },
  {
    name: 'an unsized array initialized with nothing', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'u32', length: 'unsized', init: [] }], functions: [] },
    error: /^variables\[0\]\.init: an 'unsized' array is as long as its initializer/,
    printed: '.global .u32 g[] = {};', ptxas: /Initial value type mismatch/,
  },
  {
    name: 'an integer initializer of an .f32 variable', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'f32', init: [1] }], functions: [] },
    error: /^variables\[0\]\.init: the initializers are integers, for an integer or bit-size type: a \.f32 variable takes none/,
    printed: '.global .f32 g = 1;', ptxas: /Initial value type mismatch/,
  },
  {
    name: 'a .bf16 variable', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'bf16' }], functions: [] },
    error: /^variables\[0\]\.type: \.bf16 is an instruction type only: declare bf16 data as \.b16/,
    printed: '.global .bf16 g;', ptxas: /Parsing error near '\.bf16'/,
  },
  {
    name: 'a .bf16x2 register', module: kernel([{ kind: 'reg', type: 'bf16x2', name: '%h' }, ins('ret')]),
    error: /^functions\[0\]\.body\[0\]\.type: \.bf16x2 is an instruction type only: declare bf16 data as \.b32/,
    printed: '.entry k()\n{\n\t.reg .bf16x2 %h;\n\tret;\n}', ptxas: /Parsing error near '\.bf16x2'/,
  },
  {
    name: 'a .bf16 parameter', module: { target: 'sm_90', functions: [{ kind: 'entry', name: 'k', params: [{ name: 'p', type: 'bf16' }], body: [ins('ret')] }] },
    error: /^functions\[0\]\.params\[0\]\.type: \.bf16 is an instruction type only/,
    printed: '.entry k(\n\t.param .bf16 p\n)\n{\n\tret;\n}', ptxas: /Parsing error near '\.bf16'/,
  },
  {
    name: 'an empty initializer of a scalar .f64 (printed as 0)', module: { target: 'sm_90', variables: [{ space: 'const', name: 'g', type: 'f64', init: [] }], functions: [] },
    error: /^variables\[0\]\.init: the initializers are integers/,
    printed: '.const .f64 g = 0;', ptxas: /Initial value type mismatch/,
  },
]

const acceptedDeclarations: { name: string; variable: PtxVariable; printed: string }[] = [
  { name: 'an unsized array as long as its initializer', variable: { space: 'global', name: 'g', type: 'u32', length: 'unsized', init: [1, 2] }, printed: '.global .u32 g[] = {1, 2};' },
  { name: 'an unsized .weak array as long as its initializer', variable: { space: 'const', linkage: 'weak', name: 'g', type: 'u64', length: 'unsized', init: [1n] }, printed: '.weak .const .u64 g[] = {1};' },
  { name: 'an .extern unsized .shared array', variable: { space: 'shared', linkage: 'extern', name: 'g', type: 'b8', length: 'unsized' }, printed: '.extern .shared .b8 g[];' },
  { name: '.common on a .global variable', variable: { space: 'global', linkage: 'common', name: 'g', type: 'u32', init: [3] }, printed: '.common .global .u32 g = 3;' },
  { name: 'a sized .f32 array with an empty initializer', variable: { space: 'global', name: 'g', type: 'f32', length: 2, init: [] }, printed: '.global .f32 g[2] = {};' },
  { name: 'a .b128 initialized', variable: { space: 'global', name: 'g', type: 'b128', init: [1] }, printed: '.global .b128 g = 1;' },
]

t.test('declarations ptxas refuses are refused naming the field; the forms it takes are printed', async (t) => {
  for (const row of refusedDeclarations) t.throws(() => printModule(row.module), { name: 'RangeError', code: 'ERR_PTX_INVALID_VALUE', message: row.error }, row.name)
  for (const row of acceptedDeclarations) {
    const text = printModule({ target: 'sm_90', variables: [row.variable], functions: [] })
    t.ok(text.split('\n').includes(row.printed), `${row.name}: ${row.printed}`)
  }
})

t.test('against the real ptxas: each refused declaration, printed by hand, is refused; the forms kept assemble', { skip: skipWithoutPtxas }, async (t) => {
  const head = '.version 7.8\n.target sm_90\n.address_size 64\n'
  for (const row of refusedDeclarations) {
    const { result, stderr } = assemble(`${head}${row.printed}\n`, 'sm_90', ['-c'])
    t.not(result.exitCode, 0, `${row.name}: ptxas exits ${String(result.exitCode)}`)
    t.match(stderr, row.ptxas, `${row.name}: ptxas says why`)
  }
  for (const row of acceptedDeclarations) {
    // sm_100, whose PTX ISA 8.6 has .b128 (an inferred 7.8 for sm_90 has not).
    const { result, stderr } = assemble(printModule({ target: 'sm_100', variables: [row.variable], functions: [] }), 'sm_100', ['-c'])
    t.equal(result.exitCode, 0, `${row.name}: assembles`, { stderr })
  }
})

// `.b128` is a PTX ISA 8.3 type: above sm_90's lowest version (7.8) and sm_90a's (8.0). Wherever
// the module uses it, an inferred version is raised to 8.3. An explicit older version is refused,
// naming the use, where ptxas 13.0 checks it: a register, a parameter or variable that is not an
// array, an instruction type. An array of .b128 it takes at 7.8, so that is printed as asked.
const b128Uses: Array<{ name: string; module: PtxModule; at: string | null; assembles: boolean }> = [
  {
    name: 'a register and the instruction types that use it',
    module: {
      target: 'sm_90',
      functions: [{
        kind: 'entry', name: 'k', params: [{ name: 'p', type: 'u64' }],
        body: [{ kind: 'reg', type: 'b128', name: '%q', count: 2 }, { kind: 'reg', type: 'b64', name: '%rd', count: 2 },
          ins('ld.param.u64', '%rd1', addr('p')), ins('ld.global.b128', '%q1', addr('%rd1')), ins('st.global.b128', addr('%rd1'), '%q1'), ins('ret')],
      }],
    },
    at: 'functions[0].body[0].type',
    assembles: true,
  },
  // Not valid PTX (no .b128 register to move into): the instruction type alone is what is found.
  { name: 'an instruction type', module: kernel([{ kind: 'reg', type: 'b64', name: '%rd', count: 2 }, ins('mov.b128', '%rd1', vec('%rd0', '%rd1'))]), at: 'functions[0].body[1].opcode', assembles: false },
  { name: 'an entry parameter', module: { target: 'sm_90a', functions: [{ kind: 'entry', name: 'k', params: [{ name: 'p', type: 'b128' }], body: [ins('ret')] }] }, at: 'functions[0].params[0].type', assembles: true },
  { name: 'a module variable', module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'b128' }], functions: [] }, at: 'variables[0].type', assembles: true },
  { name: 'a shared variable in a body', module: kernel([local({ space: 'shared', name: 's', type: 'b128' }), ins('ret')]), at: 'functions[0].body[0].variable.type', assembles: true },
  // A prototype's .b128 parameters ptxas 13.0 takes at any version (it refuses a call to one).
  { name: 'a prototype', module: { target: 'sm_90', functions: [{ kind: 'func', linkage: 'extern', name: 'f', returns: [{ name: 'r', type: 'b128' }], params: [{ name: 'p', type: 'b128' }] }] }, at: null, assembles: true },
  {
    name: 'arrays only',
    module: { target: 'sm_90', variables: [{ space: 'global', name: 'g', type: 'b128', length: 2 }], functions: [{ kind: 'entry', name: 'k', params: [{ name: 'p', type: 'b128', length: 2 }], body: [local({ space: 'shared', name: 's', type: 'b128', length: 4 }), ins('ret')] }] },
    at: null,
    assembles: true,
  },
]

t.test('.b128 raises an inferred .version to 8.3 and refuses an older explicit one where ptxas would', async (t) => {
  for (const { name, module, at } of b128Uses) {
    const emitted = emitPtx(module)
    t.equal(emitted.version, '8.3', `${name}: version 8.3`)
    t.match(emitted.ptx, /^\.version 8\.3$/m, `${name}: printed`)
    if (at === null) {
      t.equal(emitPtx({ ...module, version: '7.8' }).version, '7.8', `${name}: an explicit 7.8 stands`)
      t.match(printModule({ ...module, version: '7.8' }), /^\.version 7\.8$/m)
    } else {
      t.throws(() => printModule({ ...module, version: '8.2' }), {
        name: 'RangeError', code: 'ERR_PTX_VERSION_TOO_OLD',
        message: `version: PTX ISA 8.2 is too old for the .b128 type (${at}), which needs PTX ISA 8.3 or newer`,
      }, `${name}: an explicit 8.2 is refused`)
    }
    t.equal(emitPtx({ ...module, version: '8.3' }).version, '8.3', `${name}: an explicit 8.3 stands`)
  }
  // A target whose lowest version is newer keeps it; a module without .b128 keeps sm_90's 7.8.
  t.equal(emitPtx({ ...b128Uses[0]!.module, target: 'sm_100' }).version, '8.6', 'sm_100 stays at 8.6')
  t.equal(emitPtx(kernel([ins('ret')])).version, '7.8', 'no .b128: 7.8')
  t.equal(emitPtx(kernel([{ kind: 'reg', type: 'b64', name: '%rd' }, ins('mov.b64', '%rd', imm(0)), ins('ret')])).version, '7.8', 'b64 is not b128')
})

t.test('.b128 modules assemble at the version chosen; below it ptxas refuses what the printer refuses', { skip: skipWithoutPtxas }, async (t) => {
  for (const { name, module, at, assembles } of b128Uses) {
    if (!assembles) continue
    const target = module.target
    const text = printModule(module)
    const { result, stderr } = assemble(text, target)
    t.equal(result.exitCode, 0, `${name}: ptxas accepts .version 8.3`, { stderr })
    // Printed by hand at the target's own lowest version, which the printer no longer chooses.
    const lowest = target === 'sm_90a' ? '8.0' : '7.8'
    const old = assemble(text.replace('.version 8.3', `.version ${lowest}`), target)
    if (at === null) {
      t.equal(old.result.exitCode, 0, `${name}: ptxas takes .version ${lowest} too`, { stderr: old.stderr })
      continue
    }
    t.equal(old.result.exitCode, 255, `${name}: ptxas refuses .version ${lowest}`)
    t.match(old.stderr, /Feature '(?:Type \.b128|Instruction type \.b128 for instruction \w+)' requires PTX ISA \.version 8\.3 or later/)
    t.equal(assemble(text.replace('.version 8.3', '.version 8.2'), target).result.exitCode, 255, `${name}: and 8.2`)
  }
})

// Cache qualifiers are upper case after their level: ld.global.L2::256B, ld.global.L1::evict_last.
// The opcode itself is lower case (RET is refused, above); its modifiers print as given.
const upperCaseModifiers: PtxModule = {
  target: 'sm_90',
  functions: [{
    kind: 'entry', name: 'k', params: [{ name: 'p', type: 'u64' }],
    body: [{ kind: 'reg', type: 'b64', name: '%rd', count: 2 }, { kind: 'reg', type: 'b32', name: '%r', count: 2 },
      ins('ld.param.u64', '%rd1', addr('p')), ins('ld.global.L2::256B.b32', '%r1', addr('%rd1')),
      ins('ld.global.L1::evict_last.b32', '%r0', addr('%rd1')), ins('ret')],
  }],
}

t.test('modifiers in upper case print as given', async (t) => {
  const text = printModule(upperCaseModifiers)
  t.match(text, /\tld\.global\.L2::256B\.b32 %r1, \[%rd1\];/)
  t.match(text, /\tld\.global\.L1::evict_last\.b32 %r0, \[%rd1\];/)
})

t.test('modifiers in upper case: ptxas 13.0 takes them', { skip: skipWithoutPtxas }, async (t) => {
  const { result, stderr } = assemble(printModule(upperCaseModifiers), 'sm_90')
  t.equal(result.exitCode, 0, 'assembled', { stderr })
})

// A list of 2^32 - 1 (holes, not elements) is refused by its length: a copy of it ran V8's heap
// out, a fatal error no caller can catch. 2^24 elements is far past any real module.
t.test('a list longer than 2^24 is a RangeError naming it, not a process out of memory', async (t) => {
  const sparse = <T>(first?: T): T[] => {
    const list: T[] = first === undefined ? [] : [first]
    list.length = 2 ** 32 - 1
    return list
  }
  const rows: Array<[string, PtxModule, string]> = [
    ['functions', { target: 'sm_90', functions: sparse() }, 'functions.length'],
    ['a body', kernel(sparse()), 'functions[0].body.length'],
    ['params', { target: 'sm_90', functions: [{ kind: 'entry', name: 'k', params: sparse(), body: [ins('ret')] }] }, 'functions[0].params.length'],
    ['variables', { target: 'sm_90', variables: sparse(), functions: [] }, 'variables.length'],
  ]
  for (const [name, module, field] of rows) {
    t.throws(() => printModule(module), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: `${field} must be at most 16777216 (received number 4294967295)` }, name)
  }
})
