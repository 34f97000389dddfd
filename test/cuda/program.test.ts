// The Program handle (docs/toolchain-contract.md, "The Program handle"): every status and verbatim message, the contract's validation order,
// compile through the real ptxas 13.0 (byte-identical to runPtxas), the SASS dump, cancellation,
// release, compileMany's input-order results, and no temp files or fds left on any path.
//
// nvdisasm is not installed on these machines: the dump rows use a fake `nvdisasm` script (a
// stand-in, labelled as such) and real programs that take a file argument (readelf -S -W).
// Rows that need a cubin without running ptxas use fake ptxas scripts that `cat` one made by the
// real ptxas; those rows skip with a reason when ptxas is absent.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { getEventListeners } from 'node:events'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  Program, ProgramError, TempFileError, checkGpuTarget, checkGpuTargets, compileMany, runPtxas, searchPath, variantTargets, EMPTY_DUMP_SASS_COMMAND,
  type CompileManyOptions, type CompileOptions, type ProgramConfig, type ProgramErrorCode, type ProgramOutput, type ProgramTool,
} from '../../lib/cuda/index.js'
import {
  EM_AARCH64, EM_X86_64, ET_REL, IMAGE_FILE_MACHINE_AMD64, IMAGE_FILE_MACHINE_ARM64, packageCoffObject, readCubin, readFatbin,
} from '../../lib/elf/index.js'
import { EXAMPLE_KERNELS, exampleKernel, examplePtx, ptxIsaFor, type GpuName } from '../../lib/ptx/index.js'
import { DIAGNOSTIC, spawnChildSync } from '../../lib/spawn/index.js'
import { native } from '../../lib/spawn/native.js'
import { programState } from '../../lib/cuda/program/handle.js'
import { fatbinPtxText, payloadText } from '../elf/host.js'
import { eventually, processState, revokedProxy, withPollutedPrototype } from '../helpers.js'
import type { PtxasLocation } from '../../lib/cuda/program/config.js'
import { bigPtx, fakeProbedPtxas, fakeTool, kernelPtx, openFds, scratchDir, skipWithoutPtxas, MINIMAL_PTX, PTXAS } from '../fixtures/cuda/helpers.js'

const TARGETS: GpuName[] = ['sm_90', 'sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121']
const KERNEL_NAMES: Record<string, string> = { vadd: 'vadd', saxpy: 'saxpy', reduce: 'reduce', cluster: 'cluster_exchange' }
const NATIVE_MACHINE = process.arch === 'arm64' ? EM_AARCH64 : EM_X86_64
const READELF = searchPath('readelf', process.env)
const BASE: ProgramConfig = { input: MINIMAL_PTX, gpuName: 'sm_100' }

function thrown(fn: () => unknown): ProgramError {
  try {
    fn()
  } catch (error) {
    if (error instanceof ProgramError) return error
    throw error
  }
  throw new Error('expected a ProgramError, nothing was thrown')
}

async function rejection(promise: Promise<unknown>): Promise<ProgramError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof ProgramError) return error
    throw error
  }
  throw new Error('expected a ProgramError, the promise resolved')
}

/** A cubin from the real ptxas, for fake ptxas scripts to hand back; null without ptxas. */
function realCubin(): Buffer | null {
  return PTXAS === null ? null : runPtxas(kernelPtx('sm_100'), { gpuName: 'sm_100' }).cubin
}

/** Diagnostics as onDiagnostic received them. */
function collector(): { calls: Array<[string, ProgramTool]>; onDiagnostic: (text: string, tool: ProgramTool) => void } {
  const calls: Array<[string, ProgramTool]> = []
  return { calls, onDiagnostic: (text, tool) => { calls.push([text, tool]) } }
}

t.test("the contract's error table: every status and message, verbatim", async (t) => {
  const rows: Array<[ProgramErrorCode, number, string]> = [
    // Status 1 cannot be provoked from JavaScript (a failed allocation throws before our code runs);
    // the row checks that the table and the error class carry it.
    ['ALLOCATION_FAILED', 1, 'failed to allocate memory for program'],
    ['CONFIGURATION_NULL', 2, 'configuration is null'],
    ['INPUT_BUFFER_NULL', 2, 'input buffer is null'],
    ['NOT_PTX', 3, 'input does not correspond to PTX text'],
    ['UNSUPPORTED_GPU_TARGET', 2, 'unsupported GPU target'],
    ['INVALID_OPT_LEVEL', 2, 'invalid optimization level'],
    ['OPTIMIZED_DEBUGGING', 2, 'optimized debugging is not supported, change optimization level to 0 or disable full debug info'],
    ['UNSUPPORTED_HOST_ARCH', 2, 'unsupported host architecture'],
    ['UNSUPPORTED_HOST_OS', 2, 'unsupported host operating system'],
    ['PROGRAM_NULL', 4, 'program is null'],
    ['OUTPUT_POINTER_NULL', 4, 'output pointer is null'],
    ['NOT_COMPILED', 4, 'program has not been compiled'],
    ['COMPILE_FAILED', 5, 'failed to compile PTX program'],
  ]
  for (const [code, status, message] of rows) {
    const error = new ProgramError(code)
    t.ok(error instanceof Error, `${code}: an Error`)
    t.equal(error.name, 'ProgramError')
    t.equal(error.status, status, `${code}: status ${status}`)
    t.equal(error.message, message, `${code}: verbatim`)
    t.equal(error.reason, '')
    t.equal(error.diagnostics, '')
  }
  t.equal(new ProgramError('NOT_PTX', { looksLike: 'tile-ir' }).message, 'input does not correspond to PTX text (it looks like Tile IR bytecode instead)')
  t.equal(new ProgramError('NOT_PTX', { looksLike: 'mlir' }).message, 'input does not correspond to PTX text (it looks like MLIR bytecode instead)')
  t.throws(() => new ProgramError('NO_SUCH' as ProgramErrorCode), { code: 'ERR_INVALID_ARG_VALUE' })
})

t.test("create: every check, with the contract's message, in the contract's order", async (t) => {
  const tileIr = Buffer.from([0x7f, 0x54, 0x69, 0x6c, 0x65, 0x49, 0x52, 0x00, 0x01, 0x02])
  const mlir = Buffer.concat([Buffer.from([0x4d, 0x4c, 0xef, 0x52]), Buffer.from('\x00\x05e IR bytecode')])
  type Row = [string, unknown, ProgramErrorCode, (string | RegExp)?]
  const rows: Row[] = [
    ['config null', null, 'CONFIGURATION_NULL'],
    ['config undefined', undefined, 'CONFIGURATION_NULL'],
    ['input null', { ...BASE, input: null }, 'INPUT_BUFFER_NULL'],
    ['input missing', { gpuName: 'sm_100' }, 'INPUT_BUFFER_NULL'],
    ['input empty', { ...BASE, input: '' }, 'NOT_PTX', 'it is empty'],
    ['input empty bytes', { ...BASE, input: Buffer.alloc(0) }, 'NOT_PTX', 'it is empty'],
    ['input not PTX', { ...BASE, input: 'int main() { return 0; }' }, 'NOT_PTX', 'it does not begin with a .version directive'],
    ['.version not first', { ...BASE, input: '.target sm_100\n.version 8.8\n' }, 'NOT_PTX', /\.version/],
    ['.version without a number', { ...BASE, input: '.version\n.target sm_100\n' }, 'NOT_PTX', /\.version/],
    ['Tile IR bytecode', { ...BASE, input: tileIr }, 'NOT_PTX', /Tile IR bytecode magic/],
    ['Tile IR magic in a string', { ...BASE, input: tileIr.toString('latin1') }, 'NOT_PTX', /Tile IR/],
    ['MLIR bytecode', { ...BASE, input: mlir }, 'NOT_PTX', /MLIR bytecode magic/],
    ['MLIR magic in a string', { ...BASE, input: 'ML\xefR...' }, 'NOT_PTX', /MLIR/],
    ['bytes not UTF-8', { ...BASE, input: Buffer.concat([Buffer.from('.version 8.8\n'), Buffer.from([0xff, 0xfe])]) }, 'NOT_PTX', 'it is not UTF-8 text'],
    ['a NUL byte', { ...BASE, input: `${MINIMAL_PTX}\0` }, 'NOT_PTX', `it contains a NUL byte at offset ${MINIMAL_PTX.length}`],
    ['a number', { ...BASE, input: 42 }, 'NOT_PTX', /got number/],
    // instanceof on it threw V8's uncoded "Cannot perform 'getPrototypeOf' on a proxy that has been revoked".
    ['a revoked Proxy', { ...BASE, input: revokedProxy() }, 'NOT_PTX', /got a revoked Proxy/],
    ['a module object that cannot be printed', { ...BASE, input: { target: 'sm_100', functions: 'none' } }, 'NOT_PTX', /PTX module object cannot be printed/],
    ['gpu sm_90', { ...BASE, gpuName: 'sm_90' }, 'UNSUPPORTED_GPU_TARGET', /"sm_90" is not one of sm_100, sm_103, sm_110, sm_120, sm_121/],
    ['gpu sm_100b', { ...BASE, gpuName: 'sm_100b' }, 'UNSUPPORTED_GPU_TARGET'],
    ['gpu sm_99a, which no ptxas lists', { ...BASE, gpuName: 'sm_99a' }, 'UNSUPPORTED_GPU_TARGET', /or an a\/f target ptxas accepts/],
    ['gpu SM_100', { ...BASE, gpuName: 'SM_100' }, 'UNSUPPORTED_GPU_TARGET'],
    ['gpu missing', { input: MINIMAL_PTX }, 'UNSUPPORTED_GPU_TARGET', 'gpuName is required, e.g. "sm_100"'],
    ['gpu a number', { ...BASE, gpuName: 100 }, 'UNSUPPORTED_GPU_TARGET'],
    ['allowAnyTarget, not a GPU name', { ...BASE, gpuName: 'compute_90', allowAnyTarget: true }, 'UNSUPPORTED_GPU_TARGET', /not a GPU name/],
    ['optLevel 4', { ...BASE, optLevel: 4 }, 'INVALID_OPT_LEVEL', 'optLevel must be an integer from 0 to 3 (got 4)'],
    ['optLevel -1', { ...BASE, optLevel: -1 }, 'INVALID_OPT_LEVEL'],
    ['optLevel 1.5', { ...BASE, optLevel: 1.5 }, 'INVALID_OPT_LEVEL'],
    ['optLevel "2"', { ...BASE, optLevel: '2' }, 'INVALID_OPT_LEVEL'],
    ['optLevel NaN', { ...BASE, optLevel: NaN }, 'INVALID_OPT_LEVEL'],
    ['deviceDebug at -O1', { ...BASE, optLevel: 1, deviceDebug: true }, 'OPTIMIZED_DEBUGGING'],
    ['deviceDebug at the default -O3', { ...BASE, deviceDebug: true }, 'OPTIMIZED_DEBUGGING', 'deviceDebug with optLevel 3'],
    ['hostArch x64', { ...BASE, hostArch: 'x64' }, 'UNSUPPORTED_HOST_ARCH', /"x64" is not one of x86_64, aarch64, arm64ec/],
    ['hostArch riscv64', { ...BASE, hostArch: 'riscv64' }, 'UNSUPPORTED_HOST_ARCH'],
    ['hostArch 0 (the C enum)', { ...BASE, hostArch: 0 }, 'UNSUPPORTED_HOST_ARCH'],
    ['hostOs darwin', { ...BASE, hostOs: 'darwin' }, 'UNSUPPORTED_HOST_OS', /"darwin" is not one of linux, windows/],
    ['hostOs empty', { ...BASE, hostOs: '' }, 'UNSUPPORTED_HOST_OS'],
    // Two faults at once: the one the contract checks first is the one reported.
    ['order: null input before a bad GPU', { input: null, gpuName: 'sm_90' }, 'INPUT_BUFFER_NULL'],
    ['order: the probe before the GPU', { input: 'garbage', gpuName: 'sm_90' }, 'NOT_PTX'],
    ['order: the GPU before the opt level', { ...BASE, gpuName: 'sm_90', optLevel: 9 }, 'UNSUPPORTED_GPU_TARGET'],
    ['order: the opt level before optimized debugging', { ...BASE, optLevel: 9, deviceDebug: true }, 'INVALID_OPT_LEVEL'],
    ['order: optimized debugging before the host arch', { ...BASE, optLevel: 2, deviceDebug: true, hostArch: 'mips' }, 'OPTIMIZED_DEBUGGING'],
    ['order: the host arch before the host OS', { ...BASE, hostArch: 'mips', hostOs: 'darwin' }, 'UNSUPPORTED_HOST_ARCH'],
    ['order: everything wrong', { input: null, gpuName: 'x', optLevel: 7, deviceDebug: true, hostArch: 'y', hostOs: 'z' }, 'INPUT_BUFFER_NULL'],
  ]
  for (const [name, config, code, reason] of rows) {
    const error = thrown(() => Program.create(config as ProgramConfig))
    const expected = new ProgramError(code, { looksLike: /Tile IR/.test(name) ? 'tile-ir' : /MLIR/.test(name) ? 'mlir' : null })
    t.equal(error.code, code, `${name}: ${code}`)
    t.equal(error.status, expected.status, `${name}: status ${expected.status}`)
    t.equal(error.message, expected.message, `${name}: "${expected.message}"`)
    if (typeof reason === 'string') t.equal(error.reason, reason, `${name}: reason`)
    else if (reason !== undefined) t.match(error.reason, reason, `${name}: reason`)
  }
})

