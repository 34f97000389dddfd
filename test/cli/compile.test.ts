// `tileharness compile` end to end, as a subprocess through the harness: the README's first
// command, ptxas's stderr verbatim after a failure, the summary and --json, --dump-sass, signals,
// and no output (or temp) file on any failure. The exit statuses are in compile-status.test.ts,
// -o's rules in compile-output.test.ts.
//
// nvdisasm is not installed on these machines: --dump-sass rows use a fake `nvdisasm` script put
// first on PATH (a stand-in, labelled as such) and readelf -S -W, a real program taking a file.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { runPtxas, searchPath } from '../../lib/cuda/index.js'
import { EM_AARCH64, ET_REL, packageCoffObject, readFatbin } from '../../lib/elf/index.js'
import { examplePtx } from '../../lib/ptx/index.js'
import { eventually, processState, script, tempDir } from '../helpers.js'
import { bigPtx, kernelPtx, skipWithoutPtxas, PTXAS } from '../fixtures/cuda/helpers.js'
import { ENV_WITHOUT_ROOTS, MAIN, NATIVE_MACHINE, READELF, cli, lines, files } from './compile-helpers.js'

t.test("no arguments: the README's first command compiles vadd for sm_100", skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const r = cli(dir, [])
  t.equal(r.exitCode, 0, r.err)
  t.equal(r.err, '', 'nothing on stderr')
  t.same(files(dir), ['vadd.sm_100.o'], 'vadd.sm_100.o, and nothing else')
  const summary = r.out.split('\n')
  t.match(summary[0], /^vadd\.sm_100\.o: 1 kernel for sm_100, cubin \d+ bytes, object \d+ bytes$/)
  t.match(summary[1], /^ {2}vadd: \d+ registers$/)
  t.match(summary[2], /^ptxas \d+\.\d{3} s wall, \d+\.\d{3} s CPU, max RSS [\d.]+ (KiB|MiB)$/)
  t.equal(summary.length, 4, 'short: three lines')
  const object = fs.readFileSync(path.join(dir, 'vadd.sm_100.o'))
  t.equal(object.readUInt16LE(16), ET_REL, 'a relocatable object')
  t.equal(object.readUInt16LE(18), NATIVE_MACHINE, 'for this host')
  const cubin = runPtxas(examplePtx('vadd', 'sm_100'), { gpuName: 'sm_100' }).cubin!
  t.ok(object.includes(cubin), "holding ptxas's cubin for the example")
  t.match(summary[0], `cubin ${cubin.length} bytes, object ${object.length} bytes`)
  if (READELF !== null) {
    const symbols = spawnChildSync({ file: READELF, args: ['-s', '-W', path.join(dir, 'vadd.sm_100.o')] }).stdout.toString()
    t.match(symbols, /\bvadd_cubin\b/)
    t.match(symbols, /\bvadd_cubin_size\b/)
  }
})

