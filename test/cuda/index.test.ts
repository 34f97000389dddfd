// tileharness/cuda is lib/cuda/index.ts: everything the layer offers is exported from there.
import t from 'tap'
import { readFileSync } from 'node:fs'
import * as cuda from '../../lib/cuda/index.js'
import { withPollutedPrototype } from '../helpers.js'
import { fakeResult } from '../fixtures/cuda/helpers.js'

t.test('the subpath export maps to lib/cuda/index', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  t.same(pkg.exports['./cuda'], { types: './dist/cuda/index.d.ts', default: './dist/cuda/index.js' })
})

t.test('every entry point of the issue is exported', async (t) => {
  const functions = [
    'buildPtxasArgv', 'buildBasePtxOptions', 'knobsFileFromEnv', 'ptxFitsInArgv', 'runPtxas', 'runPtxasAsync',
    'interpretPtxasResult', 'ptxasChildSpec', 'probePtxas', 'clearPtxasProbeCache', 'parsePtxasHelp',
    'parsePtxasVersion', 'parsePtxasVersionList', 'splitCommand', 'quoteForSplit', 'dumpSass', 'dumpSassAsync',
    'buildNvdisasmArgv', 'interpretDumpResult', 'parseKnobFile', 'validateKnobFile', 'resolveCudaRoot', 'findTool',
    'searchPath', 'cubinExtent', 'splitMergedOutput', 'decodeToolResult', 'invalidType', 'invalidValue', 'outOfRange',
    'renamePtxasInput',
  ]
  for (const name of functions) t.type((cuda as Record<string, unknown>)[name], 'function', name)
  t.type(cuda.KnobFileError, 'function', 'KnobFileError')
  t.type(cuda.PtxasProbeError, 'function', 'PtxasProbeError')
  t.type(cuda.TempFileError, 'function', 'TempFileError')
  t.equal(cuda.MAX_ARG_STRLEN, 131072)
  t.equal(cuda.DEFAULT_DUMP_SASS_COMMAND, 'nvdisasm -c')
  t.equal(cuda.PTXAS_OUTPUT, '/dev/stdout')
})