t.test('create accepts what the contract accepts, and starts nothing', async (t) => {
  const dir = scratchDir(t)
  const marker = join(dir, 'started')
  const ptxas = fakeTool(dir, 'ptxas', `touch '${marker}'; exit 1`)
  const module = exampleKernel('vadd', 'sm_100')
  const rows: Array<[string, Partial<ProgramConfig>]> = [
    ...['sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121'].map((gpuName): [string, Partial<ProgramConfig>] => [gpuName, { gpuName }]),
    ['sm_90 with allowAnyTarget', { gpuName: 'sm_90', allowAnyTarget: true }],
    ['sm_100a with allowAnyTarget', { gpuName: 'sm_100a', allowAnyTarget: true }],
    ['every opt level: 0', { optLevel: 0 }],
    ['every opt level: 3', { optLevel: 3 }],
    ['deviceDebug at -O0', { optLevel: 0, deviceDebug: true }],
    ['deviceDebug false at -O3', { optLevel: 3, deviceDebug: false }],
    ['hostArch aarch64', { hostArch: 'aarch64' }],
    ['hostArch arm64ec (fails at compile)', { hostArch: 'arm64ec' }],
    ['hostOs windows', { hostOs: 'windows' }],
    ['PTX bytes', { input: Buffer.from(MINIMAL_PTX) }],
    ['PTX as a Uint8Array', { input: new TextEncoder().encode(MINIMAL_PTX) }],
    ['a PTX module object', { input: module }],
    ['comments and blanks before .version', { input: `// generated\n/* block\n comment */\n\n  \t.version 8.8\n.target sm_100\n` }],
  ]
  for (const [name, overrides] of rows) {
    const program = Program.create({ ...BASE, ptxas, ...overrides })
    t.notOk(program.compiled, `${name}: created, not compiled`)
    program.release()
  }
  t.equal(Program.create({ ...BASE, input: module }).ptx, examplePtx('vadd', 'sm_100'), 'a module object is printed with printModule')
  t.notOk(existsSync(marker), 'create never starts ptxas')
})

t.test('architecture-specific and family targets: taken when the ptxas to run lists them', async (t) => {
  const dir = scratchDir(t)
  // A ptxas whose --help allows sm_100a and sm_120f only: those are taken, sm_103a is not.
  const ptxas = fakeProbedPtxas(dir, 'ptxas', "--gpu-name <gpu name>   (-arch)\n        Allowed values for this option:  'sm_100','sm_100a','sm_120f'.\n")
  for (const gpuName of ['sm_100a', 'sm_120f']) {
    t.equal(Program.create({ ...BASE, ptxas, gpuName }).compiled, false, `${gpuName}: listed, so taken`)
  }
  const error = thrown(() => Program.create({ ...BASE, ptxas, gpuName: 'sm_103a' }))
  t.equal(error.code, 'UNSUPPORTED_GPU_TARGET', 'sm_103a: not listed by this ptxas')
  t.equal(Program.create({ ...BASE, ptxas, gpuName: 'sm_103a', allowAnyTarget: true }).compiled, false, 'allowAnyTarget takes it anyway')
})

t.test('compile: a/f targets need no allowAnyTarget, and the output names them with their suffix', skipWithoutPtxas, async (t) => {
  const rows: GpuName[] = ['sm_90a', 'sm_100a', 'sm_100f', 'sm_103a', 'sm_120a', 'sm_120f', 'sm_121a']
  const results = await compileMany(rows.map((gpuName) => Program.create({ input: exampleKernel('vadd', gpuName), gpuName, name: `vadd_${gpuName}` })), { concurrency: 2 })
  for (const [i, gpuName] of rows.entries()) {
    const output = results[i].output
    if (output === null) {
      t.fail(`${gpuName}: ${results[i].error?.reason}`)
      continue
    }
    t.equal(output.arch, gpuName, `${gpuName}: arch read back from the cubin`)
    t.equal(output.gpuName, gpuName)
    t.ok(output.cubin.equals(runPtxas(examplePtx('vadd', gpuName), { gpuName }).cubin!), `${gpuName}: ptxas's cubin, byte for byte`)
  }
})

t.test('create: fields the contract does not check are programming errors (TypeError/RangeError)', async (t) => {
  const rows: Array<[string, unknown, string, string]> = [
    ['config not an object', 'sm_100', 'ERR_INVALID_ARG_TYPE', 'config'],
    ['config a revoked Proxy', revokedProxy(), 'ERR_INVALID_ARG_TYPE', 'config'],
    ['deviceDebug not a boolean', { ...BASE, optLevel: 0, deviceDebug: 1 }, 'ERR_INVALID_ARG_TYPE', 'deviceDebug'],
    ['lineinfo not a boolean', { ...BASE, lineinfo: 'yes' }, 'ERR_INVALID_ARG_TYPE', 'lineinfo'],
    ['sanitize threadsteer', { ...BASE, sanitize: 'threadsteer' }, 'ERR_INVALID_ARG_VALUE', 'sanitize'],
    ['dumpSassCommand not a string', { ...BASE, dumpSassCommand: 42 }, 'ERR_INVALID_ARG_TYPE', 'dumpSassCommand'],
    ['timeout negative', { ...BASE, timeout: -1 }, 'ERR_OUT_OF_RANGE', 'timeout'],
    ['timeout past a timer (2^31 ms)', { ...BASE, timeout: 2 ** 31 }, 'ERR_OUT_OF_RANGE', 'timeout'],
    ['timeout a safe integer far past it', { ...BASE, timeout: Number.MAX_SAFE_INTEGER }, 'ERR_OUT_OF_RANGE', 'timeout'],
    ['name not a C identifier', { ...BASE, name: 'my-kernel' }, 'ERR_INVALID_ARG_VALUE', 'name'],
    ['onDiagnostic not a function', { ...BASE, onDiagnostic: 'stderr' }, 'ERR_INVALID_ARG_TYPE', 'onDiagnostic'],
    ['env not an object', { ...BASE, env: 'PATH=/bin' }, 'ERR_INVALID_ARG_TYPE', 'env'],
    ['an env value not a string (was found only by the compile)', { ...BASE, env: { HOME: '/root', DEBUG: 1 } }, 'ERR_INVALID_ARG_TYPE', 'env.DEBUG'],
    // Checked at create exactly as the spawn checks it (these were found only by the compile).
    ['an env variable name with =', { ...BASE, env: { 'A=B': 'x' } }, 'ERR_INVALID_ARG_VALUE', 'env["A=B"]'],
    ['an env value with NUL', { ...BASE, env: { DEBUG: 'a\0b' } }, 'ERR_INVALID_ARG_VALUE', 'env.DEBUG'],
    ['env a Map', { ...BASE, env: new Map([['PATH', '/bin']]) }, 'ERR_INVALID_ARG_TYPE', 'env'],
    ['ptxas empty', { ...BASE, ptxas: '' }, 'ERR_INVALID_ARG_VALUE', 'ptxas'],
  ]
  for (const [name, config, code, field] of rows) {
    t.throws(() => Program.create(config as ProgramConfig), { code, field }, name)
  }
  t.throws(() => new (Program as unknown as new () => Program)(), TypeError, 'only Program.create makes one')
})

// A misspelt option had been ignored: create took `optlevel: 0, devicedebug: true` and compiled at
// -O3 without debug info, compile took `sigal` and could not be cancelled, compileMany took
// `concurency` and ran the batch at the default. Each is refused as the harness refuses one.
t.test('unknown options are refused naming their path; symbol and inherited keys are no options', async (t) => {
  const unknown = (field: string) => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field, message: `${field} is not a known option` })
  t.throws(() => Program.create({ ...BASE, optLevel: 0, devicedebug: true } as ProgramConfig), unknown('config.devicedebug'), 'create: config.devicedebug')
  t.throws(() => Program.create({ ...BASE, optlevel: 0 } as ProgramConfig), unknown('config.optlevel'), 'create: config.optlevel')
  // Before the contract's checks: a misspelt input is not "input buffer is null".
  t.throws(() => Program.create({ inptu: MINIMAL_PTX, gpuName: 'sm_100' } as unknown as ProgramConfig), unknown('config.inptu'), 'create: config.inptu')
  const program = Program.create(BASE)
  await t.rejects(program.compile({ sigal: AbortSignal.abort() } as CompileOptions), unknown('options.sigal'), 'compile: options.sigal')
  await t.rejects(Program.compile(program, { sigal: AbortSignal.abort() } as CompileOptions), unknown('options.sigal'), 'Program.compile: options.sigal')
  await t.rejects(compileMany([], { concurency: 1 } as CompileManyOptions), unknown('options.concurency'), 'compileMany: options.concurency')
  t.throws(() => checkGpuTarget('sm_100', false, { ptxass: '/x' } as PtxasLocation), unknown('where.ptxass'), 'checkGpuTarget: where.ptxass')
  t.throws(() => checkGpuTargets(['sm_100'], false, { ptxass: '/x' } as PtxasLocation), unknown('where.ptxass'), 'checkGpuTargets: where.ptxass')
  t.throws(() => variantTargets({ ptxass: '/x' } as PtxasLocation), unknown('where.ptxass'), 'variantTargets: where.ptxass')

  // Not options: a symbol key, and a field inherited from a polluted Object.prototype. An aborted
  // signal fails the compile (status 5) before anything starts: the options were taken.
  const tag = Symbol('tag')
  const aborted = { signal: AbortSignal.abort(), [tag]: 1 }
  t.equal(Program.create({ ...BASE, [tag]: 1 } as ProgramConfig).compiled, false, 'create: a symbol key')
  t.match(await rejection(program.compile(aborted)), { status: 5 }, 'compile: a symbol key')
  t.same(await compileMany([], { concurrency: 1, [tag]: 1 } as CompileManyOptions), [], 'compileMany: a symbol key')
  t.same(checkGpuTarget('sm_100', false, { [tag]: 1 } as PtxasLocation), 'sm_100', 'checkGpuTarget: a symbol key')
  const inherited = await withPollutedPrototype({ bogus: 1 }, async () => [
    Program.create(BASE).compiled,
    (await rejection(program.compile({ signal: AbortSignal.abort() }))).status,
    await compileMany([]),
    checkGpuTarget('sm_100'),
  ]).catch((error: unknown) => error)
  t.same(inherited, [false, 5, [], 'sm_100'], 'an inherited bogus is no option of create, compile, compileMany or checkGpuTarget')
  program.release()
})

// PTX bytes in a Uint8ClampedArray, an Int8Array or a DataView had been taken for a PTX module
// object and refused with "target: expected a GPU name"; any view's own bytes are PTX bytes now.
t.test('create: PTX bytes in any ArrayBufferView, the view\'s own bytes', async (t) => {
  // The PTX at byte 8 of a buffer with other bytes around it, padded to whole 8-byte elements.
  const text = MINIMAL_PTX.padEnd(Math.ceil(MINIMAL_PTX.length / 8) * 8, ' ')
  const buffer = new ArrayBuffer(text.length + 16)
  new Uint8Array(buffer).fill(0x58)
  new TextEncoder().encodeInto(text, new Uint8Array(buffer, 8))
  const views: Array<[string, ArrayBufferView]> = [
    ['Uint8ClampedArray', new Uint8ClampedArray(buffer, 8, text.length)],
    ['Int8Array', new Int8Array(buffer, 8, text.length)],
    ['Uint16Array', new Uint16Array(buffer, 8, text.length / 2)],
    ['Float64Array', new Float64Array(buffer, 8, text.length / 8)],
    ['BigInt64Array', new BigInt64Array(buffer, 8, text.length / 8)],
    ['DataView', new DataView(buffer, 8, text.length)],
    ['a Buffer over part of the buffer', Buffer.from(buffer, 8, text.length)],
  ]
  for (const [name, input] of views) {
    const program = Program.create({ ...BASE, input })
    t.equal(program.ptx, text, `${name}: its bytes, and only its bytes, are the PTX`)
    program.release()
  }
})