t.test('examples, input files, -o and the ptxas options', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'my-kernel.v2.ptx'), kernelPtx('sm_100'))
  fs.mkdirSync(path.join(dir, 'out'))
  const rows: Array<[string[], string, { ptx: string; gpuName: string; optLevel?: number; flags?: string[]; machine?: number; symbol?: string }]> = [
    [['--example', 'saxpy', '--gpu-name', 'sm_120'], 'saxpy.sm_120.o', { ptx: examplePtx('saxpy', 'sm_120'), gpuName: 'sm_120' }],
    [['--example', 'reduce', '--gpu-name=sm_110', '-O0'], 'reduce.sm_110.o', { ptx: examplePtx('reduce', 'sm_110'), gpuName: 'sm_110', optLevel: 0 }],
    [['--example', 'cluster', '--gpu-name', 'sm_90', '--allow-any-target'], 'cluster.sm_90.o', { ptx: examplePtx('cluster', 'sm_90'), gpuName: 'sm_90' }],
    [['my-kernel.v2.ptx'], 'my-kernel.v2.o', { ptx: kernelPtx('sm_100'), gpuName: 'sm_100', symbol: 'my_kernel_v2_cubin' }],
    [['my-kernel.v2.ptx', '-o', 'out/k.o', '-O', '1', '--lineinfo'], 'out/k.o', { ptx: kernelPtx('sm_100'), gpuName: 'sm_100', optLevel: 1, flags: ['--generate-line-info'] }],
    [['--opt-level=2', '--sanitize', 'memcheck', '--output', 'san.o'], 'san.o', { ptx: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100', optLevel: 2, flags: ['--sanitize', 'memcheck'] }],
    [['--host-arch', 'aarch64', '-o', 'arm.o'], 'arm.o', { ptx: examplePtx('vadd', 'sm_100'), gpuName: 'sm_100', machine: EM_AARCH64 }],
    // a/kernel.ptx and b/kernel.ptx in one program need their own prefixes.
    [['my-kernel.v2.ptx', '--name', 'kernel_b', '-o', 'named.o'], 'named.o', { ptx: kernelPtx('sm_100'), gpuName: 'sm_100', symbol: 'kernel_b_cubin' }],
    // Architecture-specific and family targets, without --allow-any-target.
    [['--example', 'saxpy', '--gpu-name', 'sm_100a'], 'saxpy.sm_100a.o', { ptx: examplePtx('saxpy', 'sm_100a'), gpuName: 'sm_100a' }],
    [['--example', 'vadd', '--gpu-name', 'sm_90a', '--name', 'vadd90a'], 'vadd.sm_90a.o', { ptx: examplePtx('vadd', 'sm_90a'), gpuName: 'sm_90a', symbol: 'vadd90a_cubin' }],
    [['--example', 'vadd', '--gpu-name', 'sm_120f'], 'vadd.sm_120f.o', { ptx: examplePtx('vadd', 'sm_120f'), gpuName: 'sm_120f' }],
    // ptxas options passed through, each --ptxas-options split, in order; -c for a relocatable cubin.
    [['my-kernel.v2.ptx', '--ptxas-options', '--maxrregcount 32', '--ptxas-options=--warn-on-spills', '-o', 'opts.o'], 'opts.o',
      { ptx: kernelPtx('sm_100'), gpuName: 'sm_100', flags: ['--maxrregcount', '32', '--warn-on-spills'] }],
    [['my-kernel.v2.ptx', '-c', '-o', 'rdc.o'], 'rdc.o', { ptx: kernelPtx('sm_100'), gpuName: 'sm_100', flags: ['--compile-only'] }],
  ]
  for (const [args, output, expected] of rows) {
    const name = args.join(' ')
    const r = cli(dir, args)
    t.equal(r.exitCode, 0, `${name}: exit 0 (${r.err})`)
    t.match(r.out, `${output}: 1 kernel for ${expected.gpuName}`, `${name}: summary`)
    const object = fs.readFileSync(path.join(dir, output))
    const cubin = runPtxas(expected.ptx, { gpuName: expected.gpuName, optLevel: expected.optLevel ?? 3, ptxasOptions: expected.flags ?? [] }).cubin!
    t.ok(object.includes(cubin), `${name}: the cubin ptxas makes with those options`)
    t.equal(object.readUInt16LE(18), expected.machine ?? NATIVE_MACHINE, `${name}: machine`)
    if (expected.symbol !== undefined) t.ok(object.includes(Buffer.from(`${expected.symbol}\0`)), `${name}: symbol ${expected.symbol}`)
  }
  t.same(files(dir), ['arm.o', 'cluster.sm_90.o', 'my-kernel.v2.o', 'my-kernel.v2.ptx', 'named.o', 'opts.o', 'out', 'rdc.o', 'reduce.sm_110.o', 'san.o',
    'saxpy.sm_100a.o', 'saxpy.sm_120.o', 'vadd.sm_120f.o', 'vadd.sm_90a.o'])
  t.same(files(path.join(dir, 'out')), ['k.o'])
})

