import t from 'tap'
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  Program,
  probePtxas,
  probePtxasAsync,
  clearPtxasProbeCache,
  parsePtxasHelp,
  parsePtxasVersion,
  parsePtxasVersionList,
  parsePtxasGpuNames,
  PtxasProbeError,
} from '../../lib/cuda/index.js'
import { ptxasProbeCacheSize } from '../../lib/cuda/probe.js'
import { variantTargets } from '../../lib/cuda/program/config.js'
import { eventually, withPollutedPrototype } from '../helpers.js'
import { fakeProbedPtxas, fakeTool, scratchDir, skipWithoutPtxas, MINIMAL_PTX, PTXAS } from '../fixtures/cuda/helpers.js'

// An excerpt of `ptxas --help` from CUDA 13.0, the shapes its option lines take.
const HELP = `
Usage  : ptxas [options] <ptx file>,...

Options
=======

--compile-only                                      (-c)                        
        Generate relocatable object.

--gpu-name <gpu name>                               (-arch)                     
        Specify name of NVIDIA GPU to generate code for.

--input-as-string <ptx string>,...                  (-ias)                      
        This option allows ptx modules to be passed directly as strings instead of
        via files.

--legacy-bar-warp-wide-behavior                     (-legacy-bar-warp-wide-behavior)
        This option will cause PTXAS to retain legacy behavior.

--opt-level <N>                                     (-O)                        
        Specify optimization level.
        Default value:  3.
`

const VERSION = `ptxas: NVIDIA (R) Ptx optimizing assembler
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Wed_Aug_20_01:55:12_PM_PDT_2025
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
`

t.test('parsing --help, --version and --list-version', async (t) => {
  t.same(parsePtxasHelp(HELP), [
    { long: '--compile-only', short: '-c', argument: null },
    { long: '--gpu-name', short: '-arch', argument: '<gpu name>' },
    { long: '--input-as-string', short: '-ias', argument: '<ptx string>,...' },
    { long: '--legacy-bar-warp-wide-behavior', short: '-legacy-bar-warp-wide-behavior', argument: null },
    { long: '--opt-level', short: '-O', argument: '<N>' },
  ])
  t.same(parsePtxasVersion(VERSION), { version: '13.0.88', release: '13.0' })
  t.same(parsePtxasVersion('something else'), { version: null, release: null })
  t.same(parsePtxasVersionList('1.0\n8.8\n9.0\n\n'), ['1.0', '8.8', '9.0'])
  const help = "--gpu-name <gpu name>   (-arch)\n        Specify name.\n        Allowed values for this option:  'compute_100','lto_90a',\n        'sm_100','sm_100a',\n        'sm_90a'.\n        Default value:  'sm_75'.\n"
  t.same(parsePtxasGpuNames(help), ['sm_100', 'sm_100a', 'sm_90a'], 'the sm_* allowed values of --gpu-name')
  t.same(parsePtxasGpuNames('--opt-level <N>  (-O)\n'), [], 'none listed')
})

t.test('probePtxas on the real ptxas: version, options, ISA list', skipWithoutPtxas, async (t) => {
  clearPtxasProbeCache()
  const probe = probePtxas()
  if (probe === null) throw new Error('ptxas on PATH but not probed')
  t.equal(probe.path, PTXAS, 'the binary found on PATH')
  t.match(probe.release, /^\d+\.\d+$/)
  t.match(probe.version, /^\d+\.\d+\.\d+$/)
  t.comment(`ptxas ${probe.version} at ${probe.path}: ${probe.options.length} options`)
  t.ok(probe.options.length > 40, 'the whole option table')
  t.ok(probe.ptxIsaVersions.includes('7.8'))

  const rows: Array<[string, boolean]> = [
    ['--input-as-string', true],
    ['-ias', true],
    ['--opt-level=3', true],
    ['-O3', true],
    ['-m64', true],
    ['-e', true],
    ['-evadd', false], // ptxas 13.0: "Unknown option 'evadd'": only -O and -m take a glued value
    ['-entry=vadd', false],
    ['-ox.cubin', false],
    ['-opt-level=1', false],
    ['-arch', true],
    ['--gpu-name', true],
    ['--arch', false], // ptxas: "Unknown option '-arch'" for --arch
    ['-gpu-name', false],
    ['--output-file', true],
    ['gpu-name', true],
    ['--nonexistent-option', false],
  ]
  for (const [option, accepted] of rows) t.equal(probe.accepts(option), accepted, option)
  if (probe.release === '13.0') {
    t.equal(probe.accepts('--knobs-file'), false, '--knobs-file is unknown to ptxas 13.0, up front')
    t.equal(probe.accepts('--knobs-file=/etc/k.cfg'), false)
    t.same(probe.ptxIsaVersions.at(-1), '9.0', 'ptxas 13.0 accepts .version up to 9.0')
    for (const gpu of ['sm_90', 'sm_90a', 'sm_100a', 'sm_100f', 'sm_103a', 'sm_120a', 'sm_121f']) {
      t.ok(probe.gpuNames.includes(gpu), `ptxas 13.0 allows --gpu-name ${gpu}`)
    }
    t.notOk(probe.gpuNames.some((g) => !g.startsWith('sm_')), 'only real targets (no compute_*, lto_*)')
  }
})

