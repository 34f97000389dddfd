// runPtxas against the real ptxas (CUDA 13.0) on PATH, through the harness; fake ptxas scripts
// for the exit-code rows a real ptxas cannot produce on demand.
import t from 'tap'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dumpSass, dumpSassAsync, runPtxas, runPtxasAsync, renamePtxasInput, KnobFileError, type RunPtxasOptions, type PtxasRun } from '../../lib/cuda/index.js'
import { DIAGNOSTIC } from '../../lib/spawn/index.js'
import { bigPtx, fakeTool, kernelPtx, openFds, ptxasFromShell, scratchDir, skipWithoutPtxas, MINIMAL_PTX } from '../fixtures/cuda/helpers.js'
import { withPollutedPrototype } from '../helpers.js'

/** argv[1..] as a shell would get them: the run's argv without our `-o /dev/stdout`. */
function shellArgs(run: PtxasRun): string[] {
  if (run.argv.at(-2) !== '-o' || run.argv.at(-1) !== '/dev/stdout') throw new Error(`unexpected argv tail: ${run.argv.slice(-2)}`)
  return run.argv.slice(1, -2)
}

const TARGETS = ['sm_90', 'sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121']

/** Every table runs through both entry points: they share everything but the spawn. */
const APIS: Array<[string, (ptx: string, options: RunPtxasOptions) => Promise<PtxasRun>]> = [
  ['sync', async (ptx, options) => runPtxas(ptx, options)],
  ['async', runPtxasAsync],
]

t.test('each target: cubins byte-identical to ptxas run from a shell', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const rows: Array<[string, string, Omit<RunPtxasOptions, 'gpuName'>]> = [
    ...TARGETS.map((target): [string, string, Omit<RunPtxasOptions, 'gpuName'>] => [target, target, {}]),
    ['sm_100 with options', 'sm_100', { optLevel: 1, ptxasOptions: ['--maxrregcount', '40'], basePtxOptions: '-lineinfo --warn-on-spills' }],
    ['sm_120 at -O0', 'sm_120', { optLevel: 0 }],
  ]
  for (const [api, compile] of APIS) for (const [row, target, options] of rows) {
    const name = `${api} ${row}`
    const ptx = kernelPtx(target)
    const run = await compile(ptx, { gpuName: target, tempRoot: dir, ...options })
    t.equal(run.status, 'ok', `${name}: ok (${run.message})`)
    t.equal(run.inputRoute, 'argv', `${name}: the PTX went by --input-as-string`)
    t.equal(run.result.launcher, 'posix_spawn', `${name}: the posix_spawn fast path`)
    const reference = ptxasFromShell(dir, shellArgs(run))
    t.equal(reference.status, 0, `${name}: the shell run worked`)
    t.ok(run.cubin !== null && reference.cubin !== null && run.cubin.equals(reference.cubin), `${name}: byte-identical cubin (${run.cubin?.length} bytes)`)
    t.equal(run.diagnostics, reference.stderr, `${name}: same stderr`)

    const merged = await compile(ptx, { gpuName: target, mergeStderr: true, tempRoot: dir, ...options })
    t.ok(merged.cubin?.equals(reference.cubin!), `${name}: merged stderr, same cubin`)
    const viaFile = await compile(ptx, { gpuName: target, inputRoute: 'file', tempRoot: dir, ...options })
    t.equal(viaFile.inputRoute, 'file')
    t.ok(viaFile.cubin?.equals(reference.cubin!), `${name}: PTX file route, same cubin`)
  }
  t.same(readdirSync(dir).filter((f) => !f.startsWith('reference-')), [], 'no temp files left')
})