t.test('several targets and --ptx: a fat binary of ptxas\'s cubins, made by the real fatbinary', skipWithoutPtxas.skip === undefined && searchPath('fatbinary', process.env) === null ? { skip: 'fatbinary not found on PATH' } : skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const targets = ['sm_90', 'sm_100a', 'sm_120']
  const r = cli(dir, ['--example', 'reduce', '--gpu-name', targets.join(','), '--ptx', '--allow-any-target'])
  t.equal(r.exitCode, 0, r.err)
  t.match(r.out, /^reduce\.sm_90\+sm_100a\+sm_120\.o: 1 kernel for sm_90, sm_100a, sm_120 and PTX, fatbin \d+ bytes, object \d+ bytes\n/)
  t.match(r.out, /\nfatbinary [\d.]+ s wall/)
  const object = fs.readFileSync(path.join(dir, 'reduce.sm_90+sm_100a+sm_120.o'))
  t.ok(object.includes('reduce_fatbin\0') && object.includes('reduce_fatbin_size\0'), 'the fatbin symbols')
  // The fat binary sits at the start of .rodata; its header says how long it is.
  const start = object.indexOf(Buffer.from([0x50, 0xed, 0x55, 0xba]))
  const fatbin = object.subarray(start, start + 16 + Number(object.readBigUInt64LE(start + 8)))
  const entries = readFatbin(fatbin)
  const ptx = examplePtx('reduce', 'sm_90')
  t.same(entries.map((e) => [e.kind, e.arch]), [...targets.map((gpu) => ['elf', gpu]), ['ptx', 'sm_90']], 'the images, the PTX for the oldest target')
  for (const [i, gpuName] of targets.entries()) {
    t.ok(Buffer.from(entries[i].payload).equals(runPtxas(ptx, { gpuName }).cubin!), `${gpuName}: ptxas's cubin, byte for byte`)
  }
  const json = JSON.parse(cli(dir, ['--json', '--example', 'vadd', '--gpu-name', 'sm_100,sm_120f']).out)
  t.match(json, { gpuName: 'sm_100', fatbinBytes: Number, targets: [{ gpuName: 'sm_100', arch: 'sm_100' }, { gpuName: 'sm_120f', arch: 'sm_120f' }], fatbinary: { argv: Array } })
})

t.test('--json prints a JSON summary', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const r = cli(dir, ['--json', '--example', 'reduce', '--gpu-name', 'sm_121', '-O', '2'])
  t.equal(r.exitCode, 0)
  const summary = JSON.parse(r.out)
  t.match(summary, {
    status: 0, output: 'reduce.sm_121.o', gpuName: 'sm_121', sm: 121, arch: 'sm_121', optLevel: 2, hostOs: 'linux',
    kernels: [{ name: 'reduce', registers: Number }], sassBytes: null, dumpSass: null,
    ptxas: { inputRoute: 'argv', durationMs: Number, userCPUMs: Number, maxRSSKiB: Number, diagnostics: '' },
  })
  t.ok(summary.ptxas.maxRSSKiB > 0, "ptxas's max RSS from wait4")
  t.equal(summary.objectBytes, fs.statSync(path.join(dir, 'reduce.sm_121.o')).size)
  t.equal(summary.cubinBytes, runPtxas(examplePtx('reduce', 'sm_121'), { gpuName: 'sm_121', optLevel: 2 }).cubin!.length)
  const variant = JSON.parse(cli(dir, ['--json', '--example', 'reduce', '--gpu-name', 'sm_103a']).out)
  t.match(variant, { gpuName: 'sm_103a', sm: 103, arch: 'sm_103a' }, 'an a target: arch with its suffix, read back from the cubin')

  const failed = cli(dir, ['--json', '--host-arch', 'arm64ec', '-o', 'never.o'])
  t.equal(failed.exitCode, 5)
  t.match(JSON.parse(failed.out), { status: 5, code: 'COMPILE_FAILED', message: 'failed to compile PTX program', reason: /arm64ec/ })
  t.notOk(fs.existsSync(path.join(dir, 'never.o')))

  // The command's own failures print an object too, the same shape with code null, its message
  // the line on stderr: every failure under --json does.
  fs.mkdirSync(path.join(dir, 'a-directory'))
  fs.writeFileSync(path.join(dir, 'k.ptx'), '.version 9.0\n.target sm_100\n.address_size 64\n')
  const rows: Array<[string[], number]> = [
    [['no-such.ptx'], 2],
    [['k.ptx', '-o', 'a-directory'], 2],
    [['k.ptx', '-o', 'k.ptx'], 2],
    [['k.ptx', '--ptxas-options', '-arch sm_90'], 2],
    [['--example', 'vadd', '-o', '/dev/full'], 5],
  ]
  for (const [args, status] of rows) {
    const r = cli(dir, ['--json', ...args])
    t.equal(r.exitCode, status, `${args.join(' ')}: status ${status}`)
    const line = r.err.trim().split('\n').at(-1)!.replace(/^tileharness compile: /, '')
    t.same(JSON.parse(r.out), { status, code: null, message: line, reason: '', tool: null, diagnostics: '' }, `${args.join(' ')}: the object, saying what stderr says`)
  }
})

