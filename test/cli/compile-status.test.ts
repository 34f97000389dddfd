// `tileharness compile`'s exit status, as a subprocess through the harness: the Program status for
// each failure, one line per message and never a stack trace, no output (or temp) file, and the
// help's exit-status table.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { Program, type ProgramConfig, type ProgramError } from '../../lib/cuda/index.js'
import { examplePtx } from '../../lib/ptx/index.js'
import { COMPILE_EXIT_STATUSES, COMPILE_USAGE } from '../../lib/cli/compile.js'
import { tempDir } from '../helpers.js'
import { kernelPtx, PTXAS } from '../fixtures/cuda/helpers.js'
import { PREFIX, cli, lines, usage, files } from './compile-helpers.js'

t.test('exit status is the Program status; one line per message; no output file', async (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'garbage.ptx'), 'int main(void) { return 0; }\n')
  fs.writeFileSync(path.join(dir, 'empty.ptx'), '')
  fs.writeFileSync(path.join(dir, 'kernel.tileir'), Buffer.from([0x7f, 0x54, 0x69, 0x6c, 0x65, 0x49, 0x52, 0x00, 0x0d, 0x00]))
  fs.writeFileSync(path.join(dir, 'kernel.mlirbc'), Buffer.from([0x4d, 0x4c, 0xef, 0x52, 0x00, 0x05]))
  fs.writeFileSync(path.join(dir, 'a.ptx'), kernelPtx('sm_100'))
  const inputs = files(dir)
  const arm64ec = 'host architecture arm64ec: tileharness writes objects for x86_64 and aarch64 only (ELF for linux, COFF for windows)'
  const rows: Array<[string[], number, string | RegExp]> = [
    [['--gpu-name', 'sm_90'], 2, lines('unsupported GPU target', '"sm_90" is not one of sm_100, sm_103, sm_110, sm_120, sm_121 or an a/f target ptxas accepts; allowAnyTarget (--allow-any-target) accepts others, such as sm_90')],
    [['a.ptx', '--gpu-name', 'sm_99a'], 2, /^tileharness compile: unsupported GPU target\n/],
    [['-O', '4'], 2, lines('invalid optimization level', 'optLevel must be an integer from 0 to 3 (got 4)')],
    [['-O', 'fast'], 2, lines('invalid optimization level', 'optLevel must be an integer from 0 to 3 (got fast)')],
    // Not 1e20 (Number's rounding of it): the value as given.
    [['-O', '99999999999999999999'], 2, lines('invalid optimization level', 'optLevel must be an integer from 0 to 3 (got 99999999999999999999)')],
    [['--device-debug'], 2, lines('optimized debugging is not supported, change optimization level to 0 or disable full debug info', 'deviceDebug with optLevel 3')],
    [['--device-debug', '-O', '2'], 2, /^tileharness compile: optimized debugging is not supported/],
    [['--host-arch', 'riscv64'], 2, lines('unsupported host architecture', '"riscv64" is not one of x86_64, aarch64, arm64ec')],
    [['--host-os', 'darwin'], 2, lines('unsupported host operating system', '"darwin" is not one of linux, windows')],
    [['--host-arch', 'arm64ec'], 5, lines('failed to compile PTX program', arm64ec)],
    [['--host-arch', 'arm64ec', '--host-os', 'windows'], 5, lines('failed to compile PTX program', arm64ec)],
    [['garbage.ptx'], 3, lines('input does not correspond to PTX text', 'it does not begin with a .version directive')],
    [['empty.ptx'], 3, lines('input does not correspond to PTX text', 'it is empty')],
    [['kernel.tileir'], 3, lines('input does not correspond to PTX text (it looks like Tile IR bytecode instead)', 'it starts with the Tile IR bytecode magic')],
    [['kernel.mlirbc'], 3, lines('input does not correspond to PTX text (it looks like MLIR bytecode instead)', 'it starts with the MLIR bytecode magic')],
    [['missing.ptx'], 2, lines("cannot read 'missing.ptx': no such file or directory (ENOENT)")],
    [['--bogus'], 2, usage('unknown option --bogus')],
    [['--name', 'my-kernel'], 2, usage('--name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) (received string "my-kernel")')],
    [['a.ptx', '--name', '9lives'], 2, usage('--name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) (received string "9lives")')],
    [['a.ptx', '--name='], 2, usage('--name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) (received string "")')],
    [['--name'], 2, usage('option --name needs a value')],
    [['--gpu-name', 'sm_100,sm_100'], 2, lines('unsupported GPU target', 'sm_100 is given twice')],
    [['--gpu-name', 'sm_100,sm_120', '--dump-sass'], 2, lines('--dump-sass cannot be combined with several --gpu-name targets: the SASS dump is of one cubin, and a fat binary holds several images')],
    [['--ptx', '--dump-sass'], 2, lines('--dump-sass cannot be combined with --ptx: the SASS dump is of one cubin, and a fat binary holds several images')],
    [['--ptxas-options', "-v '"], 2, usage('--ptxas-options: unterminated single quote (opened at offset 3)')],
    [['a.ptx', '--ptxas-options', '-arch sm_90'], 2, lines('--ptxas-options has "-arch", an option tileharness sets itself: use gpuName (--gpu-name)')],
    [['a.ptx', '--ptxas-options', '-c'], 2, lines('--ptxas-options has "-c", an option tileharness sets itself: use relocatable (--relocatable-device-code, -c)')],
    [['a.ptx', '--ptxas-options', '--maxrregcount'], 2, /^tileharness compile: --ptxas-options has "--maxrregcount" without its value <archmax\/archmin\/N>\n$/],
    [['a.ptx', '--ptxas-options', '--bogus'], 2, /^tileharness compile: --ptxas-options has "--bogus", which is not an option of \S+ptxas \(ptxas [\d.]+\); see ptxas --help\n$/],
    [['--example', 'gemm'], 2, usage("unknown example 'gemm' (vadd, saxpy, reduce, cluster)")],
    [['a.ptx', 'garbage.ptx'], 2, usage("more than one INPUT ('a.ptx' and 'garbage.ptx')")],
    [['a.ptx', '--example', 'vadd'], 2, usage('give either INPUT or --example, not both')],
    [['-o'], 2, usage('option -o needs a value')],
    [['-o', 'nodir/x.o'], 2, new RegExp(`^${PREFIX}cannot write 'nodir/x\\.o': directory '.*/nodir': no such file or directory \\(ENOENT\\)\\n$`)],
    [['-o', '.'], 2, lines("cannot write '.': it is a directory")],
    [['--sanitize', 'threadsteer'], 2, usage("invalid --sanitize 'threadsteer' (memcheck or none)")],
    [['--timeout', 'soon'], 2, /^tileharness compile: invalid --timeout 'soon'.*\nTry 'tileharness compile --help' for more information\.\n$/],
    [['--allow-any-target', '--gpu-name', 'sm_80'], 2, /^tileharness compile: the example kernels are built for sm_90, .*; give an INPUT\.ptx for sm_80\n$/],
    [['--dump-sass='], 5, lines('failed to compile PTX program', 'Please provide a valid dumpSassCommand. For example, `nvdisasm -c`.')],
    // Split when the dump is to run, as tileiras does (the help's status 5 says so).
    [['--dump-sass', '"abc'], 5, lines('failed to compile PTX program', 'dumpSassCommand: unterminated double quote (opened at offset 0)')],
  ]
  for (const [args, status, stderr] of rows) {
    // The dump runs after ptxas; options are checked against ptxas's --help only when there is one.
    if ((args[0].startsWith('--dump-sass') || args.includes('--bogus') || args.includes('--maxrregcount')) && PTXAS === null) continue
    const name = args.join(' ')
    const r = cli(dir, args)
    t.equal(r.exitCode, status, `${name}: exit ${status}`)
    if (typeof stderr === 'string') t.equal(r.err, stderr, `${name}: stderr`)
    else t.match(r.err, stderr, `${name}: stderr`)
    t.notMatch(r.err, /\n\s+at /, `${name}: never a stack trace`)
    t.equal(r.out, '', `${name}: nothing on stdout`)
    t.same(files(dir), inputs, `${name}: no output file, no temp file`)
  }
})