// Every exported function that takes an object, an array, a buffer or a string checks it first:
// a wrong kind is a TypeError with a Node-style code that names the argument, never V8's own
// "Cannot read properties of null" from somewhere inside.
t.test('a wrong kind of argument is a coded TypeError naming it', async (t) => {
  const result = { aborted: false, timedOut: false, spawnError: null, exitCode: 0, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) }
  const rows: Array<[string, () => unknown, string]> = [
    ['knobsFileFromEnv(null)', () => cuda.knobsFileFromEnv(null as never), 'env'],
    ['buildBasePtxOptions(null)', () => cuda.buildBasePtxOptions(null as never), 'options'],
    ['ptxFitsInArgv(null)', () => cuda.ptxFitsInArgv(null as never), 'ptx'],
    ['buildFatbinaryArgv(null)', () => cuda.buildFatbinaryArgv(null as never), 'images'],
    ['buildFatbinaryArgv([null])', () => cuda.buildFatbinaryArgv([null as never]), 'images[0]'],
    ['buildFatbinaryArgv(images, null)', () => cuda.buildFatbinaryArgv([{ kind: 'elf', gpuName: 'sm_90', fileName: 'a.cubin' }], null as never), 'options'],
    ['ptxasChildSpec(null)', () => cuda.ptxasChildSpec(null as never, {}), 'argv'],
    ['ptxasChildSpec(argv, null)', () => cuda.ptxasChildSpec(['ptxas'], null as never), 'options'],
    ['interpretPtxasResult(null)', () => cuda.interpretPtxasResult(null as never, { argv: ['ptxas'], inputRoute: 'argv', mergeStderr: false }), 'result'],
    ['interpretPtxasResult(result, null)', () => cuda.interpretPtxasResult(result as never, null as never), 'context'],
    ['interpretDumpResult(null)', () => cuda.interpretDumpResult(null as never, ['nvdisasm']), 'result'],
    ['interpretDumpResult(result, null)', () => cuda.interpretDumpResult(result as never, null as never), 'argv'],
    ['decodeToolResult(null)', () => cuda.decodeToolResult(null as never, result as never), 'tool'],
    ['decodeToolResult(tool, null)', () => cuda.decodeToolResult('ptxas', null as never), 'result'],
    ['decodeToolResult(tool, result, null)', () => cuda.decodeToolResult('ptxas', result as never, null as never), 'spawned'],
    ['splitMergedOutput(null)', () => cuda.splitMergedOutput(null as never), 'buffer'],
    ['splitMergedOutput("text")', () => cuda.splitMergedOutput('text' as never), 'buffer'],
    ['cubinExtent(null)', () => cuda.cubinExtent(null as never), 'buffer'],
    ['renamePtxasInput(null)', () => cuda.renamePtxasInput(null as never, 'a', 'b'), 'diagnostics'],
    ['renamePtxasInput(text, null)', () => cuda.renamePtxasInput('x', null as never, 'b'), 'location'],
    ['renamePtxasInput(text, location, null)', () => cuda.renamePtxasInput('x', 'a', null as never), 'name'],
  ]
  for (const [name, call, field] of rows) {
    t.throws(call, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`^${field.replace(/[[\]]/g, '\\$&')} must be `) }, name)
  }
  // The images' own fields are checked, by the names the type gives them.
  const image = { kind: 'elf' as const, gpuName: 'sm_90', file: 'a.cubin' }
  const more: Array<[string, () => unknown, string]> = [
    ['an image without file', () => cuda.buildFatbinaryArgv([{ ...image, file: undefined as never }]), 'images\\[0\\]\\.file'],
    ['an image whose file is a number', () => cuda.buildFatbinaryArgv([{ ...image, file: 5 as never }]), 'images\\[0\\]\\.file'],
    ['an image whose gpuName is a symbol', () => cuda.buildFatbinaryArgv([{ ...image, gpuName: Symbol('sm_90') as never }]), 'images\\[0\\]\\.gpuName'],
    ['an image whose gpuName is an object', () => cuda.buildFatbinaryArgv([{ ...image, gpuName: { toString: () => 'sm_90' } as never }]), 'images\\[0\\]\\.gpuName'],
    ['cubinExtent at a symbol', () => cuda.cubinExtent(new Uint8Array(64), Symbol('0') as never), 'at'],
    ['interpretPtxasResult with inputName null', () => cuda.interpretPtxasResult(result as never, { argv: ['ptxas'], inputRoute: 'argv', mergeStderr: false, inputName: null as never }), 'context\\.inputName'],
    ['interpretPtxasResult with inputName { name } alone', () => cuda.interpretPtxasResult(result as never, { argv: ['ptxas'], inputRoute: 'argv', mergeStderr: false, inputName: { name: 'a.ptx' } as never }), 'context\\.inputName\\.location'],
  ]
  for (const [name, call, field] of more) t.throws(call, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`^${field} must be `) }, name)
  t.match(cuda.buildFatbinaryArgv([image]), ['fatbinary', /^--create=/, '-64', '--compress=false', '--image3=kind=elf,sm=90,file=a.cubin'], 'a whole image')
  // A sparse list is refused at its first hole: a copy of all 2^32 - 1 indexes first ran the heap
  // out, a fatal error that no caller can catch.
  const sparse: Array<typeof image> = [image]
  sparse.length = 2 ** 32 - 1
  t.throws(() => cuda.buildFatbinaryArgv(sparse), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^images\[1\] must be an object/ }, 'buildFatbinaryArgv: a sparse list of 2^32 - 1')
  await t.rejects(cuda.runFatbinaryAsync(sparse as never), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^images\[0\]\.fileName/ }, 'runFatbinaryAsync: the first image is checked first')
  const sparseInputs: unknown[] = [{ kind: 'elf', gpuName: 'sm_90', fileName: 'a.cubin', data: new Uint8Array(1) }]
  sparseInputs.length = 2 ** 32 - 1
  await t.rejects(cuda.runFatbinaryAsync(sparseInputs as never), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^images\[1\] must be an object/ }, 'runFatbinaryAsync: a sparse list of 2^32 - 1')
  // A batch or an options list of 2^32 - 1 is refused by its length, as every list is (lib/errors.ts, MAX_ELEMENTS).
  const holes: never[] = []
  holes.length = 2 ** 32 - 1
  await t.rejects(cuda.compileMany(holes), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^programs\.length must be at most 16777216/ }, 'compileMany of 2^32 - 1 holes')
  t.throws(() => cuda.buildPtxasArgv({ gpuName: 'sm_90', ptx: '', ptxasOptions: holes }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^ptxasOptions\.length must be at most 16777216/ }, 'ptxasOptions of 2^32 - 1 holes')
  // No bytes to read, a detached buffer among them: no cubin, and all of it (nothing) is the text.
  const detached = new Uint8Array(64)
  structuredClone(detached.buffer, { transfer: [detached.buffer] })
  t.equal(cuda.cubinExtent(detached), -1, 'cubinExtent of a detached Uint8Array')
  t.same(cuda.splitMergedOutput(detached), { cubin: null, diagnostics: Buffer.alloc(0), cubinOffset: -1 }, 'splitMergedOutput of a detached Uint8Array')
  // A plain Uint8Array is read as the bytes it holds, as a Buffer is.
  const merged = Buffer.concat([Buffer.from('warning\n'), Buffer.from('no cubin here')])
  t.same(cuda.splitMergedOutput(new Uint8Array(merged)).diagnostics, merged, 'a Uint8Array with no cubin: all of it is the diagnostic')
})

