import t from 'tap'
import fc from 'fast-check'
import {
  buildPtxasArgv,
  buildBasePtxOptions,
  knobsFileFromEnv,
  ptxFitsInArgv,
  MAX_ARG_STRLEN,
  type PtxasArgvOptions,
} from '../../lib/cuda/index.js'
import { withPollutedPrototype } from '../helpers.js'

const PTX = '.version 8.8\n.target sm_100\n.address_size 64\n.visible .entry k(.param .u64 p){ ret; }'
const noEnv = {}

t.test("tileiras's argv, token for token and in order", async (t) => {
  const rows: Array<[string, PtxasArgvOptions, string[]]> = [
    ['defaults: opt-level 3, nothing else', { gpuName: 'sm_100', ptx: PTX, env: noEnv }, ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '--input-as-string', PTX]],
    ['opt level', { gpuName: 'sm_120', optLevel: 0, ptx: PTX, env: noEnv }, ['ptxas', '-arch', 'sm_120', '--opt-level', '0', '--input-as-string', PTX]],
    ['ptxas-options tokens come first', { gpuName: 'sm_103', ptxasOptions: ['--maxrregcount', '32', '-lineinfo'], ptx: PTX, env: noEnv }, ['ptxas', '--maxrregcount', '32', '-lineinfo', '-arch', 'sm_103', '--opt-level', '3', '--input-as-string', PTX]],
    ['ptxas-options as one string is split', { gpuName: 'sm_103', ptxasOptions: '--maxrregcount 32  -v', ptx: PTX, env: noEnv }, ['ptxas', '--maxrregcount', '32', '-v', '-arch', 'sm_103', '--opt-level', '3', '--input-as-string', PTX]],
    ['base options come last, split', { gpuName: 'sm_110', basePtxOptions: '-v  --warn-on-spills', ptx: PTX, env: noEnv }, ['ptxas', '-arch', 'sm_110', '--opt-level', '3', '--input-as-string', PTX, '-v', '--warn-on-spills']],
    ['knobs, nv-host, then base options', { gpuName: 'sm_100', hostCodePath: '/tmp/host.o', basePtxOptions: '-v', ptx: PTX, env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/etc/k.cfg' } },
      ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '--input-as-string', PTX, '--knobs-file=/etc/k.cfg', '--nv-host=/tmp/host.o', '-v']],
    ['the PTX is one token, whatever it holds', { gpuName: 'sm_100', ptx: "a b\t'c' \"d\" \\e", env: noEnv }, ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '--input-as-string', "a b\t'c' \"d\" \\e"]],
    ['file route: the path where --input-as-string <PTX> was', { gpuName: 'sm_100', inputFile: '/tmp/x/module.ptx', env: noEnv }, ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '/tmp/x/module.ptx']],
    ['outputFile appends -o', { gpuName: 'sm_100', ptx: PTX, basePtxOptions: '-v', outputFile: '/dev/stdout', env: noEnv }, ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '--input-as-string', PTX, '-v', '-o', '/dev/stdout']],
    ['a/f targets', { gpuName: 'sm_121f', ptx: PTX, env: noEnv }, ['ptxas', '-arch', 'sm_121f', '--opt-level', '3', '--input-as-string', PTX]],
    ['relocatable: --compile-only after the options, before the debug ones', { gpuName: 'sm_90', relocatable: true, deviceDebug: true, ptxasOptions: ['-v'], ptx: PTX, env: noEnv },
      ['ptxas', '-v', '--compile-only', '--device-debug', '-arch', 'sm_90', '--opt-level', '3', '--input-as-string', PTX]],
  ]
  for (const [name, options, argv] of rows) t.same(buildPtxasArgv(options), argv, name)
})

