// Program's inputs as a hostile caller gives them, found by a hostile round: each had got past
// create and failed the compile with no code, or mislabelled what it built.
import { constants } from 'node:buffer'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { Program, ProgramError, compileMany } from '../../lib/cuda/index.js'
import { ptxTarget } from '../../lib/cuda/program/pipeline.js'
import { readFatbin } from '../../lib/elf/index.js'
import { examplePtx } from '../../lib/ptx/index.js'
import { tempDir, withPollutedPrototype } from '../helpers.js'
import { MINIMAL_PTX, skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

const BASE = { input: MINIMAL_PTX, gpuName: 'sm_100' as const }

function createError(config: unknown): unknown {
  try {
    Program.create(config as never)
  } catch (error) {
    return error
  }
  return null
}

t.test('a gpuName list with a hole is refused at create, as one with undefined is', async t => {
  // eslint-disable-next-line no-sparse-arrays
  for (const gpuName of [[, 'sm_100'], [undefined, 'sm_100']]) {
    const error = createError({ ...BASE, gpuName })
    t.ok(error instanceof ProgramError && error.code === 'UNSUPPORTED_GPU_TARGET' && error.status === 2, `${JSON.stringify(gpuName)}: UNSUPPORTED_GPU_TARGET (status 2)`, { error })
  }
})

// A view whose ArrayBuffer was transferred away had create throw V8's uncoded "Cannot perform
// Construct on a detached ArrayBuffer"; a Proxy of a Uint8Array, or an object made with its
// prototype, V8's uncoded "incompatible receiver".
t.test('input: a detached view is no input buffer (status 2); a look-alike of a view is no PTX (status 3)', async t => {
  for (const View of [Uint8Array, Int8Array, DataView]) {
    const view = new View(new TextEncoder().encode(MINIMAL_PTX).buffer)
    structuredClone(view.buffer, { transfer: [view.buffer] })
    const error = createError({ ...BASE, input: view })
    t.ok(error instanceof ProgramError, `${View.name}: a ProgramError`, { error })
    t.match(error, { code: 'INPUT_BUFFER_NULL', status: 2, message: 'input buffer is null', reason: /^input's ArrayBuffer is detached/ }, `${View.name}, detached: status 2, saying why`)
  }
  const bytes = new TextEncoder().encode(MINIMAL_PTX)
  for (const [name, input] of [
    ['a Proxy of a Uint8Array', new Proxy(bytes, {})],
    ['a Proxy of a DataView', new Proxy(new DataView(bytes.buffer), {})],
    ['Object.create(Uint8Array.prototype)', Object.create(Uint8Array.prototype)],
  ] as const) {
    const error = createError({ ...BASE, input })
    t.ok(error instanceof ProgramError, `${name}: a ProgramError`, { error })
    t.match(error, { code: 'NOT_PTX', status: 3, reason: /made to look like bytes/ }, `${name}: status 3, saying why`)
  }
})

t.test('a forged Program (its prototype, not create) is a null program everywhere', async t => {
  const fake = Object.create(Program.prototype) as Program
  let sync: unknown = null
  let compiled: Promise<unknown> | null = null
  try {
    compiled = Program.compile(fake)
  } catch (error) {
    sync = error
  }
  t.equal(sync, null, 'Program.compile does not throw: it returns a promise')
  await t.rejects(compiled!, { code: 'PROGRAM_NULL', status: 4 }, 'which rejects with PROGRAM_NULL')
  t.throws(() => Program.release(fake), { code: 'PROGRAM_NULL' }, 'Program.release: PROGRAM_NULL')
  t.throws(() => Program.getOutput(fake, {}), { code: 'PROGRAM_NULL' }, 'Program.getOutput: PROGRAM_NULL')
  // Its own methods, called on it, say the same (they had read a private field it does not have).
  let own: Promise<unknown> | null = null
  t.doesNotThrow(() => { own = fake.compile() }, 'fake.compile() does not throw')
  await t.rejects(own!, { code: 'PROGRAM_NULL' }, 'it rejects with PROGRAM_NULL')
  t.throws(() => fake.getOutput(), { code: 'PROGRAM_NULL' }, 'fake.getOutput(): PROGRAM_NULL')
  t.throws(() => fake.release(), { code: 'PROGRAM_NULL' }, 'fake.release(): PROGRAM_NULL')
  await t.rejects(compileMany([fake]), { code: 'ERR_INVALID_ARG_TYPE', message: /programs\[0\]/ }, 'compileMany: a typed error naming programs[0]')
})

t.test('each config field is read once: what is checked is what is kept', skipWithoutPtxas, async t => {
  // A getter that answers a good value first and a bad one after: the first answer is the one used.
  const flipping = (good: unknown, bad: unknown) => {
    let reads = 0
    return { get: () => (reads++ === 0 ? good : bad), enumerable: true }
  }
  const dir = tempDir(t)
  for (const [field, good, bad] of [
    ['tempRoot', dir, 12345],
    ['env', { ...process.env }, { PATH: 'a\0b' }],
    ['onDiagnostic', () => {}, 'not a function'],
  ] as const) {
    const config = Object.defineProperty({ ...BASE, ptxasOptions: ['-v'] }, field, flipping(good, bad))
    const program = Program.create(config as never)
    const output = await program.compile()
    t.ok(output.cubin.length > 0, `${field}: the value checked is the one the compile used`)
  }
  // The env is a copy: the caller's object changed after create changes nothing.
  const env = { ...process.env } as Record<string, string | undefined>
  const program = Program.create({ ...BASE, env })
  env.PATH = 'a\0b'
  t.ok((await program.compile()).cubin.length > 0, 'env changed after create: the copy made at create is used')
})

t.test('tempRoot is made absolute at create; an empty one is refused', skipWithoutPtxas, async t => {
  t.match(createError({ ...BASE, tempRoot: '' }), { code: 'ERR_INVALID_ARG_VALUE', field: 'tempRoot' }, "'' is refused")
  // A relative tempRoot named like an option: every temp path a tool is given began with '-'.
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, '-A'))
  const here = process.cwd()
  process.chdir(dir)
  let program: Program
  try {
    program = Program.create({ input: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100', tempRoot: '-A', dumpSassCommand: 'echo' })
  } finally {
    process.chdir(here)
  }
  const output = await program.compile()
  t.match(output.sass, new RegExp(`^${path.join(dir, '-A').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`), 'the dump command was given an absolute path, in the directory as of create')
})

t.test("the .target ptxas reads: comments and strings stepped over", async t => {
  t.equal(ptxTarget('/*\n.target sm_52\n*/\n.version 8.0\n.target sm_100\n'), 'sm_100', 'a block comment is skipped')
  t.equal(ptxTarget('// .target sm_52\n.target sm_90a\n'), 'sm_90a', 'a line comment is skipped')
  t.equal(ptxTarget('.file 1 "a//b.cu"\n.target sm_80\n'), 'sm_80', 'a // inside a string starts no comment')
  t.equal(ptxTarget('/* never closed\n.target sm_52'), undefined, 'an unterminated comment hides the rest')
  t.equal(ptxTarget('.version 8.4\r\n.target sm_90a, texmode_independent\r\n'), 'sm_90a', 'a target list, CRLF')
  // Layouts ptxas takes, each of which had the PTX labelled with the first gpuName instead.
  t.equal(ptxTarget('.version 8.6\n.target\nsm_90\n'), 'sm_90', 'the target on the next line')
  t.equal(ptxTarget('.version 8.6\n.target /* arch */ sm_90\n'), 'sm_90', 'a comment between .target and its target')
  t.equal(ptxTarget('.version 8.6 .target sm_90\n'), 'sm_90', '.target on the line of .version')
  t.equal(ptxTarget('.version 8.6\n.target // arch\n sm_89,debug\n'), 'sm_89', 'a line comment after .target, a list without spaces')
  t.equal(ptxTarget('.version 8.6\n.targets sm_52\n.target sm_100\n'), 'sm_100', 'a word that only starts with .target is not it')
})

// create takes names up to 200 bytes; the fat binary's images were named `<name>.<gpu>.cubin`, and
// any name past 186 bytes failed every multi-target or embedPtx compile once ptxas had run.
t.test('the longest name create takes builds a fat binary', skipWithoutPtxas, async t => {
  const name = 'k'.repeat(200)
  const program = Program.create({ input: examplePtx('vadd', 'sm_90'), gpuName: ['sm_90', 'sm_100'], embedPtx: true, allowAnyTarget: true, name })
  const output = await program.compile()
  const entries = readFatbin(output.fatbin!)
  t.same(entries.map((e) => e.kind).sort(), ['elf', 'elf', 'ptx'], 'two cubins and the PTX')
  t.equal(entries.find((e) => e.kind === 'ptx')?.arch, 'sm_90', 'the PTX labelled with its own .target')
})

t.test('a gpuName hole is never read from a polluted Array.prototype', async t => {
  const prototype = Array.prototype as unknown as Record<number, unknown>
  prototype[0] = 'sm_90'
  try {
    // eslint-disable-next-line no-sparse-arrays
    t.match(createError({ ...BASE, gpuName: [, 'sm_100'] }), { code: 'UNSUPPORTED_GPU_TARGET' }, 'refused, not sm_90')
  } finally {
    delete prototype[0]
  }
})

t.test("embedPtx labels the PTX with the .target ptxas reads, not one in a comment", skipWithoutPtxas, async t => {
  const ptx = examplePtx('vadd', 'sm_100').replace(/^/, '/*\n.target sm_52\n*/\n')
  const output = await Program.create({ input: ptx, gpuName: 'sm_100', embedPtx: true }).compile()
  const entries = readFatbin(output.fatbin!).map((e) => `${e.kind}:${e.arch}`)
  t.ok(entries.includes('ptx:sm_100') && !entries.some((e) => e.endsWith('sm_52')), `the fat binary's PTX entry is for sm_100 (${entries.join(', ')})`)
})

// A config and the packager's input are read by their own fields: an inherited dumpSassCommand had
// been run by every compile, an inherited sass packaged into every object as <name>_sass, and an
// inherited fatbin had failed every compile ("cubin: expected undefined when fatbin is given").
t.test('a Program compile reads nothing inherited from a polluted Object.prototype', skipWithoutPtxas, async t => {
  const config = { input: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100' as const, name: 'vadd' }
  const plain = await Program.create(config).compile()
  for (const inherited of [{ sass: 'INJECTED', dumpSassCommand: 'echo INJECTED' }, { fatbin: new Uint8Array([1, 2, 3]) }]) {
    const what = Object.keys(inherited).join(', ')
    const output = await withPollutedPrototype(inherited, () => Program.create(config).compile()).catch((error: unknown) => error)
    t.match(output, { sass: null, fatbin: null }, `${what}: no SASS dump, no fat binary`)
    t.ok(Buffer.isBuffer((output as { object?: unknown }).object) && (output as { object: Buffer }).object.equals(plain.object), `${what}: the host object of the plain compile, byte for byte`)
  }
})

// The options of each tool run the compile makes, and the environment it gives them, are read by
// their own fields: an inherited inputRoute, maxBuffer or basePtxOptions had reached every ptxas
// (and an inherited inputRoute fatbinary), and an inherited MLIR_ENABLE_EVO and PTX_KNOBS_PATH
// had put --knobs-file in every ptxas argv, whether the config gave an env or not.
t.test('a compile\'s tool runs read nothing inherited from a polluted Object.prototype', skipWithoutPtxas, async t => {
  const one = { input: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100' as const, name: 'vadd' }
  const two = { ...one, gpuName: ['sm_100', 'sm_120'] }
  const rows: Array<[string, Record<string, unknown>]> = [
    ['inputRoute, not a route', { inputRoute: 'pipe' }],
    ['maxBuffer, one byte', { maxBuffer: 1 }],
    ['basePtxOptions, an option ptxas refuses', { basePtxOptions: '--bogus' }],
    ['the knob gate', { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/nonexistent/knobs.cfg' }],
  ]
  for (const config of [one, two, { ...one, env: { PATH: process.env.PATH } }]) {
    const which = `${[config.gpuName].flat().join(' ')}${'env' in config ? ', an env given' : ''}`
    const plain = await Program.create(config).compile()
    for (const [row, inherited] of rows) {
      const output = await withPollutedPrototype(inherited, () => Program.create(config).compile()).catch((error: unknown) => error)
      const { object } = output as { object?: unknown }
      t.ok(Buffer.isBuffer(object) && object.equals(plain.object), `${which}: ${row}: the host object of the plain compile`, { output })
    }
  }
})

// An inherited signal had cancelled every compile, and an inherited concurrency of 0 refused every
// batch; an inherited element filled a hole in compileMany's list with a program to compile.
t.test('compile and compileMany options, and the program list, are read by their own fields and elements', skipWithoutPtxas, async t => {
  const config = { input: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100' as const, name: 'vadd' }
  const plain = await Program.create(config).compile()
  const same = (output: unknown): boolean => Buffer.isBuffer((output as { object?: unknown }).object) && (output as { object: Buffer }).object.equals(plain.object)
  const aborted = { signal: AbortSignal.abort() }
  const compiled = await withPollutedPrototype(aborted, () => Program.create(config).compile()).catch((error: unknown) => error)
  t.ok(same(compiled), 'compile: an inherited aborted signal cancels nothing', { compiled })
  const statics = await withPollutedPrototype(aborted, () => Program.compile(Program.create(config), {})).catch((error: unknown) => error)
  t.ok(same(statics), 'Program.compile: the same', { statics })
  for (const inherited of [aborted, { concurrency: 0 }]) {
    const what = Object.keys(inherited).join(', ')
    const results = await withPollutedPrototype(inherited, () => compileMany([Program.create(config)])).catch((error: unknown) => error)
    t.ok(Array.isArray(results) && results[0].status === 0 && same(results[0].output), `compileMany: an inherited ${what} is not the batch's`, { results })
  }
  const program = Program.create(config)
  // eslint-disable-next-line no-sparse-arrays
  const holes = await withPollutedPrototype({ 0: program }, () => compileMany([, ])).catch((error: unknown) => error)
  t.match(holes, [{ status: 4, error: { code: 'PROGRAM_NULL' } }], 'compileMany: a hole is a null program, not an inherited one')
  t.notOk(program.compiled, 'and that program was not compiled')
})

t.test('a ptxasOptions list with a hole is refused at create, naming the field', async t => {
  // eslint-disable-next-line no-sparse-arrays
  t.match(createError({ ...BASE, ptxasOptions: [, '-v'] }), { code: 'ERR_INVALID_ARG_TYPE', field: 'ptxasOptions' }, 'a typed error, not a TypeError from reading the hole')
})

t.test('PTX text longer than a JavaScript string holds: ALLOCATION_FAILED, not "not UTF-8 text"', async (t) => {
  // 512 MiB and more of valid PTX text was reported as NOT_PTX, "it is not UTF-8 text": the
  // decoder's failure to make so long a string was taken for bad bytes.
  const bytes = Buffer.alloc(constants.MAX_STRING_LENGTH + 1, 0x20)
  bytes.write('.version 9.0\n.target sm_100\n.address_size 64\n')
  const error = (() => { try { Program.create({ input: bytes, gpuName: 'sm_100' }) } catch (e) { return e } })() as ProgramError
  t.ok(error instanceof ProgramError, 'a ProgramError')
  t.same([error.status, error.code, error.message], [1, 'ALLOCATION_FAILED', 'failed to allocate memory for program'])
  t.match(error.reason, `the input is ${bytes.length} bytes of text, more than the longest string JavaScript holds`)
})