t.test('bad PTX: ptxas stderr surfaces verbatim', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const rows: Array<[string, string, string]> = [
    ['no .version', 'garbage', 'sm_100'],
    ['syntax error', MINIMAL_PTX.replace('ret;', 'ret'), 'sm_100'],
    ['ISA too old for the target', kernelPtx('sm_110', '8.8'), 'sm_110'],
    ['conflicting launch bounds', MINIMAL_PTX.replace('{ ret; }', '.maxntid 128 .reqntid 128 { ret; }'), 'sm_100'],
    ['target mismatch', kernelPtx('sm_120'), 'sm_90'],
  ]
  for (const [api, compile] of APIS) for (const [name, ptx, gpuName] of rows) {
    for (const mergeStderr of [false, true]) {
      const run = await compile(ptx, { gpuName, mergeStderr })
      const reference = ptxasFromShell(dir, shellArgs(run))
      const label = `${api} ${name}${mergeStderr ? ' (merged)' : ''}`
      t.equal(run.status, 'failed', `${label}: failed`)
      t.equal(run.exitCode, 255, `${label}: every ptxas failure exits 255`)
      t.equal(reference.status, 255)
      t.equal(run.cubin, null, `${label}: no partial output`)
      t.equal(run.diagnostics, reference.stderr, `${label}: stderr byte for byte`)
      t.match(run.diagnostics, /ptxas/, `${label}: it is ptxas's own text`)
      t.equal(run.message, 'ptxas exited with status 255')
    }
  }
})

for (const [api, compile] of APIS) t.test(`${api}: merged stderr: warnings printed before the cubin are split off`, skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const run = await compile(MINIMAL_PTX, { gpuName: 'sm_100', mergeStderr: true, ptxasOptions: ['--maxrregcount', '16'] })
  t.equal(run.status, 'ok')
  t.equal(run.result.stderr.length, 0, 'one buffer: nothing on a separate stderr')
  t.ok(run.result.stdout.indexOf('ptxas warning') === 0, 'the warning came first in the merged buffer')
  const reference = ptxasFromShell(dir, shellArgs(run))
  t.ok(run.cubin?.equals(reference.cubin!), 'the cubin, validated, byte-identical')
  t.equal(run.diagnostics, reference.stderr, 'the text around it is the diagnostic')
  t.equal(run.diagnostics, 'ptxas warning : For profile sm_100 adjusting per thread register count of 16 to lower bound of 24\n')
})

for (const [api, compile] of APIS) t.test(`${api}: PTX larger than one argv string goes through an anonymous file, or a private temp file`, skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  const refDir = join(dir, 'ref')
  for (const d of [tempRoot, refDir]) mkdirSync(d)
  const ptx = bigPtx(200 * 1024)
  t.ok(Buffer.byteLength(ptx) > 200 * 1024, '200 KB module')

  const forced = await compile(ptx, { gpuName: 'sm_100', inputRoute: 'argv', tempRoot })
  t.equal(forced.status, 'spawn-failed', '--input-as-string with 200 KB cannot even start')
  t.equal(forced.result.spawnError?.code, 'E2BIG')
  t.notMatch(forced.message, /could not be executed/i, 'E2BIG is not blamed on ptxas')

  const refFile = join(refDir, 'kernel.ptx')
  writeFileSync(refFile, ptx)
  const before = openFds()
  const anonymous = await compile(ptx, { gpuName: 'sm_100', tempRoot, inputBaseName: 'kernel' })
  t.equal(anonymous.status, 'ok', `compiled (${anonymous.message}${anonymous.diagnostics})`)
  t.equal(anonymous.inputRoute, 'memfd', 'the result says which route was taken: a memfd')
  t.notOk(anonymous.argv.includes('--input-as-string'))
  t.equal(anonymous.argv[5], '/dev/fd/0', 'ptxas reads it as its inherited stdin, by path')
  t.same(readdirSync(tempRoot), [], 'nothing was created on disk')
  t.equal(openFds(), before, 'the memfd is closed')
  const reference = ptxasFromShell(refDir, [...shellArgs(anonymous).slice(0, 4), refFile])
  t.ok(anonymous.cubin?.equals(reference.cubin!), 'same cubin as ptxas reading the file from a shell')

  // The fallback where memfd_create is not available, forced.
  const run = await compile(ptx, { gpuName: 'sm_100', tempRoot, inputBaseName: 'kernel', inputRoute: 'file' })
  t.equal(run.status, 'ok', `compiled (${run.message}${run.diagnostics})`)
  t.equal(run.inputRoute, 'file', 'the result says which route was taken: a file')
  const inputFile = run.argv[5]
  t.match(inputFile, /\/tileharness-[^/]+\/kernel\.ptx$/, 'positional input file named from inputBaseName')
  t.same(readdirSync(tempRoot), [], 'temp file and directory removed')
  t.ok(run.cubin?.equals(reference.cubin!), 'the same cubin again')
})