t.test('knob forwarding is AND-gated on MLIR_ENABLE_EVO and PTX_KNOBS_PATH', async (t) => {
  const rows: Array<[string, Record<string, string | undefined>, string | null]> = [
    ['both set', { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/k' }, '/k'],
    ['only MLIR_ENABLE_EVO: silently nothing', { MLIR_ENABLE_EVO: '1' }, null],
    ['only PTX_KNOBS_PATH: silently nothing', { PTX_KNOBS_PATH: '/k' }, null],
    ['neither', {}, null],
    ['set to empty counts as set (getenv)', { MLIR_ENABLE_EVO: '', PTX_KNOBS_PATH: '/k' }, '/k'],
    ['an undefined value is unset', { MLIR_ENABLE_EVO: undefined, PTX_KNOBS_PATH: '/k' }, null],
  ]
  for (const [name, env, expected] of rows) {
    t.equal(knobsFileFromEnv(env), expected, `${name}: knobsFileFromEnv`)
    const argv = buildPtxasArgv({ gpuName: 'sm_100', ptx: PTX, env })
    t.same(argv.filter((a) => a.startsWith('--knobs-file')), expected === null ? [] : [`--knobs-file=${expected}`], `${name}: argv`)
  }
})

t.test('the base-options string is built as the contract shows', async (t) => {
  const rows: Array<[string, Parameters<typeof buildBasePtxOptions>[0], string]> = [
    ['nothing', { env: {} }, ' '],
    ['base options only', { basePtxOptions: '-v', env: {} }, ' -v'],
    ['knobs', { env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/etc/k.cfg' } }, ' --knobs-file=/etc/k.cfg '],
    ['nv-host quoted', { hostCodePath: '/tmp/h.o', env: {} }, ' --nv-host="/tmp/h.o" '],
    ['nv-host escapes " and \\', { hostCodePath: '/tmp/a "b"\\c', env: {} }, ' --nv-host="/tmp/a \\"b\\"\\\\c" '],
    ['all three in order', { hostCodePath: '/h', basePtxOptions: '-O1', env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/k' } }, ' --knobs-file=/k --nv-host="/h" -O1'],
    // Not in the contract: its unquoted form would split this path into two argv tokens.
    ['a knobs path that needs quoting is quoted', { env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/my knobs/k.cfg' } }, ' --knobs-file="/my knobs/k.cfg" '],
  ]
  for (const [name, options, expected] of rows) t.equal(buildBasePtxOptions(options), expected, name)
})

t.test('paths with spaces, quotes or backslashes arrive in argv exactly as they were', async (t) => {
  const pathChars = fc.constantFrom('a', '/', ' ', '\t', '\n', '"', "'", '\\', '$', '`', '=', 'é')
  fc.assert(
    fc.property(fc.string({ unit: pathChars, maxLength: 30 }), fc.string({ unit: pathChars, maxLength: 30 }), (host, knobs) => {
      const argv = buildPtxasArgv({ gpuName: 'sm_100', ptx: PTX, hostCodePath: host, env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: knobs } })
      const tail = argv.slice(7)
      return tail.length === 2 && tail[0] === `--knobs-file=${knobs}` && tail[1] === `--nv-host=${host}`
    }),
    { numRuns: 1000 },
  )
  t.pass('1000 random paths survive')
})

t.test('env defaults to process.env for the gate', async (t) => {
  const saved = { evo: process.env.MLIR_ENABLE_EVO, path: process.env.PTX_KNOBS_PATH }
  t.teardown(() => {
    for (const [k, v] of [['MLIR_ENABLE_EVO', saved.evo], ['PTX_KNOBS_PATH', saved.path]] as const) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })
  process.env.MLIR_ENABLE_EVO = '1'
  process.env.PTX_KNOBS_PATH = '/from/process'
  t.ok(buildPtxasArgv({ gpuName: 'sm_100', ptx: PTX }).includes('--knobs-file=/from/process'))
})

t.test('options and env are read by their own fields: nothing inherited from a polluted Object.prototype is taken', async (t) => {
  const plain = ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '--input-as-string', PTX]
  // Each a field the options (or the env) do not have, which would change the argv if read.
  const rows: Array<[string, Record<string, unknown>]> = [
    ['an option of each kind', {
      optLevel: 0, ptxasOptions: ['--maxrregcount', '1'], relocatable: true, deviceDebug: true, lineinfo: true, sanitize: 'memcheck',
      hostCodePath: '/tmp/evil.o', basePtxOptions: '--bogus', outputFile: '/tmp/evil.cubin',
    }],
    ['an env of the options', { env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/tmp/evil.knobs' } }],
    ['the knob gate in a caller\'s env and in process.env', { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/tmp/evil.knobs' }],
  ]
  for (const [name, inherited] of rows) {
    const built = await withPollutedPrototype(inherited, () => [
      buildPtxasArgv({ gpuName: 'sm_100', ptx: PTX, env: {} }),
      buildPtxasArgv({ gpuName: 'sm_100', ptx: PTX }),
      buildBasePtxOptions({ env: {} }),
      knobsFileFromEnv({}),
      knobsFileFromEnv(),
    ]).catch((error: unknown) => error)
    t.same(built, [plain, plain, ' ', null, null], `${name}: the argv, base options and knobs file of no options`)
  }
  // The input and the target: an inherited ptx is not "ptx and inputFile", an inherited gpuName not a target.
  const viaFile = await withPollutedPrototype({ ptx: 'EVIL' }, () => buildPtxasArgv({ gpuName: 'sm_100', inputFile: '/x.ptx', env: {} })).catch((error: unknown) => error)
  t.same(viaFile, ['ptxas', '-arch', 'sm_100', '--opt-level', '3', '/x.ptx'], 'an inherited ptx: the file route\'s argv')
  const noTarget = await withPollutedPrototype({ gpuName: 'sm_90' }, () => buildPtxasArgv({ ptx: PTX, env: {} } as PtxasArgvOptions)).then(() => 'built', (error: unknown) => error)
  t.match(noTarget, { code: 'ERR_INVALID_ARG_TYPE', field: 'gpuName' }, 'a gpuName only inherited is missing')
})

t.test('bad input', async (t) => {
  const rows: Array<[string, unknown, string, string]> = [
    ['no options', undefined, 'ERR_INVALID_ARG_TYPE', 'options'],
    ['gpuName missing', { ptx: PTX }, 'ERR_INVALID_ARG_TYPE', 'gpuName'],
    ['gpuName not sm_NN', { gpuName: '100', ptx: PTX }, 'ERR_INVALID_ARG_VALUE', 'gpuName'],
    ['gpuName with a space', { gpuName: 'sm_100 -v', ptx: PTX }, 'ERR_INVALID_ARG_VALUE', 'gpuName'],
    ['virtual arch', { gpuName: 'compute_100', ptx: PTX }, 'ERR_INVALID_ARG_VALUE', 'gpuName'],
    ['optLevel not an integer', { gpuName: 'sm_100', optLevel: 1.5, ptx: PTX }, 'ERR_INVALID_ARG_TYPE', 'optLevel'],
    ['optLevel negative', { gpuName: 'sm_100', optLevel: -1, ptx: PTX }, 'ERR_OUT_OF_RANGE', 'optLevel'],
    ['no ptx', { gpuName: 'sm_100' }, 'ERR_INVALID_ARG_TYPE', 'ptx'],
    ['ptx and inputFile', { gpuName: 'sm_100', ptx: PTX, inputFile: '/x' }, 'ERR_INVALID_ARG_TYPE', 'ptx'],
    ['ptx with NUL', { gpuName: 'sm_100', ptx: 'a\0b' }, 'ERR_INVALID_ARG_VALUE', 'ptx'],
    ['ptx not a string', { gpuName: 'sm_100', ptx: Buffer.from('x') }, 'ERR_INVALID_ARG_TYPE', 'ptx'],
    ['ptxasOptions of numbers', { gpuName: 'sm_100', ptx: PTX, ptxasOptions: [1] }, 'ERR_INVALID_ARG_TYPE', 'ptxasOptions'],
    ['ptxasOptions unterminated quote', { gpuName: 'sm_100', ptx: PTX, ptxasOptions: "-v '" }, 'ERR_INVALID_ARG_VALUE', 'ptxasOptions'],
    ['basePtxOptions unterminated quote', { gpuName: 'sm_100', ptx: PTX, basePtxOptions: '"-v' }, 'ERR_INVALID_ARG_VALUE', 'basePtxOptions'],
    ['hostCodePath not a string', { gpuName: 'sm_100', ptx: PTX, hostCodePath: 1 }, 'ERR_INVALID_ARG_TYPE', 'hostCodePath'],
    ['env not an object', { gpuName: 'sm_100', ptx: PTX, env: 'PATH=/bin' }, 'ERR_INVALID_ARG_TYPE', 'env'],
    // Each named as given (these were reported as basePtxOptions, or without a code at all).
    ['hostCodePath with NUL', { gpuName: 'sm_100', ptx: PTX, hostCodePath: '/a\0b' }, 'ERR_INVALID_ARG_VALUE', 'hostCodePath'],
    ['PTX_KNOBS_PATH with NUL', { gpuName: 'sm_100', ptx: PTX, env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/k\0' } }, 'ERR_INVALID_ARG_VALUE', 'env.PTX_KNOBS_PATH'],
    ['PTX_KNOBS_PATH not a string', { gpuName: 'sm_100', ptx: PTX, env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: 7 } }, 'ERR_INVALID_ARG_TYPE', 'env.PTX_KNOBS_PATH'],
  ]
  for (const [name, options, code, field] of rows) {
    t.throws(() => buildPtxasArgv(options as PtxasArgvOptions), { code, field }, name)
  }
})

t.test('what fits in one argv string (MAX_ARG_STRLEN, NUL included)', async (t) => {
  t.equal(MAX_ARG_STRLEN, 131072)
  const rows: Array<[string, string, boolean]> = [
    ['131071 bytes fit', 'x'.repeat(131071), true],
    ['131072 bytes do not', 'x'.repeat(131072), false],
    ['bytes, not characters, count', 'é'.repeat(65536), false],
    ['empty', '', true],
  ]
  for (const [name, ptx, fits] of rows) t.equal(ptxFitsInArgv(ptx), fits, name)
})