t.test('help: the exit-status table, one row per status', async (t) => {
  const dir = tempDir(t)
  const help = cli(dir, ['--help'])
  t.equal(help.exitCode, 0)
  t.equal(help.out, COMPILE_USAGE + '\n')
  const table = help.out.slice(help.out.indexOf("exit status (the Program's status):\n"))
  t.same(table.match(/^ {2}(\d) {2}/gm), COMPILE_EXIT_STATUSES.map(([status]) => `  ${status}  `), 'each status once, in order')
  t.same(COMPILE_EXIT_STATUSES.map(([status]) => status), [0, 1, 2, 3, 5], 'the statuses a command line can reach (4 is API-only)')
  t.same(files(dir), [])
})

// -o by the output rules (lib/cli/output.ts), each row against the real binary.

t.test("the exit status is the Program API's status for the same configuration", async (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'garbage.ptx'), 'int main(void) { return 0; }\n')
  const vadd = examplePtx('vadd', 'sm_100')
  // ptxas is never reached: each of these fails in create, or in compile before ptxas starts.
  const rows: Array<[string[], Partial<ProgramConfig>]> = [
    [['--host-arch', 'arm64ec'], { hostArch: 'arm64ec' }],
    [['--host-os', 'darwin'], { hostOs: 'darwin' as ProgramConfig['hostOs'] }],
    [['--host-arch', 'riscv64'], { hostArch: 'riscv64' as ProgramConfig['hostArch'] }],
    [['-O', '4'], { optLevel: 4 }],
    [['--device-debug'], { deviceDebug: true }],
    [['garbage.ptx'], { input: 'int main(void) { return 0; }\n' }],
    [['--gpu-name', 'sm_90'], { gpuName: 'sm_90' }],
  ]
  for (const [args, overrides] of rows) {
    let status = 0
    try {
      await Program.create({ input: vadd, gpuName: 'sm_100', hostArch: 'x86_64', ...overrides }).compile()
    } catch (error) {
      status = (error as ProgramError).status
    }
    t.not(status, 0, `${args.join(' ')}: the API fails`)
    t.equal(cli(dir, args).exitCode, status, `${args.join(' ')}: the command exits ${status}, as the API's status`)
  }
})
