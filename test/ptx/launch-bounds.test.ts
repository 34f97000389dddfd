// Launch-bound normalization (docs/toolchain-contract.md, "Launch bounds"). One row per rule: what the printer keeps, which warnings it
// gives, and, run through the real ptxas, that the normalized PTX assembles cleanly while the same
// directives printed by hand (no normalization) are rejected or warned about by ptxas - so every
// rule is shown to matter.
import t from 'tap'
import {
  dims, emitPtx, normalizeLaunchBounds, printModule, type Dim3, type GpuName, type LaunchBounds, type PtxModule,
  type PtxWarning, type PtxWarningCode,
} from '../../lib/ptx/index.js'
import { assemble, skipWithoutPtxas } from './ptxas.js'

interface Row {
  name: string
  bounds: LaunchBounds
  target?: GpuName
  version?: string
  /** Directive lines printed after the entry's parameter list. */
  printed: string[]
  warnings: PtxWarningCode[]
  /** The .version printed. */
  printedVersion?: string
  /** What ptxas says about the same directives printed without normalization. */
  raw: { exitCode: number; stderr: RegExp } | null
}

const conflictNtid = /Conflicting directives: \.maxntid and \.reqntid cannot both be specified/
const conflictCluster = /Conflicting directives: \.reqnctapercluster and \.maxclusterrank cannot both be specified/
const blocksPrereq = /\.reqntid and \.reqnctapercluster directive\(s\) required for directive '\.blocksareclusters'/

const rows: Row[] = [
  {
    name: '.maxntid with .reqntid keeps .reqntid',
    bounds: { maxntid: 256, reqntid: 128 },
    printed: ['.reqntid 128'],
    warnings: ['PTX_MAXNTID_WITH_REQNTID'],
    raw: { exitCode: 255, stderr: conflictNtid },
  },
  {
    name: '.maxntid with .reqntid keeps .reqntid even when it is the larger',
    bounds: { maxntid: [64, 1, 1], reqntid: [32, 4, 1] },
    printed: ['.reqntid 32, 4, 1'],
    warnings: ['PTX_MAXNTID_WITH_REQNTID'],
    raw: { exitCode: 255, stderr: conflictNtid },
  },
  {
    name: '.maxclusterrank with .reqnctapercluster keeps .reqnctapercluster',
    bounds: { reqnctapercluster: [2, 1, 1], maxclusterrank: 4 },
    printed: ['.reqnctapercluster 2, 1, 1'],
    warnings: ['PTX_MAXCLUSTERRANK_WITH_REQNCTAPERCLUSTER'],
    raw: { exitCode: 255, stderr: conflictCluster },
  },
  {
    name: '.blocksareclusters alone is dropped',
    bounds: { blocksareclusters: true },
    printed: [],
    warnings: ['PTX_BLOCKSARECLUSTERS_WITHOUT_PREREQUISITES'],
    printedVersion: '7.8',
    raw: { exitCode: 255, stderr: blocksPrereq },
  },
  {
    name: '.blocksareclusters with only .reqntid is dropped',
    bounds: { reqntid: 128, blocksareclusters: true },
    printed: ['.reqntid 128'],
    warnings: ['PTX_BLOCKSARECLUSTERS_WITHOUT_PREREQUISITES'],
    raw: { exitCode: 255, stderr: blocksPrereq },
  },
  {
    name: '.blocksareclusters with only .reqnctapercluster is dropped',
    bounds: { reqnctapercluster: 2, blocksareclusters: true },
    printed: ['.reqnctapercluster 2'],
    warnings: ['PTX_BLOCKSARECLUSTERS_WITHOUT_PREREQUISITES'],
    raw: { exitCode: 255, stderr: blocksPrereq },
  },
  {
    name: '.blocksareclusters under an explicit .version 8.8 is dropped',
    bounds: { reqntid: 128, reqnctapercluster: 2, blocksareclusters: true },
    target: 'sm_100',
    version: '8.8',
    printed: ['.reqntid 128', '.reqnctapercluster 2'],
    warnings: ['PTX_BLOCKSARECLUSTERS_NEEDS_PTX_9_0'],
    printedVersion: '8.8',
    raw: { exitCode: 255, stderr: /Feature '\.blocksareclusters' requires PTX ISA \.version 9\.0 or later/ },
  },
  {
    name: '.blocksareclusters with its prerequisites raises an inferred version to 9.0',
    bounds: { reqntid: 128, reqnctapercluster: 2, blocksareclusters: true },
    printed: ['.reqntid 128', '.reqnctapercluster 2', '.blocksareclusters'],
    warnings: [],
    printedVersion: '9.0',
    raw: null,
  },
  {
    name: '.minnctapersm without .maxntid or .reqntid is dropped',
    bounds: { minnctapersm: 2, maxnreg: 64 },
    printed: ['.maxnreg 64'],
    warnings: ['PTX_MINNCTAPERSM_WITHOUT_NTID'],
    raw: { exitCode: 0, stderr: /\.minnctapersm is ignored when neither \.maxntid nor \.reqntid is specified/ },
  },
  {
    name: '.maxntid, .minnctapersm and .maxnreg go together',
    bounds: { maxntid: [16, 8, 2], minnctapersm: 2, maxnreg: 64 },
    printed: ['.maxntid 16, 8, 2', '.minnctapersm 2', '.maxnreg 64'],
    warnings: [],
    raw: null,
  },
  {
    name: '.explicitcluster and .maxclusterrank go together',
    bounds: { maxntid: 128, explicitcluster: true, maxclusterrank: 8 },
    printed: ['.maxntid 128', '.explicitcluster', '.maxclusterrank 8'],
    warnings: [],
    raw: null,
  },
  {
    name: 'false flags print nothing',
    bounds: { explicitcluster: false, blocksareclusters: false },
    printed: [],
    warnings: [],
    raw: null,
  },
  {
    name: 'everything at once: both conflicts resolved, .blocksareclusters kept',
    bounds: {
      maxntid: 256, reqntid: 128, minnctapersm: 2, maxnreg: 64, reqnctapercluster: [2, 1, 1],
      explicitcluster: true, maxclusterrank: 4, blocksareclusters: true,
    },
    target: 'sm_120',
    printed: ['.reqntid 128', '.minnctapersm 2', '.maxnreg 64', '.explicitcluster', '.reqnctapercluster 2, 1, 1', '.blocksareclusters'],
    warnings: ['PTX_MAXNTID_WITH_REQNTID', 'PTX_MAXCLUSTERRANK_WITH_REQNCTAPERCLUSTER'],
    printedVersion: '9.0',
    raw: { exitCode: 255, stderr: /Conflicting directives/ },
  },
]