t.test('--host-os windows writes the COFF object for the host arch', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const cubin = runPtxas(examplePtx('vadd', 'sm_100'), { gpuName: 'sm_100' }).cubin!
  for (const hostArch of ['x86_64', 'aarch64'] as const) {
    const r = cli(dir, ['--host-os', 'windows', '--host-arch', hostArch, '-o', `vadd-${hostArch}.obj`, '--json'])
    t.equal(r.exitCode, 0, r.err)
    t.match(JSON.parse(r.out), { hostOs: 'windows', hostArch, objectBytes: fs.statSync(path.join(dir, `vadd-${hostArch}.obj`)).size })
    const object = fs.readFileSync(path.join(dir, `vadd-${hostArch}.obj`))
    t.ok(object.equals(packageCoffObject({ cubin, name: 'vadd', hostArch })), `${hostArch}: packageCoffObject's object for ptxas's cubin`)
  }
  if (searchPath('x86_64-w64-mingw32-objdump', process.env) === null) {
    t.comment('x86_64-w64-mingw32-objdump not on PATH (install mingw-w64): test/elf/coff.test.ts checks the objects with LLVM')
    return
  }
  const dump = spawnChildSync({ file: 'x86_64-w64-mingw32-objdump', args: ['-t', 'vadd-x86_64.obj'], cwd: dir })
  t.match(dump.stdout.toString(), /file format pe-x86-64[\s\S]*\(scl   2\) \(nx 0\) 0x0+ vadd_cubin\n/, 'mingw-w64 objdump reads it: vadd_cubin, external')
})

t.test("a ptxas failure: ptxas's stderr verbatim, then ours; exit 5; no output file", skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const bad = `${kernelPtx('sm_100').replace('ret;', 'ret')}`
  fs.writeFileSync(path.join(dir, 'bad.ptx'), bad)
  const reference = runPtxas(bad, { gpuName: 'sm_100', inputName: 'bad.ptx' })
  t.equal(reference.status, 'failed')
  const r = cli(dir, ['bad.ptx'])
  t.equal(r.exitCode, 5)
  t.equal(r.err, reference.diagnostics + lines('failed to compile PTX program', 'ptxas exited with status 255'))
  t.same(files(dir), ['bad.ptx'], 'no bad.o, no temp file')

  // ptxas's warnings on success reach stderr verbatim too.
  const debug = cli(dir, ['--device-debug', '-O', '0', '-o', 'debug.o'])
  t.equal(debug.exitCode, 0)
  const warnings = runPtxas(examplePtx('vadd', 'sm_100'), { gpuName: 'sm_100', optLevel: 0, ptxasOptions: ['--device-debug'] }).diagnostics
  t.match(warnings, /debug_info section not found/)
  t.equal(debug.err, warnings, 'exactly ptxas\'s words')
})

t.test("ptxas's messages name INPUT as given, on the argv and memfd routes and from standard input", skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'src'))
  const small = kernelPtx('sm_100').replace('ret;', 'ret')
  const big = bigPtx(200_000).replace('ret;', 'ret') // over one argv string: the memfd route
  fs.writeFileSync(path.join(dir, 'src', 'small.ptx'), small)
  fs.writeFileSync(path.join(dir, 'src', 'big.ptx'), big)
  const rows: Array<[string, string[], string, Partial<ChildSpec>]> = [
    ['argv route', ['src/small.ptx'], 'src/small.ptx', {}],
    ['memfd route', ['./src/big.ptx', '--json'], './src/big.ptx', {}],
    ['standard input', ['-', '-o', 'stdin-bad.o'], '<stdin>', { input: Buffer.from(small) }],
  ]
  for (const [name, args, shown, extra] of rows) {
    const r = cli(dir, args, extra)
    t.equal(r.exitCode, 5, `${name}: exit 5`)
    // ptxas handed the file by path says exactly this: the same location prefix, line and text.
    const byPath = spawnChildSync({ file: PTXAS!, args: ['-arch', 'sm_100', '--opt-level', '3', '-o', '/dev/null', args[0] === '-' ? 'src/small.ptx' : args[0]], cwd: dir })
    const expected = byPath.stderr.toString().replaceAll(args[0] === '-' ? 'src/small.ptx' : args[0], shown)
    t.match(expected, new RegExp(`^ptxas ${shown.replace(/[.<>/]/g, '\\$&')}, line \\d+; fatal   : Parsing error`, 'm'), `${name}: ptxas's message names ${shown}`)
    t.ok(r.err.startsWith(expected), `${name}: ours names it the same way, with ptxas's line number (${r.err})`)
    t.match(r.err, lines('failed to compile PTX program', 'ptxas exited with status 255'), `${name}: a PTX failure says PTX`)
    t.notMatch(r.err, /Tile IR|application ptx input|\/dev\/fd\/0/, `${name}: no other name for the input`)
  }
  t.same(files(dir), ['src'], 'no object written')

  // Standard input that compiles: the object is named after it.
  const ok = cli(dir, ['-'], { input: Buffer.from(kernelPtx('sm_100')) })
  t.equal(ok.exitCode, 0, ok.err)
  t.same(files(dir), ['src', 'stdin.o'], 'stdin.o')
  t.ok(fs.readFileSync(path.join(dir, 'stdin.o')).includes(runPtxas(kernelPtx('sm_100'), { gpuName: 'sm_100' }).cubin!), 'holding the cubin')
})