t.test('bad PTX on the memfd and file routes is still reported verbatim, and nothing is left', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const bad = bigPtx(140 * 1024).replace('ret;', 'ret')
  const anonymous = runPtxas(bad, { gpuName: 'sm_100', tempRoot })
  t.equal(anonymous.inputRoute, 'memfd')
  t.equal(anonymous.status, 'failed')
  t.match(anonymous.diagnostics, /^ptxas \/dev\/fd\/0, line \d+; fatal   : Parsing error/m, "ptxas's own message, naming the path it read")
  const run = runPtxas(bad, { gpuName: 'sm_100', tempRoot, inputRoute: 'file' })
  t.equal(run.inputRoute, 'file')
  t.equal(run.status, 'failed')
  t.match(run.diagnostics, /^ptxas \/.*\/tileharness-[^/]+\/module\.ptx, line \d+; fatal   : Parsing error/m, "ptxas's own message, naming the temp file")
  t.same(readdirSync(tempRoot), [])
})

t.test("inputName: on every route, ptxas's messages read as when ptxas is given the user's file", skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  // Errors on two lines (5 and 7), and a name with blanks and characters a pattern would take as syntax.
  const bad = kernelPtx('sm_100').replace('  mov.u32 %r1, %tid.x;', '  foo.bar;\n  mov.u32 %r9, 1;')
  const source = join(dir, 'my kernels (v2)', 'k$1.+.ptx')
  mkdirSync(join(dir, 'my kernels (v2)'))
  writeFileSync(source, bad)
  const reference = ptxasFromShell(dir, ['-arch', 'sm_100', '--opt-level', '3', source])
  t.equal(reference.status, 255, 'ptxas rejects the file')
  t.match(reference.stderr, /^ptxas .*k\$1\.\+\.ptx, line \d+; error   : /m, 'and names it by the path it was given')
  for (const [api, compile] of APIS) for (const inputRoute of ['argv', 'memfd', 'file'] as const) {
    const run = await compile(bad, { gpuName: 'sm_100', inputRoute, tempRoot, inputName: source })
    t.equal(run.status, 'failed', `${api} ${inputRoute}: failed`)
    t.equal(run.diagnostics, reference.stderr, `${api} ${inputRoute}: byte for byte what ptxas says given the file by path`)
    t.notMatch(run.diagnosticBytes.toString(), source, `${api} ${inputRoute}: diagnosticBytes stay as ptxas wrote them`)
    const unnamed = await compile(bad, { gpuName: 'sm_100', inputRoute, tempRoot })
    t.equal(unnamed.diagnostics, unnamed.diagnosticBytes.toString(), `${api} ${inputRoute}: without inputName, verbatim`)
  }
  t.same(readdirSync(tempRoot), [], 'no temp file left')
  // Only the location prefix at the start of a line is renamed, nothing else that mentions it.
  t.equal(renamePtxasInput('ptxas /dev/fd/0, line 3; error   : x\nsee /dev/fd/0, line 3;\nptxas fatal   : /dev/fd/0\n', '/dev/fd/0', 'a.ptx'),
    'ptxas a.ptx, line 3; error   : x\nsee /dev/fd/0, line 3;\nptxas fatal   : /dev/fd/0\n')
})