function entryModule(bounds: LaunchBounds, target: GpuName, version?: string): PtxModule {
  return {
    target,
    ...(version === undefined ? {} : { version }),
    functions: [{ kind: 'entry', name: 'k', linkage: 'visible', params: [], launchBounds: bounds, body: [{ kind: 'inst', opcode: 'ret', operands: [] }] }],
  }
}

/** The directive lines between `.entry k()` and `{`. */
function printedDirectives(ptx: string): string[] {
  const lines = ptx.split('\n')
  const start = lines.indexOf('.visible .entry k()')
  const end = lines.indexOf('{', start)
  return lines.slice(start + 1, end)
}

/** The same kernel with the raw directives printed by hand, in the order given. */
function handPrinted(bounds: LaunchBounds, target: GpuName, version: string): string {
  const lines = Object.entries(bounds).map(([key, value]) =>
    typeof value === 'boolean' ? (value ? `.${key}` : '') : `.${key} ${dims(value as Dim3)}`)
  return [`.version ${version}`, `.target ${target}`, '.address_size 64', '', '.visible .entry k()',
    ...lines.filter((l) => l !== ''), '{', '\tret;', '}', ''].join('\n')
}

t.test('normalization table', async (t) => {
  for (const row of rows) {
    const target = row.target ?? 'sm_90'
    const emitted = emitPtx(entryModule(row.bounds, target, row.version))
    t.same(printedDirectives(emitted.ptx), row.printed, `${row.name}: directives`)
    t.same(emitted.warnings.map((w) => w.code), row.warnings, `${row.name}: warnings`)
    for (const w of emitted.warnings) {
      t.equal(w.function, 'k', `${row.name}: warning names the function`)
      t.match(w.message, new RegExp(`^k: dropped ${w.dropped.replace('.', '\\.')}: `), `${row.name}: warning says what was dropped`)
    }
    if (row.printedVersion !== undefined) t.equal(emitted.version, row.printedVersion, `${row.name}: .version`)
  }
})

t.test('the kept directive wins for a stated reason', async (t) => {
  const { warnings } = normalizeLaunchBounds({ maxntid: 256, reqntid: 128 }, 'k', '9.0')
  t.match(warnings[0]?.message, /\.reqntid 128 wins over \.maxntid 256 because the exact CTA shape implies the bound/)
})

t.test('normalization does not mutate its input', async (t) => {
  const bounds: LaunchBounds = { maxntid: [256], reqntid: 128, maxclusterrank: 2, reqnctapercluster: 2 }
  const copy = structuredClone(bounds)
  normalizeLaunchBounds(bounds, 'k', '9.0')
  printModule(entryModule(bounds, 'sm_90'))
  t.same(bounds, copy)
})

