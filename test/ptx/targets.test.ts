// The PTX ISA table: its rows as the issue states them, version resolution, and every row
// re-measured against the real ptxas (the lowest accepted .version, and the one below it rejected).
import t from 'tap'
import {
  PTX_ISA_BY_TARGET, PTX_ISA_MAX, PTX_ISA_VERSIONS, checkPtxIsa, comparePtxIsa, gpuNames, printModule, ptxIsaFor,
  resolvePtxIsa, type GpuName,
} from '../../lib/ptx/index.js'
import { assemble, skipWithoutPtxas } from './ptxas.js'
import { run } from './run.js'

// The table, written out independently of the library's.
const expected: [GpuName, string][] = [
  ['sm_90', '7.8'], ['sm_90a', '8.0'],
  ['sm_100', '8.6'], ['sm_100a', '8.6'], ['sm_100f', '8.8'],
  ['sm_103', '8.8'], ['sm_103a', '8.8'], ['sm_103f', '8.8'],
  ['sm_110', '9.0'], ['sm_110a', '9.0'], ['sm_110f', '9.0'],
  ['sm_120', '8.7'], ['sm_120a', '8.7'], ['sm_120f', '8.8'],
  ['sm_121', '8.8'], ['sm_121a', '8.8'], ['sm_121f', '8.8'],
]

// The released version just below each lowest one, which ptxas must reject for that target.
const previous: Record<string, string> = { '7.8': '7.7', '8.0': '7.8', '8.6': '8.5', '8.7': '8.6', '8.8': '8.7', '9.0': '8.8' }

t.test('ptxIsaFor: one row per target', async (t) => {
  t.same(gpuNames().sort(), expected.map(([gpu]) => gpu).sort(), 'the table has exactly the issue\'s targets')
  for (const [gpu, version] of expected) t.equal(ptxIsaFor(gpu), version, `${gpu} -> ${version}`)
  t.equal(ptxIsaFor('sm_103'), '8.8')
  t.equal(PTX_ISA_MAX, '9.0')
})

t.test('ptxIsaFor: bad targets', async (t) => {
  const rows: [unknown, string, string][] = [
    ['sm_80', 'ERR_PTX_UNKNOWN_TARGET', 'RangeError'],
    ['sm_90f', 'ERR_PTX_UNKNOWN_TARGET', 'RangeError'],
    ['compute_100', 'ERR_PTX_UNKNOWN_TARGET', 'RangeError'],
    ['SM_100', 'ERR_PTX_UNKNOWN_TARGET', 'RangeError'],
    ['toString', 'ERR_PTX_UNKNOWN_TARGET', 'RangeError'],
    [100, 'ERR_PTX_INVALID_ARG_TYPE', 'TypeError'],
    [undefined, 'ERR_PTX_INVALID_ARG_TYPE', 'TypeError'],
  ]
  for (const [gpu, code, name] of rows) {
    t.throws(() => ptxIsaFor(gpu as string), { code, name, message: /^gpu: / }, `${String(gpu)} -> ${code}`)
  }
})

t.test('comparePtxIsa orders versions numerically', async (t) => {
  const rows: [string, string, number][] = [
    ['7.8', '8.0', -1], ['8.0', '7.8', 1], ['8.8', '8.8', 0], ['8.8', '9.0', -1], ['8.10', '8.9', 1],
  ]
  for (const [a, b, sign] of rows) t.equal(Math.sign(comparePtxIsa(a, b)), sign, `${a} vs ${b}`)
})

t.test('resolvePtxIsa: inferred, explicit, too old, unknown', async (t) => {
  const ok: [GpuName, string | undefined, string | undefined, string][] = [
    ['sm_90', undefined, undefined, '7.8'],
    ['sm_90', undefined, '9.0', '9.0'], // a feature raises an inferred version
    ['sm_110', undefined, '8.0', '9.0'], // ... but never lowers it
    ['sm_90', '8.5', '9.0', '8.5'], // an explicit version is never raised
    ['sm_103', '8.8', undefined, '8.8'],
    ['sm_103', '9.0', undefined, '9.0'],
  ]
  for (const [gpu, explicit, floor, want] of ok) {
    t.equal(resolvePtxIsa(gpu, explicit, floor), want, `${gpu} explicit=${explicit} floor=${floor}`)
  }
  const bad: [GpuName, string, string, RegExp][] = [
    ['sm_103', '8.6', 'ERR_PTX_VERSION_TOO_OLD', /PTX ISA 8\.6 is too old for target sm_103, which needs PTX ISA 8\.8/],
    ['sm_110', '8.8', 'ERR_PTX_VERSION_TOO_OLD', /8\.8.*sm_110.*9\.0/],
    ['sm_90', '9.1', 'ERR_PTX_UNKNOWN_VERSION', /"9\.1"/],
    ['sm_90', '8.9', 'ERR_PTX_UNKNOWN_VERSION', /"8\.9"/],
    ['sm_90', 'latest', 'ERR_PTX_UNKNOWN_VERSION', /"latest"/],
  ]
  for (const [gpu, explicit, code, message] of bad) {
    t.throws(() => resolvePtxIsa(gpu, explicit), { code, name: 'RangeError', message }, `${gpu} .version ${explicit}`)
  }
  t.throws(() => checkPtxIsa(8.8), { code: 'ERR_PTX_INVALID_ARG_TYPE', name: 'TypeError', message: /^version: / })
})

t.test('a too-old explicit version fails in the printer, before ptxas', async (t) => {
  t.throws(() => printModule({ target: 'sm_121', version: '8.7', functions: [] }),
    { code: 'ERR_PTX_VERSION_TOO_OLD', message: /^version: PTX ISA 8\.7 is too old for target sm_121/ })
})

t.test('every row matches the real ptxas', { skip: skipWithoutPtxas }, async (t) => {
  const kernel = (gpu: GpuName, version: string): string => printModule({
    target: gpu,
    version,
    functions: [{ kind: 'entry', name: 'k', linkage: 'visible', params: [], body: [{ kind: 'inst', opcode: 'ret', operands: [] }] }],
  })
  for (const gpu of gpuNames()) {
    const lowest = PTX_ISA_BY_TARGET[gpu]
    const accepted = assemble(kernel(gpu, lowest), gpu)
    t.equal(accepted.result.exitCode, 0, `${gpu} accepts .version ${lowest}`, { stderr: accepted.stderr })
    const below = previous[lowest]
    if (below === undefined) throw new Error(`no version below ${lowest} in this test's table`)
    // Printed by hand: the printer itself refuses a too-old version.
    const tooOld = kernel(gpu, lowest).replace(`.version ${lowest}`, `.version ${below}`)
    const rejected = assemble(tooOld, gpu)
    t.equal(rejected.result.exitCode, 255, `${gpu} rejects .version ${below}`)
    t.match(rejected.stderr, `PTX .version ${below} does not support .target ${gpu}`)
  }
  const listed = run('ptxas', ['--list-version']).stdout.toString('utf8').split('\n').filter((l) => l !== '')
  t.same(listed, [...PTX_ISA_VERSIONS], 'PTX_ISA_VERSIONS is what ptxas --list-version prints')
  t.equal(listed.at(-1), PTX_ISA_MAX, 'and PTX_ISA_MAX is its newest')
  const newest = kernel('sm_90', '9.0').replace('.version 9.0', '.version 9.1')
  t.match(assemble(newest, 'sm_90').stderr, "Unsupported .version 9.1; current version is '9.0'", 'ptxas 13.0 stops at 9.0')
})