t.test('compile and compileMany refuse a revoked Proxy naming its field (V8 threw its uncoded TypeError)', async (t) => {
  const program = Program.create(BASE)
  const message = /\(received a revoked Proxy\)$/
  await t.rejects(compileMany(revokedProxy() as Program[]), { code: 'ERR_INVALID_ARG_TYPE', field: 'programs', message }, 'programs')
  await t.rejects(compileMany([program], revokedProxy()), { code: 'ERR_INVALID_ARG_TYPE', field: 'options', message }, 'options')
  await t.rejects(compileMany([program], { signal: revokedProxy() as AbortSignal }), { code: 'ERR_INVALID_ARG_TYPE', field: 'signal', message }, 'signal')
  await t.rejects(program.compile(revokedProxy()), { code: 'ERR_INVALID_ARG_TYPE', field: 'options', message }, 'compile options')
  program.release()
})

t.test('status 4: program is null, output pointer is null, program has not been compiled', async (t) => {
  const dir = scratchDir(t)
  const program = Program.create({ ...BASE, ptxas: fakeTool(dir, 'ptxas', 'echo "fake ptxas: no" >&2; exit 1') })
  const code = (error: ProgramError) => [error.status, error.message]

  t.same(code(thrown(() => program.getOutput())), [4, 'program has not been compiled'], 'getOutput before compile')
  t.same(code(thrown(() => Program.getOutput(program, {}))), [4, 'program has not been compiled'], 'C-shaped getOutput before compile')
  t.same(code(thrown(() => Program.getOutput(program, null))), [4, 'output pointer is null'], 'C-shaped getOutput(program, NULL)')
  t.same(code(thrown(() => Program.getOutput(program, undefined))), [4, 'output pointer is null'])
  t.same(code(thrown(() => Program.getOutput(null, {}))), [4, 'program is null'], 'C-shaped getOutput(NULL, out)')
  t.same(code(thrown(() => Program.getOutput(null, null))), [4, 'program is null'], 'the program is checked before the output pointer')
  t.same(code(await rejection(Program.compile(null))), [4, 'program is null'], 'C-shaped compile(NULL)')
  t.same(code(thrown(() => Program.release(undefined))), [4, 'program is null'], 'C-shaped release(NULL)')

  const failed = await rejection(program.compile())
  t.equal(failed.status, 5, 'the compile failed')
  t.same(code(thrown(() => program.getOutput())), [4, 'program has not been compiled'], 'getOutput after a failed compile')
  t.notOk(program.compiled)

  Program.release(program)
  t.ok(program.released)
  t.same(code(thrown(() => program.getOutput())), [4, 'program is null'], 'getOutput after release')
  t.same(code(await rejection(program.compile())), [4, 'program is null'], 'compile after release')
  t.same(code(thrown(() => program.release())), [4, 'program is null'], 'release after release')
  t.same(code(thrown(() => program.ptx)), [4, 'program is null'], 'ptx after release')
  t.same(code(thrown(() => Program.getOutput(program, {}))), [4, 'program is null'])
})

t.test('compile: the output replaces nothing until the whole pipeline succeeded', skipWithoutPtxas, async (t) => {
  const dir = scratchDir(t)
  const cubin = join(dir, 'k.cubin')
  writeFileSync(cubin, realCubin()!)
  const mode = join(dir, 'mode')
  const ptxas = fakeTool(dir, 'ptxas', `if [ "$(cat '${mode}')" = ok ]; then cat '${cubin}'; else echo "fake ptxas failed" >&2; exit 1; fi`)
  const program = Program.create({ ...BASE, ptxas })
  writeFileSync(mode, 'ok')
  const first = await program.compile()
  t.equal(program.getOutput(), first, 'getOutput returns the compile\'s output')
  const out: { output?: ProgramOutput } = {}
  Program.getOutput(program, out)
  t.equal(out.output, first, 'the C-shaped getOutput fills the output pointer')
  writeFileSync(mode, 'fail')
  const error = await rejection(program.compile())
  t.equal(error.diagnostics, 'fake ptxas failed\n')
  t.same([thrown(() => program.getOutput()).status, program.compiled], [4, false], 'a failed recompile leaves no output')
  writeFileSync(mode, 'ok')
  t.ok((await program.compile()).cubin.equals(readFileSync(cubin)), 'and a good one brings it back')
})

t.test('compile: ptxas rejects the PTX -> status 5, its stderr verbatim', skipWithoutPtxas, async (t) => {
  const rows: Array<[string, string, string]> = [
    ['syntax error', `${MINIMAL_PTX.replace('{ ret; }', '{ ret }')}`, 'sm_100'],
    ['ISA too old for the target', kernelPtx('sm_110', '8.8'), 'sm_110'],
    ['target mismatch', kernelPtx('sm_120'), 'sm_100'],
    ['conflicting launch bounds', MINIMAL_PTX.replace('{ ret; }', '.maxntid 128 .reqntid 128 { ret; }'), 'sm_100'],
  ]
  for (const [name, ptx, gpuName] of rows) {
    const { calls, onDiagnostic } = collector()
    const program = Program.create({ input: ptx, gpuName, onDiagnostic })
    const error = await rejection(program.compile())
    const reference = runPtxas(ptx, { gpuName })
    t.equal(reference.status, 'failed', `${name}: ptxas itself rejects it`)
    t.same([error.status, error.message], [5, 'failed to compile PTX program'], `${name}: status 5, verbatim`)
    t.equal(error.reason, 'ptxas exited with status 255', `${name}: reason`)
    t.same([error.tool, error.toolStatus], ['ptxas', 'failed'])
    t.equal(error.diagnostics, reference.diagnostics, `${name}: error.diagnostics is ptxas's stderr, byte for byte`)
    t.same(calls, [[reference.diagnostics, 'ptxas']], `${name}: the callback got the same text, once`)
    t.match(error.diagnostics, /^ptxas /, `${name}: ptxas's own words`)
    t.equal(thrown(() => program.getOutput()).code, 'NOT_COMPILED', `${name}: no output`)
  }
})

t.test("compile: inputName names the user's file in ptxas's messages, on every route", skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const bad = bigPtx(200_000).replace('ret;', 'ret')
  const small = kernelPtx('sm_100').replace('ret;', 'ret')
  const memfd = native.anonymousFile
  t.teardown(() => { native.anonymousFile = memfd })
  // The file route is taken where memfd_create fails (ENOSYS on an old kernel, EPERM under a
  // seccomp filter): simulated here by making the addon's call fail.
  let refused = 0
  const noMemfd = (): number => { refused++; throw Object.assign(new Error('memfd_create: Function not implemented'), { code: 'ENOSYS' }) }
  const rows: Array<[string, string, string, (() => void)?]> = [['argv', small, 'argv'], ['memfd', bad, 'memfd'], ['file', bad, 'file', () => { native.anonymousFile = noMemfd }]]
  for (const [name, ptx, route, setup] of rows) {
    setup?.()
    const { calls, onDiagnostic } = collector()
    const named = await rejection(Program.create({ input: ptx, gpuName: 'sm_100', tempRoot, inputName: 'src/kernel.ptx', onDiagnostic }).compile())
    const unnamed = await rejection(Program.create({ input: ptx, gpuName: 'sm_100', tempRoot }).compile())
    native.anonymousFile = memfd
    const line = /^ptxas src\/kernel\.ptx, line (\d+); fatal   : Parsing error near '}': syntax error$/m.exec(named.diagnostics)
    t.ok(line, `${name}: the message names src/kernel.ptx (${named.diagnostics})`)
    // The line ptxas gives is the line in the user's file: the first line after the bad `ret`.
    t.equal(Number(line?.[1]), ptx.split('\n').findIndex((l) => l.trim() === 'ret') + 2, `${name}: and the line ptxas gives`)
    t.same(calls, [[named.diagnostics, 'ptxas']], `${name}: the callback gets the same text`)
    t.match(unnamed.diagnostics, /^ptxas application ptx input, line \d+; fatal   : /m, `${name}: unnamed, ptxas's argv-route name on every route`)
    t.same([named.status, named.message], [5, 'failed to compile PTX program'], `${name}: a PTX failure says PTX`)
    if (route === 'file') t.equal(refused, 2, 'file: both compiles were refused a memfd, so took the file route')
  }
  t.same(readdirSync(tempRoot), [], 'nothing left in the temp root')
  t.throws(() => Program.create({ ...BASE, inputName: 7 as unknown as string }), { code: 'ERR_INVALID_ARG_TYPE', field: 'inputName' })
})

t.test('a temp file that cannot be made: status 5 with the cause; in compileMany, that program alone', skipWithoutPtxas, async (t) => {
  const missing = join(scratchDir(t), 'no-such-dir')
  const memfd = native.anonymousFile
  t.teardown(() => { native.anonymousFile = memfd })
  // The SASS dump's cubin always goes through a temp file.
  const dump = await rejection(Program.create({ ...BASE, dumpSassCommand: 'od -An', tempRoot: missing, name: 'k1' }).compile())
  t.same([dump.status, dump.code, dump.message], [5, 'COMPILE_FAILED', 'failed to compile PTX program'])
  t.equal(dump.reason, `cannot create a temp file for k1.cubin in '${missing}': no such file or directory (ENOENT)`)
  t.ok(dump.cause instanceof TempFileError, 'the cause is kept')
  // The PTX's temp file, where there is no memfd (simulated as above).
  native.anonymousFile = () => { throw Object.assign(new Error('memfd_create: Operation not permitted'), { code: 'EPERM' }) }
  const ptx = await rejection(Program.create({ input: bigPtx(200_000), gpuName: 'sm_100', tempRoot: missing, name: 'big' }).compile())
  t.same([ptx.status, ptx.reason], [5, `cannot create a temp file for big.ptx in '${missing}': no such file or directory (ENOENT)`])
  // Each program its own name: compileMany refuses two that would define the same symbols.
  const results = await compileMany([
    Program.create({ ...BASE, name: 'first' }),
    Program.create({ input: bigPtx(200_000), gpuName: 'sm_100', tempRoot: missing }),
    Program.create({ ...BASE, dumpSassCommand: 'od -An', tempRoot: missing, name: 'dumped' }),
    Program.create({ ...BASE, name: 'last' }),
  ])
  native.anonymousFile = memfd
  t.same(results.map((r) => r.status), [0, 5, 5, 0], 'only the programs whose temp file failed')
  t.match(results[1].error, { reason: /^cannot create a temp file for program\.ptx in / })
  t.match(results[2].error, { reason: /^cannot create a temp file for dumped\.cubin in / })
})

t.test("compile: the contract's exit-code table through fake ptxas scripts -> status 5", async (t) => {
  const dir = scratchDir(t)
  const notExecutable = join(dir, 'noexec')
  writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 })
  const rows: Array<[string, Partial<ProgramConfig>, string, string | RegExp, string]> = [
    ['not found', { ptxas: join(dir, 'none', 'ptxas') }, 'not-found', `failed to run '${join(dir, 'none', 'ptxas')}': No such file or directory`, ''],
    ['not executable', { ptxas: notExecutable }, 'not-executable', `failed to run '${notExecutable}': Permission denied (it has no execute permission)`, ''],
    ['exit 1', { ptxas: fakeTool(dir, 'exit1', 'printf "  odd \\r\\n\\n" >&2; exit 1') }, 'failed', 'ptxas exited with status 1', '  odd \r\n\n'],
    ['killed by a signal', { ptxas: fakeTool(dir, 'sigterm', 'echo dying >&2; kill -TERM $$') }, 'signaled', 'Terminated', 'dying\n'],
    ['timeout', { ptxas: fakeTool(dir, 'sleeper', 'exec sleep 30'), timeout: 300 }, 'timed-out', DIAGNOSTIC.timedOut, ''],
    ['exit 0 without a cubin', { ptxas: fakeTool(dir, 'quiet', 'echo "just a warning" >&2; exit 0') }, 'no-cubin', /no cubin/, 'just a warning\n'],
  ]
  for (const [name, overrides, toolStatus, reason, diagnostics] of rows) {
    const { calls, onDiagnostic } = collector()
    const program = Program.create({ ...BASE, ...overrides, onDiagnostic })
    const error = await rejection(program.compile())
    t.same([error.status, error.message], [5, 'failed to compile PTX program'], `${name}: status 5`)
    t.equal(error.toolStatus, toolStatus, `${name}: ${toolStatus}`)
    if (typeof reason === 'string') t.equal(error.reason, reason, `${name}: reason`)
    else t.match(error.reason, reason, `${name}: reason`)
    t.equal(error.diagnostics, diagnostics, `${name}: stderr verbatim`)
    t.same(calls, diagnostics === '' ? [] : [[diagnostics, 'ptxas']], `${name}: callback`)
    t.notOk(program.compiled, `${name}: no output`)
  }
})