t.test('warnings go to onWarning, in order, and nowhere else', async (t) => {
  const seen: PtxWarning[] = []
  const module = entryModule({ maxntid: 256, reqntid: 128, minnctapersm: 1, maxclusterrank: 2, reqnctapercluster: 2 }, 'sm_90')
  const text = printModule(module, { onWarning: (w) => seen.push(w) })
  t.equal(text, emitPtx(module).ptx)
  t.same(seen, emitPtx(module).warnings)
  t.same(seen.map((w) => w.dropped), ['.maxntid', '.maxclusterrank'])
})

t.test('directives on a .func are dropped with a warning', async (t) => {
  const module = {
    target: 'sm_90',
    functions: [
      { kind: 'func', name: 'f', params: [], launchBounds: { maxntid: 128 }, pragmas: ['nounroll'], body: [{ kind: 'inst', opcode: 'ret', operands: [] }] },
      { kind: 'entry', name: 'k', linkage: 'visible', params: [], body: [{ kind: 'inst', opcode: 'ret', operands: [] }] },
    ],
  } as unknown as PtxModule
  const emitted = emitPtx(module)
  t.same(emitted.warnings.map((w) => [w.code, w.function, w.dropped]), [
    ['PTX_DIRECTIVE_ON_FUNC', 'f', '.maxntid'],
    ['PTX_DIRECTIVE_ON_FUNC', 'f', '.pragma "nounroll"'],
  ])
  t.notMatch(emitted.ptx, /\.maxntid|nounroll/)
})

t.test('malformed launch bounds are errors naming the field', async (t) => {
  const bad: [unknown, string, string, RegExp][] = [
    [{ maxntid: 0 }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /^functions\[0\]\.launchBounds\.maxntid: expected an integer from 1/],
    [{ reqntid: [32, 0] }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /^functions\[0\]\.launchBounds\.reqntid\[1\]: /],
    [{ reqntid: [1, 2, 3, 4] }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /reqntid: expected 1 to 3 dimensions, got 4/],
    [{ reqntid: [] }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /reqntid: expected 1 to 3 dimensions, got 0/],
    [{ maxntid: '256' }, 'TypeError', 'ERR_PTX_INVALID_ARG_TYPE', /maxntid: expected a positive integer or an array/],
    [{ maxnreg: 1.5 }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /maxnreg: expected an integer/],
    [{ minnctapersm: -1 }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /minnctapersm: /],
    [{ maxclusterrank: 2 ** 32 }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /maxclusterrank: /],
    [{ explicitcluster: 'yes' }, 'TypeError', 'ERR_PTX_INVALID_ARG_TYPE', /explicitcluster: expected a boolean/],
    [{ maxthreads: 128 }, 'RangeError', 'ERR_PTX_INVALID_VALUE', /launchBounds\.maxthreads: not a performance directive/],
    [[128], 'TypeError', 'ERR_PTX_INVALID_ARG_TYPE', /^functions\[0\]\.launchBounds: /],
    // A hole is a dimension not given: map skipped it, and `.maxntid , 32` was printed.
    // eslint-disable-next-line no-sparse-arrays
    [{ maxntid: [, 32] }, 'TypeError', 'ERR_PTX_INVALID_ARG_TYPE', /^functions\[0\]\.launchBounds\.maxntid\[0\]: expected a positive integer, got undefined/],
  ]
  for (const [bounds, name, code, message] of bad) {
    t.throws(() => printModule(entryModule(bounds as LaunchBounds, 'sm_90')), { name, code, message }, JSON.stringify(bounds))
  }
})

t.test('against the real ptxas: normalized assembles, hand-printed does not', { skip: skipWithoutPtxas }, async (t) => {
  for (const row of rows) {
    const target = row.target ?? 'sm_90'
    const emitted = emitPtx(entryModule(row.bounds, target, row.version))
    const normalized = assemble(emitted.ptx, target)
    t.equal(normalized.result.exitCode, 0, `${row.name}: normalized PTX assembles`, { stderr: normalized.stderr })
    t.equal(normalized.stderr, '', `${row.name}: and ptxas has nothing to say`)
    if (row.raw === null) continue
    const raw = assemble(handPrinted(row.bounds, target, emitted.version), target)
    t.equal(raw.result.exitCode, row.raw.exitCode, `${row.name}: hand-printed exits ${row.raw.exitCode}`)
    t.match(raw.stderr, row.raw.stderr, `${row.name}: ptxas says why`)
  }
  const onFunc = ['.version 7.8', '.target sm_90', '.address_size 64', '.func f()', '.maxntid 128', '{', '\tret;', '}', ''].join('\n')
  t.match(assemble(onFunc, 'sm_90').stderr, /Parsing error near '\.maxntid'/, 'ptxas rejects directives on a .func')
})