t.test('probes are cached per binary', async (t) => {
  const dir = scratchDir(t)
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const count = join(dir, 'count')
  const fake = fakeTool(bin, 'ptxas', [
    `echo x >> '${count}'`,
    'case "$1" in',
    '  --version) echo "Cuda compilation tools, release 99.1, V99.1.7" ;;',
    '  --help) printf -- "--fancy-new <N>   (-fn)\\n--knobs-file <file>   (-knobs)\\n" ;;',
    '  --list-version) printf "9.0\\n9.9\\n" ;;',
    '  *) exit 255 ;;',
    'esac',
  ].join('\n'))
  const runs = () => readFileLines(count)
  clearPtxasProbeCache()
  const env = { PATH: bin }
  const first = probePtxas({ env })
  t.equal(first?.path, fake)
  t.equal(first?.version, '99.1.7')
  t.ok(first?.accepts('--knobs-file'), 'a ptxas that has it says so')
  t.ok(first?.accepts('-fn'))
  t.same(first?.ptxIsaVersions, ['9.0', '9.9'])
  t.equal(runs(), 3, '--version, --help, --list-version')
  t.equal(probePtxas({ env }), first, 'second call: cached object')
  t.equal(probePtxas({ ptxas: fake, env: {} }), first, 'same binary by path: cached')
  t.equal(runs(), 3, 'no more runs')
  appendFileSync(fake, '\n# changed\n')
  const again = probePtxas({ env })
  t.not(again, first, 'a binary changed in place is probed again')
  t.equal(runs(), 6)
  // One entry per binary: a daemon whose ptxas wrapper is rewritten every build does not grow it.
  for (let i = 0; i < 3; i++) {
    appendFileSync(fake, `\n# changed ${i}\n`)
    probePtxas({ env })
  }
  t.equal(ptxasProbeCacheSize(), 1, 'a binary changed in place replaces its entry')
  appendFileSync(fake, '\nexit 3\n')
  t.throws(() => probePtxas({ env }), PtxasProbeError, 'the binary broken in place fails')
  t.throws(() => probePtxas({ env }), PtxasProbeError, 'and its failure stands')
  t.equal(ptxasProbeCacheSize(), 1, 'its failure replaces its probe')
  t.ok(Object.isFrozen(first), 'probes are immutable')
})

t.test('probePtxas: none found, and one that does not answer', async (t) => {
  const dir = scratchDir(t)
  clearPtxasProbeCache()
  t.equal(probePtxas({ env: { PATH: dir } }), null, 'no ptxas: null')
  t.equal(probePtxas({ ptxas: join(dir, 'nope') }), null, 'no such path: null')
  const broken = fakeTool(dir, 'ptxas', 'echo "broken install" >&2; exit 255')
  t.throws(() => probePtxas({ ptxas: broken }), PtxasProbeError)
  t.throws(() => probePtxas({ ptxas: broken }), { message: `${broken} --version failed: exit status 255` })
  t.throws(() => probePtxas({ ptxas: '' }), { code: 'ERR_INVALID_ARG_VALUE', field: 'ptxas' })
  t.throws(() => probePtxas({ timeout: -5 }), { code: 'ERR_OUT_OF_RANGE', field: 'timeout' })
  t.throws(() => probePtxas({ timeout: 2 ** 31 }), { code: 'ERR_OUT_OF_RANGE', field: 'timeout', message: /from 0 to 2147483647/ })
})