t.test('ptxas missing: the reason says how to point PATH or CUDA_ROOT at a toolkit', async (t) => {
  const dir = scratchDir(t)
  const nowhere = join(dir, 'nowhere')
  const missing = await rejection(Program.create({ ...BASE, env: { PATH: nowhere } }).compile())
  t.same([missing.status, missing.toolStatus], [5, 'not-found'])
  t.equal(missing.reason,
    "ptxas was not found on PATH (No such file or directory); put a CUDA toolkit's bin directory on PATH " +
    '(export PATH=/usr/local/cuda/bin:$PATH) or point CUDA_ROOT at the toolkit (export CUDA_ROOT=/usr/local/cuda)')
  const badRoot = await rejection(Program.create({ ...BASE, env: { PATH: nowhere, CUDA_HOME: join(dir, 'cuda') } }).compile())
  t.match(badRoot.reason, `ptxas was not found on PATH or in $CUDA_HOME/bin (CUDA_HOME=${join(dir, 'cuda')})`)
  // A ptxas that was found and exits 127 (a wrapper whose own program is missing): status
  // not-found as the contract reads 127, but not "was not found on PATH", which it was.
  const wrapperDir = join(dir, 'wrapper')
  mkdirSync(wrapperDir)
  fakeTool(wrapperDir, 'ptxas', 'echo "exec: /nonexistent/ptxas: not found" >&2; exit 127')
  const wrapped = await rejection(Program.create({ ...BASE, env: { PATH: wrapperDir } }).compile())
  t.same([wrapped.status, wrapped.toolStatus, wrapped.reason, wrapped.diagnostics], [5, 'not-found', DIAGNOSTIC.notFound, 'exec: /nonexistent/ptxas: not found\n'])

  // A toolkit named by CUDA_ROOT: its bin/ptxas runs when PATH has none.
  mkdirSync(join(dir, 'toolkit', 'bin'), { recursive: true })
  fakeTool(join(dir, 'toolkit', 'bin'), 'ptxas', 'echo "ptxas from $0" >&2; exit 2')
  const fromRoot = await rejection(Program.create({ ...BASE, env: { PATH: nowhere, CUDA_ROOT: join(dir, 'toolkit') } }).compile())
  t.equal(fromRoot.diagnostics, `ptxas from ${join(dir, 'toolkit', 'bin', 'ptxas')}\n`, 'found in $CUDA_ROOT/bin')
})

t.test('ptxas from CUDA_ROOT with the real toolkit', { skip: existsSync('/usr/local/cuda-13.0/bin/ptxas') ? false : 'no /usr/local/cuda-13.0/bin/ptxas' }, async (t) => {
  const program = Program.create({ ...BASE, env: { PATH: '/nonexistent', CUDA_ROOT: '/usr/local/cuda-13.0' } })
  const output = await program.compile()
  t.equal(output.ptxas.path, '/usr/local/cuda-13.0/bin/ptxas')
  t.same(output.kernels.map((k) => k.name), ['k'])
})

t.test('host arch arm64ec: accepted by create, status 5 at compile, ptxas never started', async (t) => {
  const dir = scratchDir(t)
  const marker = join(dir, 'started')
  const ptxas = fakeTool(dir, 'ptxas', `touch '${marker}'; exit 1`)
  const arm64ec = 'host architecture arm64ec: tileharness writes objects for x86_64 and aarch64 only (ELF for linux, COFF for windows)'
  const rows: Array<[Partial<ProgramConfig>, string]> = [
    [{ hostArch: 'arm64ec' }, arm64ec],
    [{ hostArch: 'arm64ec', hostOs: 'windows' }, arm64ec],
  ]
  for (const [overrides, reason] of rows) {
    const error = await rejection(Program.create({ ...BASE, ptxas, ...overrides }).compile())
    t.same([error.status, error.message, error.reason], [5, 'failed to compile PTX program', reason])
  }
  t.notOk(existsSync(marker))
})

t.test('host OS windows: a COFF object with the same symbols and bytes as the ELF one', skipWithoutPtxas, async (t) => {
  for (const hostArch of ['x86_64', 'aarch64'] as const) {
    const sass = 'stand-in SASS text\n'
    const linux = await Program.create({ ...BASE, hostArch, name: 'k1' }).compile()
    const windows = await Program.create({ ...BASE, hostArch, hostOs: 'windows', name: 'k1' }).compile()
    t.ok(windows.cubin.equals(linux.cubin), `${hostArch}: the same cubin`)
    t.ok(windows.object.equals(packageCoffObject({ cubin: linux.cubin, name: 'k1', hostArch })), `${hostArch}: the object is packageCoffObject's`)
    t.equal(windows.object.readUInt16LE(0), hostArch === 'x86_64' ? IMAGE_FILE_MACHINE_AMD64 : IMAGE_FILE_MACHINE_ARM64, `${hostArch}: COFF machine`)
    t.ok(windows.object.includes(linux.cubin), `${hostArch}: holding the cubin`)
    t.notOk(windows.object.subarray(0, 4).equals(Buffer.from('\x7fELF', 'latin1')), `${hostArch}: not ELF`)
    t.ok(packageCoffObject({ cubin: linux.cubin, sass, name: 'k1', hostArch }).includes(Buffer.from(sass)), `${hostArch}: SASS text too`)
  }
})

t.test('compile: every example kernel for all six targets, byte-identical to runPtxas', skipWithoutPtxas, async (t) => {
  const programs = TARGETS.flatMap((gpuName) => EXAMPLE_KERNELS.map((kernel) =>
    Program.create({ input: exampleKernel(kernel, gpuName), gpuName, allowAnyTarget: gpuName === 'sm_90', name: `${kernel}_${gpuName}` })))
  const results = await compileMany(programs, { concurrency: 2 })
  let i = 0
  for (const gpuName of TARGETS) for (const kernel of EXAMPLE_KERNELS) {
    const name = `${kernel} ${gpuName}`
    const result = results[i++]
    t.equal(result.status, 0, `${name}: compiled (${result.error?.reason ?? ''})`)
    const output = result.output!
    const reference = runPtxas(examplePtx(kernel, gpuName), { gpuName })
    t.ok(output.cubin.equals(reference.cubin!), `${name}: the cubin is ptxas's, byte for byte`)
    t.same(output.kernels.map((k) => k.name), [KERNEL_NAMES[kernel]], `${name}: kernels`)
    t.ok(output.kernels.every((k) => typeof k.registers === 'number' && k.registers > 0), `${name}: registers`)
    t.equal(output.sm, Number(gpuName.slice(3)), `${name}: sm`)
    t.same(output.ptxas.argv.slice(0, 5), ['ptxas', '-arch', gpuName, '--opt-level', '3'], `${name}: argv`)
    t.equal(output.object.readUInt16LE(16), ET_REL, `${name}: a relocatable`)
    t.equal(output.object.readUInt16LE(18), NATIVE_MACHINE, `${name}: for this host`)
    t.ok(output.object.includes(output.cubin), `${name}: holding the cubin`)
    t.equal(output.sass, null)
    t.ok(output.wallMs > 0 && output.ptxas.durationMs > 0, `${name}: wall time and ptxas's time`)
    t.ok(output.ptxas.rusage.maxRSS > 0, `${name}: ptxas's max RSS, from wait4`)
    t.equal(programs[i - 1].getOutput(), output, `${name}: getOutput after compileMany`)
  }
})

t.test('compile: PTX text, bytes and a module object give the same cubin; big PTX goes by memfd', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const module = exampleKernel('saxpy', 'sm_120')
  const text = examplePtx('saxpy', 'sm_120')
  const outputs: ProgramOutput[] = []
  for (const input of [text, Buffer.from(text), module]) {
    outputs.push(await Program.create({ input, gpuName: 'sm_120', tempRoot }).compile())
  }
  t.ok(outputs.every((o) => o.cubin.equals(outputs[0].cubin)))
  t.same(outputs.map((o) => o.ptxas.inputRoute), ['argv', 'argv', 'argv'])
  const big = await Program.create({ input: bigPtx(200_000), gpuName: 'sm_100', tempRoot }).compile()
  t.equal(big.ptxas.inputRoute, 'memfd', 'PTX over MAX_ARG_STRLEN goes to ptxas as an anonymous file')
  t.same(big.kernels.map((k) => k.name), ['scale'])
  t.same(readdirSync(tempRoot), [], 'and nothing is on disk')
})

t.test('compile: -O, device debug, line info and sanitize reach ptxas', skipWithoutPtxas, async (t) => {
  const ptx = examplePtx('vadd', 'sm_100')
  const rows: Array<[string, Partial<ProgramConfig>, string[], RegExp | null]> = [
    ['-O0', { optLevel: 0 }, [], null],
    ['-O2', { optLevel: 2 }, [], null],
    ['lineinfo', { lineinfo: true }, ['--generate-line-info'], null],
    ['device debug', { optLevel: 0, deviceDebug: true }, ['--device-debug'], /\.debug_info section not found/],
    ['device debug with lineinfo: no conflicting pair', { optLevel: 0, deviceDebug: true, lineinfo: true }, ['--device-debug'], /\.debug_info section not found/],
    ['sanitize memcheck', { sanitize: 'memcheck' }, ['--sanitize', 'memcheck'], null],
  ]
  const plain = runPtxas(ptx, { gpuName: 'sm_100' }).cubin!
  for (const [name, overrides, flags, warning] of rows) {
    const { calls, onDiagnostic } = collector()
    const output = await Program.create({ ...BASE, input: ptx, onDiagnostic, ...overrides }).compile()
    const optLevel = overrides.optLevel ?? 3
    t.same(output.ptxas.argv.slice(0, 5 + flags.length), ['ptxas', ...flags, '-arch', 'sm_100', '--opt-level', String(optLevel)], `${name}: argv`)
    const reference = runPtxas(ptx, { gpuName: 'sm_100', optLevel, ptxasOptions: flags })
    t.ok(output.cubin.equals(reference.cubin!), `${name}: the cubin ptxas makes with those flags`)
    if (flags.length > 0) t.notOk(output.cubin.equals(plain), `${name}: which is not the plain one`)
    t.equal(output.ptxas.diagnostics, reference.diagnostics, `${name}: ptxas's warnings, verbatim`)
    t.same(calls, reference.diagnostics === '' ? [] : [[reference.diagnostics, 'ptxas']], `${name}: warnings on success reach the callback`)
    if (warning !== null) t.match(output.ptxas.diagnostics, warning, `${name}: ptxas warned`)
  }
  const arm = await Program.create({ ...BASE, input: ptx, hostArch: 'aarch64', name: 'vadd' }).compile()
  t.equal(arm.object.readUInt16LE(18), EM_AARCH64, 'hostArch aarch64: an AArch64 object')
})

t.test('compile: the SASS dump goes into the object', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const tools = scratchDir(t)
  // A stand-in for nvdisasm, which is not installed on these machines: it prints its arguments
  // and the size of the cubin file it was given last.
  fakeTool(tools, 'nvdisasm', [
    'for last; do :; done',
    'echo "// fake nvdisasm (stand-in): $*"',
    'echo "cubin bytes: $(wc -c < "$last")"',
  ].join('\n'))
  const env = { ...process.env, PATH: `${tools}:${process.env.PATH}` }
  const output = await Program.create({ ...BASE, dumpSassCommand: 'nvdisasm -c', env, tempRoot, name: 'k1' }).compile()
  const [argsLine, sizeLine] = output.sass!.split('\n')
  t.match(argsLine, new RegExp(`^// fake nvdisasm \\(stand-in\\): -c ${tempRoot}/tileharness-[^/]+/k1\\.cubin$`), 'the cubin path came last')
  t.equal(sizeLine, `cubin bytes: ${output.cubin.length}`, 'and held the cubin')
  t.equal(output.dumpSass!.argv[0], 'nvdisasm', 'found on PATH')
  t.ok(output.object.includes(Buffer.from(`${output.sass}\0`)), 'the SASS text, NUL-terminated, is in the object')
  t.same(readdirSync(tempRoot), [], 'the temp cubin is gone')

  if (READELF !== null) {
    const readelf = await Program.create({ ...BASE, dumpSassCommand: 'readelf -S -W', tempRoot }).compile()
    t.match(readelf.sass, /Section Headers:/, 'readelf -S -W: a real program taking the cubin path')
    t.match(readelf.sass, /\.nv\.info/)
  }

  if (searchPath('nvdisasm', process.env) === null) {
    // No nvdisasm on PATH: the one in $CUDA_ROOT/bin runs, as the contract keeps the root for.
    const root = join(tools, 'root')
    mkdirSync(join(root, 'bin'), { recursive: true })
    fakeTool(join(root, 'bin'), 'nvdisasm', 'echo "root nvdisasm $#"')
    const fromRoot = await Program.create({ ...BASE, dumpSassCommand: 'nvdisasm -c', env: { ...process.env, CUDA_ROOT: root }, tempRoot }).compile()
    t.equal(fromRoot.dumpSass!.argv[0], join(root, 'bin', 'nvdisasm'))
    t.equal(fromRoot.sass, 'root nvdisasm 2\n')
  }
})