t.test('a temp file that cannot be made is a TempFileError with the cause, and nothing is started', async (t) => {
  const dir = scratchDir(t)
  const missing = join(dir, 'no-such-dir')
  const ptxas = fakeTool(dir, 'ptxas', `touch '${join(dir, 'started')}'`)
  for (const [api, compile] of APIS) {
    await t.rejects(compile(MINIMAL_PTX, { gpuName: 'sm_100', ptxas, inputRoute: 'file', tempRoot: missing, inputBaseName: 'kernel' }), {
      name: 'TempFileError', code: 'ENOENT', tempRoot: missing, file: 'kernel.ptx',
      message: `cannot create a temp file for kernel.ptx in '${missing}': no such file or directory (ENOENT)`,
    }, api)
  }
  t.same(readdirSync(dir), ['ptxas'], 'ptxas never started')
  // The SASS dump's temp cubin, likewise.
  const error = { name: 'TempFileError', code: 'ENOENT', file: 'k.cubin', message: `cannot create a temp file for k.cubin in '${missing}': no such file or directory (ENOENT)` }
  t.throws(() => dumpSass(Buffer.from('cubin'), { command: 'true', tempRoot: missing, inputBaseName: 'k' }), error, 'dumpSass')
  await t.rejects(dumpSassAsync(Buffer.from('cubin'), { command: 'true', tempRoot: missing, inputBaseName: 'k' }), error, 'dumpSassAsync')
})

// Fake ptxas scripts only: these rows run without a real ptxas too.
t.test("the contract's exit-code table, through the harness", async (t) => {
  const dir = scratchDir(t)
  const notExecutable = join(dir, 'ptxas-noexec')
  writeFileSync(notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 })
  const noShebang = join(dir, 'ptxas-no-shebang')
  writeFileSync(noShebang, 'exit 0\n', { mode: 0o755 })
  const rows: Array<[string, Partial<RunPtxasOptions>, string, number | null, string | RegExp, string]> = [
    // A failed start names the program, what failed and the errno's text (lib/spawn-failure.ts).
    ['not on PATH', { env: { PATH: join(dir, 'nowhere') } }, 'not-found', 127, "failed to run 'ptxas': No such file or directory", ''],
    ['no such file', { ptxas: join(dir, 'nope', 'ptxas') }, 'not-found', 127, `failed to run '${join(dir, 'nope', 'ptxas')}': No such file or directory`, ''],
    ['not executable', { ptxas: notExecutable }, 'not-executable', 126, `failed to run '${notExecutable}': Permission denied (it has no execute permission)`, ''],
    ['no #! line', { ptxas: noShebang }, 'not-executable', 126, `failed to run '${noShebang}': Exec format error (no #! line?)`, ''],
    ['a wrapper that cannot find ptxas exits 127', { ptxas: fakeTool(dir, 'wrap127', 'echo "wrap127: 2: exec: ptxas: not found" >&2; exit 127') }, 'not-found', 127, DIAGNOSTIC.notFound, 'wrap127: 2: exec: ptxas: not found\n'],
    ['a wrapper that cannot exec ptxas exits 126', { ptxas: fakeTool(dir, 'wrap126', 'exit 126') }, 'not-executable', 126, DIAGNOSTIC.couldNotExecute, ''],
    ['exit 1', { ptxas: fakeTool(dir, 'exit1', 'printf "  odd text \\r\\n\\n" >&2; exit 1') }, 'failed', 1, 'ptxas exited with status 1', '  odd text \r\n\n'],
    ['killed by a signal', { ptxas: fakeTool(dir, 'sigterm', 'echo dying >&2; kill -TERM $$') }, 'signaled', null, 'Terminated', 'dying\n'],
    ['timeout', { ptxas: fakeTool(dir, 'sleeper', 'exec sleep 30'), timeout: 300 }, 'timed-out', null, DIAGNOSTIC.timedOut, ''],
    ['exit 0 without a cubin', { ptxas: fakeTool(dir, 'quiet', 'exit 0') }, 'no-cubin', 0, /no cubin/, ''],
  ]
  for (const [api, compile] of APIS) for (const [row, options, status, exitCode, message, diagnostics] of rows) {
    const name = `${api} ${row}`
    const run = await compile(MINIMAL_PTX, { gpuName: 'sm_100', ...options })
    t.equal(run.status, status, `${name}: status`)
    t.equal(run.exitCode, exitCode, `${name}: exit code`)
    if (typeof message === 'string') t.equal(run.message, message, `${name}: message`)
    else t.match(run.message, message, `${name}: message`)
    t.notMatch(run.message, /crash/i, `${name}: never "ptxas crashed"`)
    t.equal(run.diagnostics, diagnostics, `${name}: stderr verbatim`)
    t.equal(run.cubin, null, `${name}: no cubin`)
  }
})