// A failed probe was not kept: each of a compile's checks (the CLI's target check, create's, the
// ptxasOptions check) asked a hung ptxas again, for its whole budget each time (121 s before the
// compile began, with the default 60 s).
t.test('a ptxas that does not answer is asked once per binary, again only with a longer budget than it ran out of', async (t) => {
  const dir = scratchDir(t)
  const count = join(dir, 'count')
  clearPtxasProbeCache()
  const broken = fakeTool(dir, 'broken', `echo x >> '${count}'; exit 255`)
  const first = t.throws(() => probePtxas({ ptxas: broken }), PtxasProbeError) as unknown as PtxasProbeError
  t.throws(() => probePtxas({ ptxas: broken }), { message: `${broken} --version failed: exit status 255` })
  t.equal(readFileLines(count), 1, 'asked once: a failure that is not a timeout stands')
  appendFileSync(broken, '\n# changed\n')
  t.throws(() => probePtxas({ ptxas: broken }), PtxasProbeError)
  t.equal(readFileLines(count), 2, 'a binary changed in place is asked again')
  t.ok(first)

  const hangsCount = join(dir, 'hangs-count')
  const hangs = fakeTool(dir, 'hangs', `echo x >> '${hangsCount}'; exec sleep 30`)
  t.throws(() => probePtxas({ ptxas: hangs, timeout: 200 }), { name: 'PtxasProbeError', message: /--version failed: Child timed out/ })
  t.throws(() => probePtxas({ ptxas: hangs, timeout: 200 }), PtxasProbeError)
  t.throws(() => probePtxas({ ptxas: hangs, timeout: 100 }), PtxasProbeError)
  t.equal(readFileLines(hangsCount), 1, 'not asked again with the same budget, or a shorter one')
  t.throws(() => probePtxas({ ptxas: hangs, timeout: 400 }), PtxasProbeError)
  t.equal(readFileLines(hangsCount), 2, 'asked again with a longer one')
  clearPtxasProbeCache()
  t.throws(() => probePtxas({ ptxas: hangs, timeout: 200 }), PtxasProbeError)
  t.equal(readFileLines(hangsCount), 3, 'clearPtxasProbeCache forgets failures too')
})

function readFileLines(path: string): number {
  try {
    return (readFileSync(path, 'utf8').match(/\n/g) ?? []).length
  } catch {
    return 0
  }
}

// Program.create asks ptxas synchronously the first time it meets an a/f target: a slow ptxas held
// the event loop that long. probePtxasAsync asks it on the loop (a timer fires while it runs), into
// the same cache, so create then runs no ptxas.
t.test('probePtxasAsync: the same probe, asked on the event loop, into the cache create uses', async (t) => {
  const dir = scratchDir(t)
  const count = join(dir, 'count')
  const gate = join(dir, 'gate')
  // --help waits for a file the test makes once a timer has fired during the probe.
  const slow = fakeTool(dir, 'ptxas', [
    `echo x >> '${count}'`,
    'case "$1" in',
    '  --version) echo "Cuda compilation tools, release 99.2, V99.2.0" ;;',
    `  --help) while [ ! -e '${gate}' ]; do sleep 0.01; done; printf -- "--gpu-name <gpu name>   (-arch)\\nAllowed values for this option:  'sm_100','sm_100a'.\\n" ;;`,
    '  --list-version) echo 9.0 ;;',
    '  *) exit 255 ;;',
    'esac',
  ].join('\n'))
  clearPtxasProbeCache()
  const pending = probePtxasAsync({ ptxas: slow })
  await new Promise((resolve) => setTimeout(resolve, 1))
  writeFileSync(gate, '')  // only a loop that turns gets here while the probe waits on --help
  const probe = await pending
  t.equal(probe?.version, '99.2.0')
  t.same(probe?.gpuNames, ['sm_100', 'sm_100a'])
  t.equal(readFileLines(count), 3, 'three questions')
  t.equal(probePtxas({ ptxas: slow }), probe, 'probePtxas finds it cached')
  const program = Program.create({ input: MINIMAL_PTX, gpuName: 'sm_100a', ptxas: slow })
  t.ok(program, 'create takes the a/f target the probe listed')
  t.equal(readFileLines(count), 3, 'and ran no ptxas for it')
  const failing = fakeTool(dir, 'broken', 'exit 4')
  await t.rejects(probePtxasAsync({ ptxas: failing }), PtxasProbeError, 'a ptxas that does not answer: PtxasProbeError, as probePtxas')
  t.throws(() => probePtxas({ ptxas: failing }), PtxasProbeError, 'cached as probePtxas caches it')
})