t.test('compile: a failing SASS dump is a compile failure (status 5), no output', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const tools = scratchDir(t)
  fakeTool(tools, 'nvdisasm', 'echo "nvdisasm fatal : bad cubin" >&2; exit 2')
  const pathWithFake = { ...process.env, PATH: `${tools}:${process.env.PATH}` }
  const noRoot = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['CUDA_ROOT', 'CUDA_HOME', 'CUDA_PATH'].includes(k)))
  const rows: Array<[string, Partial<ProgramConfig>, string | RegExp, string]> = [
    ['the command fails', { dumpSassCommand: 'nvdisasm -c', env: pathWithFake }, 'nvdisasm exited with status 2', 'nvdisasm fatal : bad cubin\n'],
    ['an empty command', { dumpSassCommand: '' }, EMPTY_DUMP_SASS_COMMAND, ''],
    ['a blank command', { dumpSassCommand: ' \t ' }, EMPTY_DUMP_SASS_COMMAND, ''],
    ['an unterminated quote', { dumpSassCommand: "nvdisasm '-c" }, /dumpSassCommand/, ''],
    ['a missing program', { dumpSassCommand: 'th-no-such-disassembler -c' }, "failed to run 'th-no-such-disassembler': No such file or directory", ''],
  ]
  if (searchPath('nvdisasm', process.env) === null) {
    rows.push(['nvdisasm missing: how to find it', { dumpSassCommand: 'nvdisasm -c', env: noRoot }, /^nvdisasm was not found on PATH \(No such file or directory\); put a CUDA toolkit's bin directory on PATH/, ''])
  }
  for (const [name, overrides, reason, diagnostics] of rows) {
    const { calls, onDiagnostic } = collector()
    const program = Program.create({ ...BASE, tempRoot, onDiagnostic, ...overrides })
    const error = await rejection(program.compile())
    t.same([error.status, error.message, error.tool], [5, 'failed to compile PTX program', 'dump-sass'], `${name}: status 5`)
    if (typeof reason === 'string') t.equal(error.reason, reason, `${name}: reason`)
    else t.match(error.reason, reason, `${name}: reason`)
    t.equal(error.diagnostics, diagnostics, `${name}: the command's stderr, verbatim`)
    t.same(calls.filter(([, tool]) => tool === 'dump-sass'), diagnostics === '' ? [] : [[diagnostics, 'dump-sass']], `${name}: callback`)
    t.notOk(program.compiled, `${name}: no output`)
    t.same(readdirSync(tempRoot), [], `${name}: no temp cubin left`)
  }
})

t.test('cancellation: compile({ signal }) kills ptxas; release() does too', async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  const sleeper = fakeTool(dir, 'ptxas', `echo $$ > "$TH_PID"; exec sleep 30`)
  const ptx = bigPtx(200_000) // the file route: a temp file exists while ptxas runs
  const started = (file: string) => eventually(() => existsSync(file) && readFileSync(file, 'utf8').trim() !== '')
  const pidOf = (file: string) => Number(readFileSync(file, 'utf8').trim())

  // Aborted while ptxas runs.
  const pidFile = join(dir, 'pid1')
  const controller = new AbortController()
  const program = Program.create({ input: ptx, gpuName: 'sm_100', ptxas: sleeper, tempRoot, env: { ...process.env, TH_PID: pidFile } })
  const pending = rejection(program.compile({ signal: controller.signal }))
  t.ok(await started(pidFile), 'ptxas started')
  controller.abort()
  const aborted = await pending
  t.same([aborted.status, aborted.message, aborted.reason, aborted.toolStatus], [5, 'failed to compile PTX program', DIAGNOSTIC.aborted, 'aborted'])
  t.ok(await eventually(() => processState(pidOf(pidFile)) !== 'alive'), 'ptxas was killed')
  t.equal(thrown(() => program.getOutput()).code, 'NOT_COMPILED')
  t.same(readdirSync(tempRoot), [], 'the temp PTX file is gone')

  // Aborted before it started: nothing runs (docs/toolchain-contract.md, "Cancellation and parallel compiles").
  const never = join(dir, 'never')
  const early = await rejection(Program.create({ ...BASE, ptxas: sleeper, env: { ...process.env, TH_PID: never } }).compile({ signal: AbortSignal.abort() }))
  t.same([early.status, early.reason], [5, 'the compile was aborted before ptxas started'])
  t.notOk(existsSync(never), 'ptxas never started')

  // Released while compiling: the child is killed and the compile reports the null program.
  const pidFile2 = join(dir, 'pid2')
  const doomed = Program.create({ input: ptx, gpuName: 'sm_100', ptxas: sleeper, tempRoot, env: { ...process.env, TH_PID: pidFile2 } })
  const compiling = rejection(doomed.compile())
  t.ok(await started(pidFile2))
  doomed.release()
  const released = await compiling
  t.same([released.status, released.message, released.reason], [4, 'program is null', 'the program was released while it was compiling'])
  t.ok(await eventually(() => processState(pidOf(pidFile2)) !== 'alive'), 'ptxas was killed')
  t.same(readdirSync(tempRoot), [])

  await t.rejects(Program.create(BASE).compile({ signal: 'stop' as unknown as AbortSignal }), { code: 'ERR_INVALID_ARG_TYPE', field: 'signal' })
})

t.test('compile() calls on one program run one at a time', async (t) => {
  const dir = scratchDir(t)
  const lock = join(dir, 'lock')
  const ptxas = fakeTool(dir, 'ptxas', `mkdir '${lock}' 2>/dev/null || { echo overlap >&2; exit 9; }; sleep 0.2; rmdir '${lock}'; echo "one at a time" >&2; exit 1`)
  const program = Program.create({ ...BASE, ptxas })
  const errors = await Promise.all([rejection(program.compile()), rejection(program.compile()), rejection(program.compile())])
  t.same(errors.map((e) => e.diagnostics), ['one at a time\n', 'one at a time\n', 'one at a time\n'], 'no two ran at once')
})

t.test('compileMany: results and callbacks in input order, whatever order the children finish in', async (t) => {
  const dir = scratchDir(t)
  const cubin = realCubin()
  const cubinFile = join(dir, 'k.cubin')
  if (cubin !== null) writeFileSync(cubinFile, cubin)
  // Each child says it started, then waits for its own go file; the test lets them finish last-first.
  const ptxas = fakeTool(dir, 'ptxas', [
    'touch "$TH_GATE/started-$TH_NAME"',
    'while [ ! -e "$TH_GATE/go-$TH_NAME" ]; do sleep 0.02; done',
    'echo "diagnostic from $TH_NAME" >&2',
    'touch "$TH_GATE/done-$TH_NAME"',
    'if [ -n "$TH_CUBIN" ]; then cat "$TH_CUBIN"; exit 0; fi',
    'exit 3',
  ].join('\n'))
  const n = 4
  const order: string[] = []
  const programs = Array.from({ length: n }, (_, i) => Program.create({
    ...BASE,
    name: `p${i}`,
    ptxas,
    // With a real cubin at hand, the even ones succeed and the odd ones fail.
    env: { ...process.env, TH_GATE: dir, TH_NAME: String(i), TH_CUBIN: cubin !== null && i % 2 === 0 ? cubinFile : '' },
    onDiagnostic: (text) => { order.push(text.trim()) },
  }))
  const pending = compileMany(programs, { concurrency: n })
  t.ok(await eventually(() => Array.from({ length: n }, (_, i) => existsSync(join(dir, `started-${i}`))).every(Boolean)), 'all started')
  for (let i = n - 1; i >= 0; i--) {
    writeFileSync(join(dir, `go-${i}`), '')
    t.ok(await eventually(() => existsSync(join(dir, `done-${i}`))), `child ${i} finished`)
  }
  const results = await pending
  t.same(order, ['diagnostic from 0', 'diagnostic from 1', 'diagnostic from 2', 'diagnostic from 3'], 'callbacks in input order, though the children finished 3, 2, 1, 0')
  for (const [i, result] of results.entries()) {
    const succeeds = cubin !== null && i % 2 === 0
    t.equal(result.status, succeeds ? 0 : 5, `result ${i}: status`)
    if (succeeds) t.ok(result.output!.cubin.equals(cubin!), `result ${i}: its cubin`)
    else t.equal(result.error!.diagnostics, `diagnostic from ${i}\n`, `result ${i}: its own diagnostics`)
  }
})

t.test('compileMany: concurrency bounds the children running at once', async (t) => {
  const dir = scratchDir(t)
  const log = join(dir, 'log')
  const ptxas = fakeTool(dir, 'ptxas', [
    'mkdir "$TH_GATE/running-$TH_NAME"',
    'ls -d "$TH_GATE"/running-* | wc -l >> "$TH_LOG"',
    'while [ ! -e "$TH_GATE/go" ]; do sleep 0.02; done',
    'rmdir "$TH_GATE/running-$TH_NAME"',
    'exit 1',
  ].join('\n'))
  const programs = Array.from({ length: 5 }, (_, i) => Program.create({ ...BASE, name: `p${i}`, ptxas, env: { ...process.env, TH_GATE: dir, TH_NAME: String(i), TH_LOG: log } }))
  const pending = compileMany(programs, { concurrency: 2 })
  t.ok(await eventually(() => existsSync(log) && readFileSync(log, 'utf8').trim().split('\n').length >= 2), 'two started')
  await new Promise((resolve) => setTimeout(resolve, 300)) // a third, if the bound were broken, would start now
  t.equal(readFileSync(log, 'utf8').trim().split('\n').length, 2, 'and only two, while they are held')
  writeFileSync(join(dir, 'go'), '')
  const results = await pending
  t.same(results.map((r) => r.status), [5, 5, 5, 5, 5])
  t.ok(readFileSync(log, 'utf8').trim().split('\n').every((count) => Number(count) <= 2), 'never more than two at once')
})

t.test('compileMany: every child takes a slot, several targets and SASS dumps included', skipWithoutPtxas, async (t) => {
  // The fake ptxas hands back a real cubin.
  const dir = scratchDir(t)
  const cubinFile = join(dir, 'k.cubin')
  writeFileSync(cubinFile, realCubin()!)
  const log = join(dir, 'log')
  // Each child notes how many children are running as it starts, and holds its slot for a while.
  const child = (tool: string, out: string) => [
    'mkdir "$TH_GATE/running-$$"',
    `echo "$TH_NAME ${tool} $(ls -d "$TH_GATE"/running-* | wc -l)" >> "$TH_GATE/log"`,
    'sleep 0.2',
    'rmdir "$TH_GATE/running-$$"',
    out,
  ].join('\n')
  // ptxas's own cubin for each target, so that the real fatbinary takes them.
  for (const gpuName of ['sm_90', 'sm_100', 'sm_120']) writeFileSync(join(dir, `${gpuName}.cubin`), runPtxas(kernelPtx('sm_90'), { gpuName }).cubin!)
  const ptxas = fakeTool(dir, 'ptxas', child('ptxas', 'while [ "$1" != -arch ]; do shift; done; cat "$TH_GATE/$2.cubin"'))
  const dump = fakeTool(dir, 'dump', child('dump', 'echo sass'))
  const env = (name: string) => ({ ...process.env, TH_GATE: dir, TH_NAME: name, TH_CUBIN: cubinFile })

  // Two programs of three targets each, two children at once: never more than two ptxas.
  const wide = [0, 1].map((i) => Program.create({ ...BASE, gpuName: ['sm_90', 'sm_100', 'sm_120'], allowAnyTarget: true, name: `w${i}`, ptxas, env: env(`w${i}`) }))
  const wideResults = await compileMany(wide, { concurrency: 2 })
  t.same(wideResults.map((r) => [r.status, r.output?.targets.length, r.error?.reason]), [[0, 3, undefined], [0, 3, undefined]], 'both compiled, three cubins each, wrapped by fatbinary')
  const lines = readFileSync(log, 'utf8').trim().split('\n')
  t.equal(lines.length, 6, 'six ptxas ran')
  t.ok(lines.every((line) => Number(line.split(' ')[2]) <= 2), `never more than two at once (${lines.map((line) => line.split(' ')[2]).join(' ')})`)

  // One at a time, with a SASS dump each: the first program's dump waits its turn behind the second
  // program's ptxas, which asked for the slot first; the slot is the child's, not the program's.
  writeFileSync(log, '')
  const dumped = [0, 1].map((i) => Program.create({ ...BASE, name: `d${i}`, ptxas, dumpSassCommand: dump, env: env(`d${i}`) }))
  const dumpedResults = await compileMany(dumped, { concurrency: 1 })
  t.same(dumpedResults.map((r) => [r.status, r.output?.sass]), [[0, 'sass\n'], [0, 'sass\n']], 'both compiled and dumped')
  t.same(readFileSync(log, 'utf8').trim().split('\n'), ['d0 ptxas 1', 'd1 ptxas 1', 'd0 dump 1', 'd1 dump 1'], 'children in the order they asked, one at a time')
})