t.test('a temp file that cannot be made (TMPDIR=/nonexistent): exit 5 with the cause, never a stack trace', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const env = { ...process.env, TMPDIR: '/nonexistent' }
  // The SASS dump reads the cubin from a temp file.
  const r = cli(dir, ['--dump-sass', 'od -An', '-o', 'k.o'], { env })
  t.equal(r.exitCode, 5)
  t.equal(r.err, lines('failed to compile PTX program', "cannot create a temp file for vadd.cubin in '/nonexistent': no such file or directory (ENOENT)"))
  const json = cli(dir, ['--dump-sass', 'od -An', '-o', 'k.o', '--json'], { env })
  t.equal(json.exitCode, 5)
  t.match(JSON.parse(json.out), { status: 5, code: 'COMPILE_FAILED', message: 'failed to compile PTX program', reason: /^cannot create a temp file for vadd\.cubin in '\/nonexistent': / })
  t.same(files(dir), [], 'no object')
})

t.test('ptxas missing: says how to point PATH or CUDA_ROOT at a toolkit', async (t) => {
  const dir = tempDir(t)
  const r = cli(dir, [], { env: { ...ENV_WITHOUT_ROOTS, PATH: path.join(dir, 'nowhere') } })
  t.equal(r.exitCode, 5)
  t.equal(r.err, lines(
    'failed to compile PTX program',
    "ptxas was not found on PATH (No such file or directory); put a CUDA toolkit's bin directory on PATH " +
      '(export PATH=/usr/local/cuda/bin:$PATH) or point CUDA_ROOT at the toolkit (export CUDA_ROOT=/usr/local/cuda)',
  ))
  t.same(files(dir), [])
  const toolkit = '/usr/local/cuda-13.0'
  if (fs.existsSync(path.join(toolkit, 'bin', 'ptxas'))) {
    const fromRoot = cli(dir, ['--json'], { env: { ...ENV_WITHOUT_ROOTS, PATH: path.join(dir, 'nowhere'), CUDA_ROOT: toolkit } })
    t.equal(fromRoot.exitCode, 0, 'CUDA_ROOT alone is enough')
    t.equal(JSON.parse(fromRoot.out).ptxas.path, path.join(toolkit, 'bin', 'ptxas'))
  }
})