// A key that is no option had been ignored everywhere in this layer, a misspelt option silently
// replaced by its default (a `ptxass` ran the ptxas on PATH, a `timout` the default timeout). Every
// options object of the layer refuses one as the harness refuses one in a spec, naming its path;
// a symbol key, and a field inherited from a polluted Object.prototype, are no options of it.
t.test('every options object refuses a key that is no option, naming it; symbol and inherited keys are none', async (t) => {
  const result = fakeResult({ exitCode: 255 })
  const context = { argv: ['ptxas'], inputRoute: 'argv' as const, mergeStderr: false }
  const ptx = '.version 8.8\n.target sm_100\n.address_size 64\n.visible .entry k(){ ret; }'
  const image = { kind: 'elf' as const, gpuName: 'sm_100', fileName: 'a.cubin', data: Buffer.from('x') }
  const program = cuda.Program.create({ input: ptx, gpuName: 'sm_100' })
  type Options = Record<string | symbol, unknown>
  // Each: the call, options it takes, and the path an unknown key of them is named by.
  const rows: Array<[string, (options: Options) => unknown, Options, string]> = [
    ['buildPtxasArgv', (o) => cuda.buildPtxasArgv(o as never), { gpuName: 'sm_100', ptx }, 'options'],
    ['buildBasePtxOptions', (o) => cuda.buildBasePtxOptions(o as never), { env: {} }, 'options'],
    ['runPtxas', (o) => cuda.runPtxas(ptx, o as never), { gpuName: 'sm_100', ptxas: '/nonexistent/ptxas' }, 'options'],
    ['runPtxasAsync', (o) => cuda.runPtxasAsync(ptx, o as never), { gpuName: 'sm_100', ptxas: '/nonexistent/ptxas' }, 'options'],
    ['ptxasChildSpec', (o) => cuda.ptxasChildSpec(['ptxas'], o as never), { program: 'ptxas' }, 'options'],
    ['interpretPtxasResult', (o) => cuda.interpretPtxasResult(result as never, o as never), context, 'context'],
    ['interpretPtxasResult inputName', (o) => cuda.interpretPtxasResult(result as never, { ...context, inputName: o as never }), { location: 'a', name: 'b' }, 'context.inputName'],
    ['probePtxas', (o) => cuda.probePtxas(o as never), { ptxas: '/nonexistent/ptxas' }, 'options'],
    ['probePtxasAsync', (o) => cuda.probePtxasAsync(o as never), { ptxas: '/nonexistent/ptxas' }, 'options'],
    ['dumpSass', (o) => cuda.dumpSass(Buffer.from('x'), o as never), { command: 'true' }, 'options'],
    ['dumpSassAsync', (o) => cuda.dumpSassAsync(Buffer.from('x'), o as never), { command: 'true' }, 'options'],
    ['buildNvdisasmArgv', (o) => cuda.buildNvdisasmArgv(o as never), { sanitize: 'none' }, 'options'],
    ['runFatbinaryAsync', (o) => cuda.runFatbinaryAsync([image], o as never), { fatbinary: '/nonexistent/fatbinary' }, 'options'],
    ['buildFatbinaryArgv', (o) => cuda.buildFatbinaryArgv([{ kind: 'elf', gpuName: 'sm_100', file: 'a.cubin' }], o as never), { relocatable: true }, 'options'],
    ['parseKnobFile', (o) => cuda.parseKnobFile('[knobs]\nA=1\n', o as never), { source: 'a.cfg' }, 'options'],
    ['validateKnobFile', (o) => cuda.validateKnobFile('/nonexistent/knobs.cfg', o as never), { knobTypes: {} }, 'options'],
    ['checkGpuTarget', (o) => cuda.checkGpuTarget('sm_100', false, o as never), { timeout: 1000 }, 'where'],
    ['checkGpuTargets', (o) => cuda.checkGpuTargets(['sm_100'], false, o as never), { timeout: 1000 }, 'where'],
    ['variantTargets', (o) => cuda.variantTargets(o as never), { timeout: 1000 }, 'where'],
    ['Program.create', (o) => cuda.Program.create(o as never).release(), { input: ptx, gpuName: 'sm_100' }, 'config'],
    ['compile', (o) => program.compile(o as never), { signal: AbortSignal.abort() }, 'options'],
    ['Program.compile', (o) => cuda.Program.compile(program, o as never), { signal: AbortSignal.abort() }, 'options'],
    ['compileMany', (o) => cuda.compileMany([], o as never), { concurrency: 1 }, 'options'],
  ]
  /** What a call comes to: 'ok', or the code of what it threw or rejected with. */
  const outcome = async (call: () => unknown): Promise<unknown> => {
    try {
      await call()
      return 'ok'
    } catch (error) {
      return (error as { code?: unknown }).code
    }
  }
  for (const [name, call, options, at] of rows) {
    // A misspelling of the first option, and a key no option resembles.
    for (const key of [Object.keys(options)[0].toLowerCase() + 'x', 'bogus']) {
      const field = `${at}.${key}`
      let error: unknown = null
      try {
        await call({ ...options, [key]: 1 })
      } catch (thrown) {
        error = thrown
      }
      t.match(error, { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field, message: `${field} is not a known option` }, `${name}: ${field} refused`)
    }
    const plain = await outcome(() => call(options))
    t.not(plain, 'ERR_INVALID_ARG_VALUE', `${name}: the options alone are taken (${plain})`)
    t.equal(await outcome(() => call({ ...options, [Symbol('tag')]: 1 })), plain, `${name}: a symbol key is no option`)
    t.equal(await withPollutedPrototype({ bogus: 1 }, () => outcome(() => call(options))), plain, `${name}: an inherited key is no option`)
  }
  program.release()
})