t.test("compileMany: a program's timeout and wallMs are its own, not its wait for others' children", skipWithoutPtxas, async (t) => {
  // The fake ptxas hands back a real cubin.
  const dir = scratchDir(t)
  const cubinFile = join(dir, 'k.cubin')
  writeFileSync(cubinFile, realCubin()!)
  // The first program's ptxas holds the only slot until the test lets it go; the second program,
  // with a 1 s timeout, waits for the slot longer than that.
  const ptxas = fakeTool(dir, 'ptxas', [
    'touch "$TH_GATE/started-$TH_NAME"',
    'while [ -n "$TH_HOLD" ] && [ ! -e "$TH_GATE/go" ]; do sleep 0.02; done',
    'sleep 0.1', // long enough to meet the 1 ms a wrong clock would leave it
    'cat "$TH_CUBIN"',
  ].join('\n'))
  const programs = [
    Program.create({ ...BASE, name: 'held', ptxas, env: { ...process.env, TH_GATE: dir, TH_NAME: 'held', TH_CUBIN: cubinFile, TH_HOLD: '1' } }),
    Program.create({ ...BASE, name: 'waiting', ptxas, timeout: 1000, env: { ...process.env, TH_GATE: dir, TH_NAME: 'waiting', TH_CUBIN: cubinFile } }),
  ]
  const started = performance.now()
  const pending = compileMany(programs, { concurrency: 1 })
  t.ok(await eventually(() => existsSync(join(dir, 'started-held'))), 'the first ptxas holds the slot')
  await new Promise((resolve) => setTimeout(resolve, 1300)) // longer than the second program's timeout
  t.notOk(existsSync(join(dir, 'started-waiting')), 'the second has not started')
  writeFileSync(join(dir, 'go'), '')
  const results = await pending
  const batchMs = performance.now() - started
  t.same(results.map((r) => r.status), [0, 0], 'the waiting program did not time out')
  const wallMs = results[1].output?.wallMs ?? Infinity
  t.ok(wallMs < batchMs - 1300, `its wallMs (${wallMs.toFixed(1)} ms) leaves out the ${batchMs.toFixed(0)} ms batch's wait`)
})

t.test('compileMany: null and released programs, abort, bad arguments', async (t) => {
  const dir = scratchDir(t)
  const failing = fakeTool(dir, 'ptxas', 'echo nope >&2; exit 1')
  const released = Program.create({ ...BASE, ptxas: failing })
  released.release()
  const results = await compileMany([null, Program.create({ ...BASE, ptxas: failing }), undefined, released], { concurrency: 1 })
  t.same(results.map((r) => [r.status, r.error?.message]), [
    [4, 'program is null'], [5, 'failed to compile PTX program'], [4, 'program is null'], [4, 'program is null'],
  ])
  t.same(await compileMany([]), [])

  // Abort: the running child is killed; the ones still waiting never start.
  const sleeper = fakeTool(dir, 'sleeper', 'touch "$TH_GATE/started-$TH_NAME"; exec sleep 30')
  const programs = [0, 1, 2].map((i) => Program.create({ ...BASE, name: `p${i}`, ptxas: sleeper, env: { ...process.env, TH_GATE: dir, TH_NAME: String(i) } }))
  const controller = new AbortController()
  const pending = compileMany(programs, { concurrency: 1, signal: controller.signal })
  t.ok(await eventually(() => existsSync(join(dir, 'started-0'))))
  controller.abort()
  const aborted = await pending
  t.same(aborted.map((r) => [r.status, r.error?.reason]), [
    [5, DIAGNOSTIC.aborted], [5, 'the compile was aborted before ptxas started'], [5, 'the compile was aborted before ptxas started'],
  ])
  t.notOk(existsSync(join(dir, 'started-1')) || existsSync(join(dir, 'started-2')), 'the others never started')

  // A program of two targets, one slot: the first target's ptxas runs, the second waits for the
  // slot. The abort settled the compile with the waiting target's "aborted before ptxas started"
  // (though a ptxas had run and been killed), before that ptxas was reaped. Now every ptxas started
  // has ended first, and what happened to it is the reason.
  const twoTargets = Program.create({ ...BASE, gpuName: ['sm_100', 'sm_120'], ptxas: fakeTool(dir, 'pid-sleeper', 'echo $$ > "$TH_GATE/pid-$TH_NAME"; exec sleep 30'), env: { ...process.env, TH_GATE: dir, TH_NAME: 'two' } })
  const twoController = new AbortController()
  const twoPending = compileMany([twoTargets], { concurrency: 1, signal: twoController.signal })
  t.ok(await eventually(() => existsSync(join(dir, 'pid-two')) && readFileSync(join(dir, 'pid-two'), 'utf8').trim() !== ''))
  const twoPid = Number(readFileSync(join(dir, 'pid-two'), 'utf8').trim())
  twoController.abort()
  const [two] = await twoPending
  t.same([two!.status, two!.error?.reason], [5, `sm_100: ${DIAGNOSTIC.aborted}`], 'two targets: the reason is the aborted ptxas\'s')
  t.equal(processState(twoPid), 'gone', 'which was reaped before the compile settled')

  const program = Program.create(BASE)
  await t.rejects(compileMany('p' as unknown as Program[]), { code: 'ERR_INVALID_ARG_TYPE', field: 'programs' })
  await t.rejects(compileMany([program], { concurrency: 0 }), { code: 'ERR_OUT_OF_RANGE', field: 'concurrency' })
  await t.rejects(compileMany([program], { concurrency: 1.5 }), { code: 'ERR_OUT_OF_RANGE', field: 'concurrency' })
  await t.rejects(compileMany([program], { concurrency: '2' as unknown as number }), { code: 'ERR_INVALID_ARG_TYPE', field: 'concurrency' })
  await t.rejects(compileMany([program, {} as Program]), { code: 'ERR_INVALID_ARG_TYPE', field: 'programs[1]' })
  await t.rejects(compileMany([program, program]), { code: 'ERR_INVALID_ARG_VALUE', field: 'programs[1]', message: 'programs[1] is the same Program as programs[0]' })
})

t.test('compileMany reads each entry of programs once, before it queues anything; a hole is a null program', async (t) => {
  const dir = scratchDir(t)
  const failing = fakeTool(dir, 'ptxas', 'echo nope >&2; exit 1')
  const p = Program.create({ ...BASE, ptxas: failing })
  // A hole read as undefined (it was an untyped "Cannot read properties of undefined").
  // eslint-disable-next-line no-sparse-arrays
  t.same((await compileMany([, p])).map((r) => [r.status, r.error?.message]), [[4, 'program is null'], [5, 'failed to compile PTX program']])
  t.same((await compileMany(new Array(2))).map((r) => r.status), [4, 4])

  // An entry whose getter answers differently each time: read once, so its first answer is the batch's.
  const q = Program.create({ ...BASE, name: 'q', ptxas: failing })
  const reads = [0, 0]
  const changing: Array<Program | null> = []
  Object.defineProperty(changing, 0, { get: () => { reads[0]++; return p }, enumerable: true })
  Object.defineProperty(changing, 1, { get: () => { reads[1]++; return reads[1] === 1 ? q : null }, enumerable: true })
  t.same((await compileMany(changing)).map((r) => r.status), [5, 5], 'both compiled, as first read')
  t.same(reads, [1, 1], 'each entry read once')

  // A getter that throws: the call rejects with its error and nothing is left waiting for a turn
  // (it threw on a later read, after programs[0]'s compile was queued, which then never ended).
  const throwing: Array<Program | null> = [p]
  Object.defineProperty(throwing, 1, { get: () => { throw new Error('entry 1 is gone') }, enumerable: true })
  await t.rejects(compileMany(throwing), { message: 'entry 1 is gone' })
  t.equal((await rejection(p.compile())).status, 5, "programs[0]'s next compile runs and ends")
})

t.test('compileMany listens to its signal once, however many programs the batch has', async (t) => {
  const dir = scratchDir(t)
  const failing = fakeTool(dir, 'ptxas', 'echo nope >&2; exit 1')
  const programs = Array.from({ length: 12 }, (_, i) => Program.create({ ...BASE, name: `p${i}`, ptxas: failing }))
  const warnings: string[] = []
  const onWarning = (w: Error): void => { warnings.push(`${w.name}: ${w.message}`) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const controller = new AbortController()
  const results = await compileMany(programs, { concurrency: 12, signal: controller.signal })
  await new Promise((resolve) => setImmediate(resolve)) // a warning is emitted on the next tick
  t.same(results.map((r) => r.status), Array(12).fill(5))
  t.same(warnings, [], "no MaxListenersExceededWarning (each program's compile had added a listener to the caller's signal)")
  t.equal(getEventListeners(controller.signal, 'abort').length, 0, "the caller's signal is left without the batch's listener")
})

t.test('twelve compiles on one signal: one listener, no leak warning, every ptxas killed by the abort', async (t) => {
  const dir = scratchDir(t)
  const sleeper = fakeTool(dir, 'ptxas', 'echo $$ >> "$TH_PIDS"; exec sleep 100')
  const pids = join(dir, 'pids')
  const programs = Array.from({ length: 12 }, (_, i) => Program.create({ ...BASE, name: `p${i}`, ptxas: sleeper, env: { ...process.env, TH_PIDS: pids } }))
  const warnings: string[] = []
  // Leak warnings only: Node 26 also says its module.register (tap's loader) is deprecated, once.
  const onWarning = (w: Error): void => { if (w.name === 'MaxListenersExceededWarning') warnings.push(`${w.name}: ${w.message}`) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const controller = new AbortController()
  const pending = programs.map((p) => rejection(p.compile({ signal: controller.signal })))
  t.ok(await eventually(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 12), 'twelve ptxas run')
  t.equal(getEventListeners(controller.signal, 'abort').length, 1, 'one listener on the signal for the twelve compiles')
  controller.abort()
  const errors = await Promise.all(pending)
  await new Promise((resolve) => setImmediate(resolve)) // a warning is emitted on the next tick
  t.same(warnings, [], 'no MaxListenersExceededWarning (each compile had added a listener to the caller\'s signal)')
  t.same(errors.map((e) => [e.status, e.toolStatus]), Array(12).fill([5, 'aborted']), 'each compile was aborted')
  for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) {
    t.ok(await eventually(() => processState(pid) !== 'alive'), `ptxas ${pid} was killed`)
  }
  t.equal(getEventListeners(controller.signal, 'abort').length, 0, 'nothing left on the signal')
})

t.test('an earlier listener that stops the abort event: compile and compileMany are still aborted', async (t) => {
  // A listener of someone else's on a shared signal, registered first, that calls
  // stopImmediatePropagation(): ours did not run, so ptxas ran on and the compile waited for it.
  const dir = scratchDir(t)
  const sleeper = fakeTool(dir, 'ptxas', 'echo $$ >> "$TH_PIDS"; exec sleep 100')
  const pids = join(dir, 'pids')
  const env = { ...process.env, TH_PIDS: pids }
  const controller = new AbortController()
  controller.signal.addEventListener('abort', (event) => { event.stopImmediatePropagation() })
  const one = rejection(Program.create({ ...BASE, name: 'one', ptxas: sleeper, env }).compile({ signal: controller.signal }))
  const batch = compileMany([Program.create({ ...BASE, name: 'a', ptxas: sleeper, env }), Program.create({ ...BASE, name: 'b', ptxas: sleeper, env })], { concurrency: 2, signal: controller.signal })
  t.ok(await eventually(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 3), 'three ptxas run')
  controller.abort()
  t.same([(await one).status, (await one).toolStatus], [5, 'aborted'], "the compile was aborted")
  t.same((await batch).map((r) => [r.status, r.error?.toolStatus]), [[5, 'aborted'], [5, 'aborted']], 'the batch was aborted')
  for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) {
    t.ok(await eventually(() => processState(pid) !== 'alive'), `ptxas ${pid} was killed`)
  }
})