t.test('--dump-sass', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  // A stand-in for nvdisasm, which is not installed here: it names itself and what it was given.
  script(tools, 'nvdisasm', '#!/bin/sh\nfor last; do :; done\necho "// fake nvdisasm (stand-in) $1 $(wc -c < "$last")"\n')
  const env = { ...process.env, PATH: `${tools}:${process.env.PATH}` }
  fs.writeFileSync(path.join(dir, 'k.ptx'), kernelPtx('sm_100'))

  const r = cli(dir, ['--dump-sass', '-o', 'a.o'], { env })
  t.equal(r.exitCode, 0, r.err)
  t.match(r.out, /^SASS \d+ bytes from 'nvdisasm -c' in \.nvdisasm \(\d+\.\d{3} s\)$/m)
  const object = fs.readFileSync(path.join(dir, 'a.o'))
  const cubin = runPtxas(examplePtx('vadd', 'sm_100'), { gpuName: 'sm_100' }).cubin!
  t.ok(object.includes(Buffer.from(`// fake nvdisasm (stand-in) -c ${cubin.length}\n\0`)), "the command's stdout, NUL-terminated, in the object")

  const parsed = cli(dir, ['--dump-sass', 'k.ptx'], { env })
  t.equal(parsed.exitCode, 0, '--dump-sass k.ptx: k.ptx is the INPUT, the command the default')
  t.match(parsed.out, /^k\.o: .*\n.*\n.*\nSASS \d+ bytes from 'nvdisasm -c'/)

  if (READELF !== null) {
    const readelf = cli(dir, ['--dump-sass', 'readelf -S -W', '-o', 'r.o', '--json'])
    t.equal(readelf.exitCode, 0, 'a real program that takes the cubin path')
    const summary = JSON.parse(readelf.out)
    t.same(summary.dumpSass.argv.slice(0, 3), ['readelf', '-S', '-W'])
    t.ok(fs.readFileSync(path.join(dir, 'r.o')).includes(Buffer.from('Section Headers:')))
  }

  script(tools, 'failing-disasm', '#!/bin/sh\necho "failing-disasm: cannot read the cubin" >&2\nexit 3\n')
  const before = files(dir)
  const failed = cli(dir, ['--dump-sass', 'failing-disasm -c', '-o', 'never.o'], { env })
  t.equal(failed.exitCode, 5)
  t.equal(failed.err, 'failing-disasm: cannot read the cubin\n' + lines('failed to compile PTX program', 'failing-disasm exited with status 3'))
  t.same(files(dir), before, 'no never.o, no temp file')

  // A dump command that cannot be started: which program, what failed, the errno's text, a hint.
  const noShebang = path.join(tools, 'no-shebang-disasm')
  fs.writeFileSync(noShebang, 'echo never\n', { mode: 0o755 })
  const unstartable: Array<[string, string]> = [
    [`${noShebang} -c`, `failed to run '${noShebang}': Exec format error (no #! line?)`],
    ['th-no-such-disassembler -c', "failed to run 'th-no-such-disassembler': No such file or directory"],
    [tools, `failed to run '${tools}': Permission denied (it is a directory)`],
  ]
  for (const [command, reason] of unstartable) {
    const r = cli(dir, ['--dump-sass', command, '-o', 'never.o'], { env })
    t.equal(r.exitCode, 5, `--dump-sass '${command}': status 5`)
    t.equal(r.err, lines('failed to compile PTX program', reason), `--dump-sass '${command}': the reason`)
  }
  t.same(files(dir), before, 'no never.o, no temp file')
})

t.test("a tool's last line without its newline is ended before ours", async (t) => {
  // A ptxas cut off mid-line (or its messages cut at maxBuffer): its bytes verbatim, then a
  // newline, so that 'tileharness compile: ...' starts a line of its own.
  const dir = tempDir(t)
  const tools = tempDir(t)
  script(tools, 'ptxas', '#!/bin/sh\nprintf "ptxas fatal   : cut off mid-li" >&2\nexit 255\n')
  const r = cli(dir, ['--example', 'vadd'], { env: { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` } })
  t.equal(r.exitCode, 5)
  t.equal(r.err, 'ptxas fatal   : cut off mid-li\n' + lines('failed to compile PTX program', 'ptxas exited with status 255'))
})

t.test('SIGTERM while ptxas runs: ptxas is killed, exit 5, no output', async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  const pidFile = path.join(tools, 'pid')
  script(tools, 'ptxas', `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 30\n`)
  const child = startChild({
    file: process.execPath,
    args: [MAIN, 'compile'],
    cwd: dir,
    env: { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` },
    timeout: 60000,
  })
  t.ok(await eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== ''), 'ptxas started')
  child.kill('SIGTERM')
  const r = await child.result
  t.equal(r.exitCode, 5)
  t.equal(r.stderr.toString(), lines('failed to compile PTX program', 'Child aborted'))
  t.ok(await eventually(() => processState(Number(fs.readFileSync(pidFile, 'utf8'))) !== 'alive'), 'ptxas is gone')
  t.same(files(dir), [], 'no output file')
})