t.test('the child: stdin closed, environment inherited unless given, posix_spawn', async (t) => {
  const dir = scratchDir(t)
  const spy = fakeTool(dir, 'spy', [
    'if [ -e /proc/$$/fd/0 ]; then echo "stdin open" >&2; else echo "stdin closed" >&2; fi',
    'echo "probe=${TILEHARNESS_TEST_PROBE-unset}" >&2',
    'echo "argv0=$0 argc=$#" >&2',
    'exit 3',
  ].join('\n'))
  process.env.TILEHARNESS_TEST_PROBE = 'inherited'
  t.teardown(() => delete process.env.TILEHARNESS_TEST_PROBE)
  const inherited = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', ptxas: spy })
  t.match(inherited.diagnostics, 'stdin closed')
  t.match(inherited.diagnostics, 'probe=inherited')
  t.match(inherited.diagnostics, `argc=${inherited.argv.length - 1}`)
  t.equal(inherited.result.launcher, 'posix_spawn')
  const given = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', ptxas: spy, env: { PATH: process.env.PATH } })
  t.match(given.diagnostics, 'probe=unset', 'a given env replaces the inherited one')
})

t.test('knob files: the gated --knobs-file reaches ptxas, which rejects it', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const knobs = join(dir, 'my knobs.cfg')
  writeFileSync(knobs, '[knobs]\nSchedNumBB_Limit=100\n')
  const env = { ...process.env, MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: knobs }
  const run = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', env, validateKnobs: true })
  t.ok(run.argv.includes(`--knobs-file=${knobs}`), 'one token, spaces and all')
  t.equal(run.status, 'failed')
  t.equal(run.diagnostics, "ptxas fatal   : Unknown option '-knobs-file'\n", 'ptxas 13.0 has no --knobs-file (measured)')
})

t.test('validateKnobs rejects a malformed knob file before spawning', async (t) => {
  const dir = scratchDir(t)
  const env = { ...process.env, MLIR_ENABLE_EVO: '1' }
  const bad = join(dir, 'bad.cfg')
  writeFileSync(bad, 'SchedNumBB_Limit=100\n')
  const marker = join(dir, 'spawned')
  const ptxas = fakeTool(dir, 'marker', `touch '${marker}'; exit 0`)
  t.throws(
    () => runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', ptxas, env: { ...env, PTX_KNOBS_PATH: bad }, validateKnobs: true }),
    new KnobFileError('header-not-found', `Knobs header not found in ${bad}`, { source: bad }),
  )
  t.notOk(readdirSync(dir).includes('spawned'), 'rejected before spawning')
  const unchecked = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', ptxas, env: { ...env, PTX_KNOBS_PATH: bad } })
  t.equal(unchecked.status, 'no-cubin', 'without validateKnobs the file is forwarded unread')
  t.ok(readdirSync(dir).includes('spawned'))
})

t.test('--nv-host: a path with spaces, quotes and backslashes arrives intact', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const host = join(dir, 'host "code" \\ dir', 'blob.o')
  const run = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', hostCodePath: host })
  t.ok(run.argv.includes(`--nv-host=${host}`))
  const reference = ptxasFromShell(dir, shellArgs(run))
  t.equal(run.diagnostics, reference.stderr, 'ptxas says the same as from a shell')
  t.equal(run.diagnostics, `ptxas fatal   : Could not open input file '${host}'\n`, 'and names the whole path')
})