t.test("compileMany's signal with a throwing `reason` of its own: the abort cancels the batch, nothing is thrown from nowhere", async (t) => {
  // The batch forwarded the abort with callerSignal.reason, read through the object: the getter's
  // throw, inside the abort's listener, was an uncaught exception that ended the process.
  const dir = scratchDir(t)
  const pids = join(dir, 'pids')
  const sleeper = fakeTool(dir, 'ptxas', 'echo $$ >> "$TH_PIDS"; exec sleep 100')
  const programs = Array.from({ length: 3 }, (_, i) => Program.create({ ...BASE, name: `r${i}`, ptxas: sleeper, env: { ...process.env, TH_PIDS: pids } }))
  const controller = new AbortController()
  Object.defineProperty(controller.signal, 'reason', { get: () => { throw new Error('reason getter throws') } })
  const batch = compileMany(programs, { signal: controller.signal, concurrency: 3 })
  t.ok(await eventually(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 3), 'three ptxas run')
  controller.abort()
  const results = await batch
  t.same(results.map((r) => [r.status, r.error?.toolStatus]), Array(3).fill([5, 'aborted']), 'each compile was aborted')
})

t.test('a look-alike AbortSignal is refused by name, before anything runs', async (t) => {
  const forged = Object.create(AbortSignal.prototype) as AbortSignal
  const program = Program.create(BASE)
  // Object.create(AbortSignal.prototype) passes instanceof: compile failed with V8's uncoded
  // "Cannot read properties of undefined (reading 'get')", compileMany with ERR_INVALID_THIS.
  for (const [label, call] of [
    ['compile', () => program.compile({ signal: forged })],
    ['compileMany', () => compileMany([program], { signal: forged })],
  ] as const) {
    const error = await call().then(() => null, (e: unknown) => e)
    t.match(error, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^signal must be an AbortSignal/ }, label)
  }
})

t.test('compileMany: a program released while it waits for a slot is status 4, and the batch goes on', async (t) => {
  const dir = scratchDir(t)
  // Each child says it started, then waits for its own go file.
  const ptxas = fakeTool(dir, 'ptxas', [
    'touch "$TH_GATE/started-$TH_NAME"',
    'while [ ! -e "$TH_GATE/go-$TH_NAME" ]; do sleep 0.02; done',
    'echo "ran $TH_NAME" >&2; exit 1',
  ].join('\n'))
  const programs = [0, 1, 2].map((i) => Program.create({ ...BASE, name: `p${i}`, ptxas, env: { ...process.env, TH_GATE: dir, TH_NAME: String(i) } }))
  const pending = compileMany(programs, { concurrency: 1 })
  t.ok(await eventually(() => existsSync(join(dir, 'started-0'))), 'the first holds the only slot')
  programs[1].release()
  writeFileSync(join(dir, 'go-0'), '')
  t.ok(await eventually(() => existsSync(join(dir, 'started-2'))), 'the slot went on to the third')
  writeFileSync(join(dir, 'go-2'), '')
  const results = await pending
  t.same(results.map((r) => [r.status, r.error?.reason ?? null, r.error?.diagnostics ?? null]), [
    [5, 'ptxas exited with status 1', 'ran 0\n'],
    [4, 'the program was released while it was compiling', ''],
    [5, 'ptxas exited with status 1', 'ran 2\n'],
  ])
  t.notOk(existsSync(join(dir, 'started-1')), 'the released program\'s ptxas never started')

  // The same with a SASS dump: released while its dump waits behind the next program's ptxas.
  const cubin = realCubin()
  if (cubin !== null) {
    const cubinFile = join(dir, 'k.cubin')
    writeFileSync(cubinFile, cubin)
    const quick = fakeTool(dir, 'quick', 'cat "$TH_CUBIN"')
    const dump = fakeTool(dir, 'dump', 'touch "$TH_GATE/dumped-$TH_NAME"; echo sass')
    const dumped = [3, 4].map((i) => Program.create({
      ...BASE, name: `p${i}`, dumpSassCommand: dump,
      ptxas: i === 3 ? quick : ptxas, env: { ...process.env, TH_GATE: dir, TH_NAME: String(i), TH_CUBIN: cubinFile },
    }))
    const both = compileMany(dumped, { concurrency: 1 })
    t.ok(await eventually(() => existsSync(join(dir, 'started-4'))), "the second program's ptxas holds the slot the first one's dump waits for")
    dumped[0].release()
    writeFileSync(join(dir, 'go-4'), '')
    t.same((await both).map((r) => r.status), [4, 5])
    t.notOk(existsSync(join(dir, 'dumped-3')), 'the released program\'s dump never started')
  }
})

t.test('a compile cancelled while its next child waits for a slot starts no child', skipWithoutPtxas, async (t) => {
  const { Semaphore } = await import('../../lib/cuda/program/semaphore.js')
  let slots = new Semaphore(1)
  let controller = new AbortController()
  // Another compile's child takes the slot this compile asks for next; while the compile waits for
  // it, the compile is cancelled (its own signal, as release() does), and the slot comes back.
  const cancelWhileWaiting = async (): Promise<void> => {
    await slots.acquire()
    await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    slots.release()
  }
  // The pipeline itself, with its two child launchers counted (tap replaces pipeline.ts's own imports).
  const ptxasModule = await import('../../lib/cuda/ptxas.js')
  const nvdisasm = await import('../../lib/cuda/nvdisasm.js')
  const started: string[] = []
  let beforeDump = false
  const { assembleProgram } = await t.mockImport<typeof import('../../lib/cuda/program/pipeline.js')>('../../lib/cuda/program/pipeline.js', {
    '../../lib/cuda/ptxas.js': {
      ...ptxasModule,
      runPtxasAsync: async (...args: Parameters<typeof ptxasModule.runPtxasAsync>) => {
        started.push('ptxas')
        const run = await ptxasModule.runPtxasAsync(...args)
        if (beforeDump) void cancelWhileWaiting() // queued while ptxas still holds the slot: next in line
        return run
      },
    },
    '../../lib/cuda/nvdisasm.js': { ...nvdisasm, dumpWordsAsync: (...args: Parameters<typeof nvdisasm.dumpWordsAsync>) => { started.push('dump'); return nvdisasm.dumpWordsAsync(...args) } },
  })
  for (const [label, config, expected] of [
    ['before ptxas', BASE, []],
    ['before the SASS dump', { ...BASE, dumpSassCommand: 'od -An' }, ['ptxas']],
  ] as const) {
    started.length = 0
    slots = new Semaphore(1)
    controller = new AbortController()
    beforeDump = config.dumpSassCommand !== undefined
    const holding = beforeDump ? Promise.resolve() : cancelWhileWaiting()
    const state = programState(Program.create(config))
    const assembled = await assembleProgram(state.config, state.ptx, controller.signal, undefined, undefined, slots)
    await holding
    t.same([assembled.ok, started], [false, expected], `${label}: the compile failed, and no child was started after the cancel`)
  }
})

t.test('compileMany: programs whose objects would define the same symbols fail, unstarted, each with the reason', async (t) => {
  const dir = scratchDir(t)
  const marker = join(dir, 'started')
  const ptxas = fakeTool(dir, 'ptxas', `echo "$TH_NAME" >> '${marker}'; exit 1`)
  const make = (name: string | undefined, tag: string, extra: Partial<ProgramConfig> = {}): Program =>
    Program.create({ ...BASE, ptxas, ...(name === undefined ? {} : { name }), env: { ...process.env, TH_NAME: tag }, ...extra })
  const results = await compileMany([
    make('kernel', 'a'), // a/kernel.ptx
    make('kernel', 'b'), // b/kernel.ptx: the same kernel_cubin
    make(undefined, 'c'),
    make('other', 'd'),
    make(undefined, 'e'), // the default name twice
    make('kernel', 'f', { dumpSassCommand: 'true' }), // kernel_cubin again, and kernel_sass
  ], { concurrency: 1 })
  t.same(results.map((r) => r.status), [5, 5, 5, 5, 5, 5])
  t.same(results.map((r) => r.error?.reason.startsWith('programs[')), [false, true, false, false, true, true], 'the later of each pair is refused')
  t.equal(results[1].error?.reason, 'programs[1] would define kernel_cubin, kernel_cubin_size, as programs[0] does, so their objects ' +
    'could not be linked together; give each program its own name (name "kernel" is taken)')
  t.match(results[4].error?.reason, /^programs\[4\] would define program_cubin, program_cubin_size, as programs\[2\] does/)
  t.match(results[5].error?.reason, /^programs\[5\] would define kernel_cubin, kernel_cubin_size, as programs\[0\] does/)
  t.same(readFileSync(marker, 'utf8').split('\n').filter(Boolean).sort(), ['a', 'c', 'd'], 'the refused programs never started ptxas')
})

/** Device functions only, and a kernel that calls one of them as an extern: nvlink's two halves. */
function relocatablePair(target: string): { functions: string; entry: string } {
  const head = `.version ${ptxIsaFor(target)}\n.target ${target}\n.address_size 64\n`
  return {
    functions: `${head}.visible .func (.param .b32 ret) square(.param .b32 x)\n{\n  .reg .b32 %r<3>;\n  ld.param.b32 %r1, [x];\n` +
      '  mul.lo.s32 %r2, %r1, %r1;\n  st.param.b32 [ret], %r2;\n  ret;\n}\n',
    entry: `${head}.extern .func (.param .b32 ret) square(.param .b32 x);\n.visible .entry use_square(.param .u64 out)\n{\n` +
      '  .reg .b32 %r<3>;\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n' +
      '  {\n  .param .b32 p0;\n  .param .b32 r0;\n  st.param.b32 [p0], %r1;\n  call.uni (r0), square, (p0);\n  ld.param.b32 %r2, [r0];\n  }\n' +
      '  st.global.u32 [%rd1], %r2;\n  ret;\n}\n',
  }
}