// Probes of one binary overlapping: an async one held up, a sync one that answers meanwhile, then
// the async one failing (its --help made to fail once the sync one is done). The failure ended
// last and replaced the answer, so create then found an error for a ptxas that answers. A probe
// begun before the cache was cleared put its answer back after the clear.
t.test('overlapping probes: a late failure keeps an answer, and a clear is not undone', async (t) => {
  const dir = scratchDir(t)
  const flag = (name: string) => join(dir, name)
  const fake = fakeTool(dir, 'ptxas', [
    'case "$1" in',
    `  --version) [ -e '${flag('hold')}' ] && touch '${flag('holding')}' && while [ ! -e '${flag('release')}' ]; do sleep 0.01; done; echo "Cuda compilation tools, release 99.3, V99.3.0" ;;`,
    `  --help) [ -e '${flag('fail')}' ] && exit 1; printf -- "--opt-level <N>   (-O)\\n" ;;`,
    '  --list-version) echo 9.0 ;;',
    '  *) exit 255 ;;',
    'esac',
  ].join('\n'))
  clearPtxasProbeCache()
  writeFileSync(flag('hold'), '')
  const late = probePtxasAsync({ ptxas: fake })
  t.ok(await eventually(() => existsSync(flag('holding'))), 'its --version has started, and waits')
  rmSync(flag('hold'))
  rmSync(flag('holding'))
  const answer = probePtxas({ ptxas: fake })
  t.equal(answer?.version, '99.3.0', 'the sync probe answered')
  writeFileSync(flag('fail'), '')
  writeFileSync(flag('release'), '')
  await t.rejects(late, PtxasProbeError, 'the held-up probe failed')
  rmSync(flag('fail'))
  t.equal(probePtxas({ ptxas: fake }), answer, 'the answer is still the cached one')

  rmSync(flag('release'))
  writeFileSync(flag('hold'), '')
  clearPtxasProbeCache()
  const before = probePtxasAsync({ ptxas: fake })
  t.ok(await eventually(() => existsSync(flag('holding'))), 'held up again')
  clearPtxasProbeCache()
  writeFileSync(flag('release'), '')
  t.ok(await before, 'the probe begun before the clear answered')
  t.equal(ptxasProbeCacheSize(), 0, 'but did not fill the cache the clear emptied')
})

t.test('options are read by their own fields: an inherited ptxas, env or timeout is not the probe\'s', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const nowhere = join(dir, 'nowhere')
  // A ptxas that lists one target no real one has: asked wherever an inherited ptxas was read.
  const other = fakeProbedPtxas(dir, 'ptxas', "--gpu-name <gpu name>   (-arch)\n  Allowed values for this option:  'sm_999a'.\n")
  const rows: Array<[string, Record<string, unknown>]> = [
    ['ptxas, a missing program', { ptxas: join(nowhere, 'ptxas') }],
    ['env, a PATH without ptxas', { env: { PATH: nowhere } }],
    ['timeout, out of range', { timeout: -5 }],
  ]
  for (const [api, probe] of [['sync', async () => probePtxas()], ['async', () => probePtxasAsync()]] as const) {
    const plain = await probe()
    t.equal(plain?.path, PTXAS, `${api}: the ptxas on PATH`)
    for (const [row, inherited] of rows) {
      const probed = await withPollutedPrototype(inherited, probe).catch((error: unknown) => error)
      t.equal(probed, plain, `${api} ${row}: the probe of the ptxas on PATH`)
    }
  }
  const targets = await withPollutedPrototype({ ptxas: other }, () => variantTargets()).catch((error: unknown) => error)
  t.same(targets, variantTargets(), 'variantTargets: the targets of the ptxas on PATH, not an inherited one\'s')
})