t.test('no temp file or fd leaks on any path', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const dir = scratchDir(t)
  const sleeper = fakeTool(dir, 'sleeper', 'exec sleep 30')
  const small = kernelPtx('sm_100')
  runPtxas(small, { gpuName: 'sm_100', tempRoot }) // warm up the addon
  const before = openFds()
  const paths: Array<[string, RunPtxasOptions, string?]> = [
    ['success, argv', { gpuName: 'sm_100' }],
    ['success, memfd', { gpuName: 'sm_100', inputRoute: 'memfd' }],
    ['failure, memfd', { gpuName: 'sm_100', inputRoute: 'memfd' }, 'garbage'],
    ['success, file', { gpuName: 'sm_100', inputRoute: 'file' }],
    ['failure, file', { gpuName: 'sm_100', inputRoute: 'file' }, 'garbage'],
    ['timeout, file', { gpuName: 'sm_100', inputRoute: 'file', ptxas: sleeper, timeout: 200 }],
    ['not found, file', { gpuName: 'sm_100', inputRoute: 'file', ptxas: join(dir, 'none') }],
  ]
  for (const [api, compile] of APIS) {
    for (const [name, options, ptx] of paths) {
      await compile(ptx ?? small, { ...options, tempRoot })
      t.same(readdirSync(tempRoot), [], `${api} ${name}: nothing left in the temp root`)
    }
    // The harness rejects this env after our temp file exists: the exception path.
    await t.rejects(compile(small, { gpuName: 'sm_100', tempRoot, inputRoute: 'file', env: { 'A=B': 'x' } }), TypeError)
    t.same(readdirSync(tempRoot), [], `${api} exception: nothing left in the temp root`)
    // The same after our memfd exists: it is closed (the fd count below).
    await t.rejects(compile(small, { gpuName: 'sm_100', tempRoot, inputRoute: 'memfd', env: { 'A=B': 'x' } }), TypeError)
  }
  t.equal(openFds(), before, 'no fds leaked')
})

t.test('bad input is rejected before anything is created or started', async (t) => {
  const tempRoot = scratchDir(t)
  const rows: Array<[string, unknown, unknown, string, string]> = [
    ['ptx not a string', Buffer.from('x'), { gpuName: 'sm_100' }, 'ERR_INVALID_ARG_TYPE', 'ptx'],
    ['ptx with NUL', 'a\0b', { gpuName: 'sm_100' }, 'ERR_INVALID_ARG_VALUE', 'ptx'],
    ['no options', MINIMAL_PTX, undefined, 'ERR_INVALID_ARG_TYPE', 'options'],
    ['bad gpuName', MINIMAL_PTX, { gpuName: 'sm100' }, 'ERR_INVALID_ARG_VALUE', 'gpuName'],
    ['bad inputRoute', MINIMAL_PTX, { gpuName: 'sm_100', inputRoute: 'pipe' }, 'ERR_INVALID_ARG_VALUE', 'inputRoute'],
    ['bad timeout', MINIMAL_PTX, { gpuName: 'sm_100', timeout: -1 }, 'ERR_OUT_OF_RANGE', 'timeout'],
    ['bad inputBaseName', MINIMAL_PTX, { gpuName: 'sm_100', inputBaseName: '../x' }, 'ERR_INVALID_ARG_VALUE', 'inputBaseName'],
    ['empty ptxas', MINIMAL_PTX, { gpuName: 'sm_100', ptxas: '' }, 'ERR_INVALID_ARG_VALUE', 'ptxas'],
    ['bad env', MINIMAL_PTX, { gpuName: 'sm_100', env: [] }, 'ERR_INVALID_ARG_TYPE', 'env'],
    ['bad basePtxOptions', MINIMAL_PTX, { gpuName: 'sm_100', basePtxOptions: "'" }, 'ERR_INVALID_ARG_VALUE', 'basePtxOptions'],
  ]
  for (const [name, ptx, options, code, field] of rows) {
    const full = options === undefined ? undefined : { inputRoute: 'file', tempRoot, ...(options as RunPtxasOptions) }
    t.throws(() => runPtxas(ptx as string, full as RunPtxasOptions), { code, field }, `sync ${name}: throws`)
    await t.rejects(runPtxasAsync(ptx as string, full as RunPtxasOptions), { code, field }, `async ${name}: rejects`)
    t.same(readdirSync(tempRoot), [], `${name}: no temp file`)
  }
})