t.test('relocatable: cubins the real nvlink links; without it, functions-only PTX is an error', skipWithoutPtxas, async (t) => {
  const nvlink = searchPath('nvlink', process.env)
  const dir = scratchDir(t)
  const { functions, entry } = relocatablePair('sm_90')
  const common = { gpuName: 'sm_90', allowAnyTarget: true, relocatable: true, ptxasOptions: '--warn-on-spills' }
  const results = await compileMany([
    Program.create({ ...common, input: functions, name: 'square_fn' }),
    Program.create({ ...common, input: entry, name: 'use_square' }),
  ])
  const [fn, kernel] = results.map((r) => r.output)
  if (fn === null || kernel === null) {
    t.fail('compiled', { results })
    return
  }
  t.same(fn.ptxas.argv.slice(0, 5), ['ptxas', '--warn-on-spills', '--compile-only', '-arch', 'sm_90'], 'the options first, then -c')
  for (const [output, ptx] of [[fn, functions], [kernel, entry]] as const) {
    t.ok(output.cubin.equals(runPtxas(ptx, { gpuName: 'sm_90', ptxasOptions: ['--warn-on-spills', '-c'] }).cubin!), `${output.name}: ptxas -c's cubin, byte for byte`)
    t.equal(readCubin(output.cubin).elfType, ET_REL, `${output.name}: ET_REL`)
  }
  t.same(fn.kernels, [], 'the functions-only cubin has no kernel')
  t.same(readCubin(fn.cubin).functions.map((f) => f.name), ['square'], 'and keeps the device function')
  t.same(kernel.kernels.map((k) => k.name), ['use_square'])

  const whole = await rejection(Program.create({ input: functions, gpuName: 'sm_90', allowAnyTarget: true }).compile())
  t.same([whole.status, whole.tool, whole.reason], [5, 'ptxas', 'the PTX has no kernel (.entry), so the whole-program cubin ptxas made is empty; ' +
    'compile device functions with relocatable (--relocatable-device-code, -c) and link them with nvlink'], 'functions-only PTX without relocatable')

  if (nvlink === null) {
    t.skip('nvlink not found on PATH')
    return
  }
  writeFileSync(join(dir, 'a.cubin'), fn.cubin)
  writeFileSync(join(dir, 'b.cubin'), kernel.cubin)
  const linked = spawnChildSync({ file: nvlink, args: ['-arch=sm_90', 'a.cubin', 'b.cubin', '-o', 'linked.cubin'], cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  t.equal(linked.exitCode, 0, `nvlink exits 0 (${linked.stderr.toString()})`)
  const image = readCubin(readFileSync(join(dir, 'linked.cubin')))
  t.equal(image.elfType, 2, 'nvlink made an executable cubin (ET_EXEC)')
  t.same(image.kernels.map((k) => k.name), ['use_square'], 'with the kernel, its extern call resolved')

  // Relocatable cubins for several targets: a fat binary (fatbinary --device-c) nvlink takes too.
  if (searchPath('fatbinary', process.env) === null) return
  const fat = await Program.create({ ...common, gpuName: ['sm_90', 'sm_100'], input: functions, name: 'square_fat' }).compile()
  t.ok(fat.fatbinary?.argv.includes('--device-c'), 'fatbinary is told the code is relocatable')
  writeFileSync(join(dir, 'a.fatbin'), fat.fatbin!)
  const fromFatbin = spawnChildSync({ file: nvlink, args: ['-arch=sm_90', 'a.fatbin', 'b.cubin', '-o', 'linked2.cubin'], cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  t.equal(fromFatbin.exitCode, 0, `nvlink takes the fat binary (${fromFatbin.stderr.toString()})`)
  t.same(readCubin(readFileSync(join(dir, 'linked2.cubin'))).kernels.map((k) => k.name), ['use_square'])
})

t.test('ptxasOptions: checked at create against the ptxas to be run', async (t) => {
  const rows: Array<[unknown, string, RegExp]> = [
    [['-arch', 'sm_90'], 'ERR_INVALID_ARG_VALUE', /^ptxasOptions has "-arch", an option tileharness sets itself: use gpuName/],
    ['-c', 'ERR_INVALID_ARG_VALUE', /use relocatable/],
    ['-O0', 'ERR_INVALID_ARG_VALUE', /use optLevel/],
    [42, 'ERR_INVALID_ARG_TYPE', /^ptxasOptions must be a string or an array of strings/],
  ]
  for (const [ptxasOptions, code, message] of rows) {
    t.throws(() => Program.create({ ...BASE, ptxasOptions: ptxasOptions as string }), { code, field: 'ptxasOptions', message }, JSON.stringify(ptxasOptions))
  }
  const dir = scratchDir(t)
  const ptxas = fakeProbedPtxas(dir, 'ptxas', '--maxrregcount <N>   (-maxrregcount)\n--verbose   (-v)\n')
  t.throws(() => Program.create({ ...BASE, ptxas, ptxasOptions: '--warn-on-spills' }), { field: 'ptxasOptions', message: /not an option of .*\/ptxas \(ptxas 99\.0\.1\)/ }, 'an option this ptxas does not list')
  t.equal(Program.create({ ...BASE, ptxas, ptxasOptions: ['--maxrregcount', '32', '-v'] }).compiled, false, 'options it lists')
})

const withFatbinary = skipWithoutPtxas.skip !== undefined ? skipWithoutPtxas : searchPath('fatbinary', process.env) === null ? { skip: 'fatbinary not found on PATH' } : {}

t.test('several targets and the PTX: the real fatbinary wraps ptxas\'s own cubins', withFatbinary, async (t) => {
  const targets = ['sm_90', 'sm_100a', 'sm_120']
  const diagnostics: string[] = []
  const programs = EXAMPLE_KERNELS.map((kernel) => Program.create({
    input: examplePtx(kernel, 'sm_90'), gpuName: targets, embedPtx: true, allowAnyTarget: true, name: `${kernel}_fat`,
    ptxasOptions: '--warn-on-spills', onDiagnostic: (_text, tool) => { diagnostics.push(tool) },
  }))
  const results = await compileMany(programs, { concurrency: 2 })
  for (const [i, kernel] of EXAMPLE_KERNELS.entries()) {
    const output = results[i].output
    if (output === null || output.fatbin === null) {
      t.fail(`${kernel}: ${results[i].error?.reason}`)
      continue
    }
    const ptx = examplePtx(kernel, 'sm_90')
    t.same(output.targets.map((image) => image.arch), targets, `${kernel}: one cubin per target, suffix read back`)
    t.ok(output.object.includes(output.fatbin), `${kernel}: the object holds the fat binary`)
    for (const symbol of ['_fatbin\0', '_fatbin_size\0']) t.ok(output.object.includes(`${kernel}_fat${symbol}`), `${kernel}: symbol ${kernel}_fat${symbol.slice(0, -1)}`)
    t.notOk(output.object.includes(`${kernel}_fat_cubin`), `${kernel}: and no _cubin symbol`)
    t.same(output.fatbinary?.argv.slice(0, 4), ['fatbinary', '--create=/dev/stdout', '-64', '--compress=false'], `${kernel}: fatbinary's argv`)

    // The fat binary, read with our own reader: each ELF image is ptxas's cubin for its target.
    const entries = readFatbin(output.fatbin)
    t.same(entries.map((e) => [e.kind, e.arch, e.compressed]), [...targets.map((gpu) => ['elf', gpu, false]), ['ptx', 'sm_90', false]], `${kernel}: entries`)
    for (const [j, gpuName] of targets.entries()) {
      const direct = runPtxas(ptx, { gpuName, ptxasOptions: ['--warn-on-spills'] }).cubin!
      t.ok(Buffer.from(entries[j].payload).equals(direct), `${kernel} ${gpuName}: the image is a direct ptxas run's cubin, byte for byte`)
      t.ok(output.targets[j].cubin.equals(direct), `${kernel} ${gpuName}: as is targets[${j}].cubin`)
    }
    t.equal(payloadText(entries[3].payload), fatbinPtxText(ptx), `${kernel}: the PTX entry is the input (as fatbinary keeps PTX)`)
    t.equal(entries[3].ptxVersion, '7.8', `${kernel}: with its ISA version`)
  }
  t.ok(diagnostics.every((tool) => tool === 'ptxas' || tool === 'fatbinary'))
})

// A temp root with a comma in its path (TMPDIR=/tmp/a,b) failed every multi-target compile:
// fatbinary split the images' temp paths at the comma.
t.test('several targets with a temp root whose path has a comma', withFatbinary, async (t) => {
  const tempRoot = join(scratchDir(t), 'a,b')
  mkdirSync(tempRoot)
  const output = await Program.create({ input: MINIMAL_PTX, gpuName: ['sm_100', 'sm_120'], embedPtx: true, tempRoot }).compile()
  t.same(readFatbin(output.fatbin!).map((e) => [e.kind, e.arch]), [['elf', 'sm_100'], ['elf', 'sm_120'], ['ptx', 'sm_100']])
  t.same(readdirSync(tempRoot), [], 'nothing in the temp root')
})

t.test('one target: an array of one is the same object; embedPtx alone makes a fat binary', withFatbinary, async (t) => {
  const one = await Program.create({ input: MINIMAL_PTX, gpuName: 'sm_100' }).compile()
  const listed = await Program.create({ input: MINIMAL_PTX, gpuName: ['sm_100'] }).compile()
  t.ok(listed.object.equals(one.object), 'byte-identical objects')
  t.same([one.fatbin, one.fatbinary, one.targets.length], [null, null, 1])
  const withPtx = await Program.create({ input: MINIMAL_PTX, gpuName: 'sm_100', embedPtx: true }).compile()
  t.same(readFatbin(withPtx.fatbin!).map((e) => [e.kind, e.arch]), [['elf', 'sm_100'], ['ptx', 'sm_100']])
  t.ok(withPtx.object.includes('program_fatbin\0'))
  // A Windows host: the same fat binary in a COFF object.
  const coff = await Program.create({ input: MINIMAL_PTX, gpuName: ['sm_100', 'sm_120'], hostOs: 'windows', hostArch: 'x86_64' }).compile()
  t.ok(coff.object.equals(packageCoffObject({ fatbin: coff.fatbin!, name: 'program', hostArch: 'x86_64' })), 'COFF: packageCoffObject\'s object for the fat binary')
})

t.test('several targets: checked at create', async (t) => {
  const rows: Array<[string, Partial<ProgramConfig>, string | RegExp]> = [
    ['an empty list', { gpuName: [] }, 'gpuName is an empty list; give at least one target, e.g. "sm_100"'],
    ['a target twice', { gpuName: ['sm_100', 'sm_120', 'sm_100'] }, 'sm_100 is given twice'],
    ['one bad target among good ones', { gpuName: ['sm_100', 'sm_90'] }, /"sm_90" is not one of/],
  ]
  for (const [name, overrides, reason] of rows) {
    const error = thrown(() => Program.create({ ...BASE, ...overrides }))
    t.equal(error.code, 'UNSUPPORTED_GPU_TARGET', name)
    if (typeof reason === 'string') t.equal(error.reason, reason, `${name}: reason`)
    else t.match(error.reason, reason, `${name}: reason`)
  }
  t.throws(() => Program.create({ ...BASE, gpuName: ['sm_100', 'sm_120'], dumpSassCommand: 'nvdisasm -c' }),
    { code: 'ERR_INCOMPATIBLE_OPTION_PAIR', field: 'dumpSassCommand', message: /cannot be combined with several targets/ })
  t.throws(() => Program.create({ ...BASE, embedPtx: true, dumpSassCommand: 'nvdisasm -c' }), { code: 'ERR_INCOMPATIBLE_OPTION_PAIR' })
  t.throws(() => Program.create({ ...BASE, embedPtx: 'yes' as unknown as boolean }), { code: 'ERR_INVALID_ARG_TYPE', field: 'embedPtx' })
})

t.test('onDiagnostic that throws: the compile rejects with its error and installs no output', async (t) => {
  const dir = scratchDir(t)
  const boom = new Error('callback failed')
  const program = Program.create({ ...BASE, ptxas: fakeTool(dir, 'ptxas', 'echo warn >&2; exit 1'), onDiagnostic: () => { throw boom } })
  await t.rejects(program.compile(), boom)
  t.notOk(program.compiled)
  // compileMany finishes every program's turn, then rethrows it.
  const other = Program.create({ ...BASE, name: 'other', ptxas: fakeTool(dir, 'ptxas2', 'exit 1') })
  await t.rejects(compileMany([program, other]), boom)
  t.equal((await rejection(other.compile())).status, 5, 'the other program is not stuck')
})

t.test('no temp files or fds left behind on any path', skipWithoutPtxas, async (t) => {
  const tempRoot = scratchDir(t)
  const dir = scratchDir(t)
  const sleeper = fakeTool(dir, 'sleeper', 'exec sleep 30')
  const failingDump = fakeTool(dir, 'dump', 'exit 4')
  const big = bigPtx(200_000)
  await Program.create({ ...BASE, tempRoot }).compile() // warm up the addon
  const before = openFds()
  const rows: Array<[string, Partial<ProgramConfig>, (() => AbortSignal)?]> = [
    ['success, argv', {}],
    ['success, file route, with a dump', { input: big, dumpSassCommand: 'od -An -tx1' }],
    ['ptxas fails, file route', { input: big.replace('ret;', 'ret') }],
    ['timeout, file route', { input: big, ptxas: sleeper, timeout: 200 }],
    ['abort, file route', { input: big, ptxas: sleeper }, () => AbortSignal.timeout(200)],
    ['dump fails', { dumpSassCommand: failingDump }],
    ['ptxas not found', { env: { PATH: join(dir, 'nowhere') } }],
  ]
  for (const [name, overrides, signal] of rows) {
    const program = Program.create({ ...BASE, tempRoot, ...overrides })
    await program.compile(signal === undefined ? {} : { signal: signal() }).catch((error: unknown) => {
      if (!(error instanceof ProgramError)) throw error
    })
    program.release()
    t.same(readdirSync(tempRoot), [], `${name}: nothing left in the temp root`)
  }
  t.equal(openFds(), before, 'no fds leaked')
})

t.test('the cubin is readable with lib/elf and the object holds what readCubin reads', skipWithoutPtxas, async (t) => {
  const output = await Program.create({ input: exampleKernel('cluster', 'sm_110'), gpuName: 'sm_110' }).compile()
  t.same(readCubin(output.cubin).kernels, output.kernels)
  t.same(output.kernels[0].ctaPerCluster, [2, 1, 1], 'the cluster shape survived')
})

t.test('compileMany searches PATH once per tool and PATH for its batch, not once per program', async (t) => {
  const dir = scratchDir(t)
  const dirs = ['a', 'b'].map((name) => join(dir, name))
  for (const d of dirs) {
    mkdirSync(d)
    fakeTool(d, 'ptxas', 'echo "ptxas fatal: not this time" >&2; exit 1')
  }
  const toolkit = await import('../../lib/cuda/toolkit.js')
  const searched: string[] = []
  // compile-many.ts's own import of the toolkit is replaced; what it imports beyond that is the
  // package's (tap's loader keeps the mock to the modules the entry point imports itself).
  const { compileMany: many } = await t.mockImport<typeof import('../../lib/cuda/program/compile-many.js')>('../../lib/cuda/program/compile-many.js', {
    '../../lib/cuda/toolkit.js': {
      ...toolkit,
      memoizedFindTool: () => toolkit.memoizedFindTool((name, env) => {
        searched.push(`${name} ${env.PATH}`)
        return toolkit.findTool(name, env)
      }),
    },
  })
  const programs = Array.from({ length: 6 }, (_, i) => Program.create({
    input: MINIMAL_PTX, gpuName: 'sm_100', name: `p${i}`, env: { PATH: dirs[i % 2] },
  }))
  const results = await many(programs, { concurrency: 3 })
  t.same(results.map((r) => r.status), [5, 5, 5, 5, 5, 5], 'each ran its PATH\'s ptxas, which failed')
  t.match(results[0].error?.diagnostics, /not this time/)
  t.same(searched.sort(), dirs.map((d) => `ptxas ${d}`), 'one search per PATH for six programs')
  for (const program of programs) program.release()
})