t.test('runPtxas cannot be cancelled; runPtxasAsync can', async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  const sleeper = fakeTool(dir, 'sleeper', 'echo started >&2; exec sleep 30')
  t.throws(() => runPtxas(MINIMAL_PTX, { gpuName: 'sm_100', signal: new AbortController().signal }), { code: 'ERR_INVALID_ARG_VALUE', field: 'signal' })
  await t.rejects(runPtxasAsync(MINIMAL_PTX, { gpuName: 'sm_100', signal: 'stop' as unknown as AbortSignal }), { code: 'ERR_INVALID_ARG_TYPE', field: 'signal' })
  const controller = new AbortController()
  const pending = runPtxasAsync(MINIMAL_PTX, { gpuName: 'sm_100', ptxas: sleeper, inputRoute: 'file', tempRoot, signal: controller.signal })
  setTimeout(() => controller.abort(), 100)
  const run = await pending
  t.equal(run.status, 'aborted')
  t.equal(run.message, DIAGNOSTIC.aborted)
  t.equal(run.cubin, null)
  t.same(readdirSync(tempRoot), [], 'temp file removed after the abort')
})

t.test('options are read by their own fields: nothing inherited from a polluted Object.prototype is taken', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const nowhere = join(dir, 'nowhere')
  // Each inherited field would show: a program or PATH with no ptxas, a bad value refused, a run
  // cut short, a module ptxas refuses compiled instead of the one given.
  const rows: Array<[string, Record<string, unknown>, Partial<RunPtxasOptions>]> = [
    ['ptxas, a missing program', { ptxas: join(nowhere, 'ptxas') }, {}],
    ['env, a PATH without ptxas', { env: { PATH: nowhere } }, {}],
    ['timeout, not a number', { timeout: 'soon' }, {}],
    ['tempRoot, a missing directory', { tempRoot: nowhere }, { inputRoute: 'file' }],
    ['inputRoute, not a route', { inputRoute: 'pipe' }, {}],
    ['inputBaseName, a path', { inputBaseName: '../x' }, { inputRoute: 'file' }],
    ['maxBuffer, one byte', { maxBuffer: 1 }, {}],
    ['basePtxOptions, an option ptxas refuses', { basePtxOptions: '--bogus' }, {}],
    ['optLevel, out of range', { optLevel: -1 }, {}],
    ['signal, not an AbortSignal (and for runPtxas, refused)', { signal: 'stop' }, {}],
    ['ptx, a module ptxas refuses, for a PTX file', { ptx: 'garbage' }, { inputRoute: 'memfd' }],
  ]
  for (const [api, compile] of APIS) {
    const plain = await compile(MINIMAL_PTX, { gpuName: 'sm_100' })
    for (const [row, inherited, options] of rows) {
      const run = await withPollutedPrototype(inherited, () => compile(MINIMAL_PTX, { gpuName: 'sm_100', ...options })).catch((error: unknown) => error)
      const { status, cubin } = run as PtxasRun
      t.ok(status === 'ok' && cubin !== null && cubin.equals(plain.cubin!), `${api} ${row}: the cubin of the plain run`, { run })
    }
    // inputName: ptxas's messages name the input in its own words, not an inherited name.
    const bad = MINIMAL_PTX.replace('ret;', 'ret')
    const refused = await compile(bad, { gpuName: 'sm_100' })
    const renamed = await withPollutedPrototype({ inputName: 'EVIL.ptx' }, () => compile(bad, { gpuName: 'sm_100' })).catch((error: unknown) => error)
    t.equal((renamed as PtxasRun).diagnostics, refused.diagnostics, `${api} inputName: ptxas's own words`)
  }
})
