// `tileharness compile`: the Program handle from the command line. PTX (a file, or a built-in
// example kernel) -> ptxas -> optional SASS dump -> a host ELF object on disk, written atomically.
// Exit status is the Program status (docs/toolchain-contract.md, "The Program handle"): 0 ok,
// 2 configuration, 3 not PTX, 5 compile failed.
// ptxas's stderr reaches our stderr verbatim; everything else we say is one line per message.
import { parse } from 'node:path'
import {
  Program, ProgramError, checkGpuTargets, defaultHostArch, DEFAULT_DUMP_SASS_COMMAND,
  type ProgramConfig, type ProgramOutput, type ToolRunSummary,
} from '../cuda/index.js'
import { checkSymbolPrefix } from '../cuda/program/symbols.js'
import { ptxasOptionTokens } from '../cuda/ptxas-options.js'
import { EXAMPLE_KERNELS, exampleKernel, gpuNames, isGpuName, type ExampleKernelName } from '../ptx/index.js'
import type { PtxModule } from '../ptx/types.js'
import { HELP_OPTION, UsageError, oneOf, parseCommandLine, type OptionTable } from './options.js'
import { readAtMost, readStdinAtMost } from './input.js'
import { OutputInterrupted, OutputRefused, errnoText, type Interruption, inputIdentity, isStandardOutput, outputIdentity, resolveOutput, writeOutput } from './output.js'
import { CONFIGURATION, COMPILE_FAILED } from './status.js'
import { formatBytes, parseDuration } from './units.js'

/**
 * The exit status of `compile` for every outcome: the Program's status (docs/toolchain-contract.md,
 * "The Program handle"). One table, printed by --help and written into the README.
 */
export const COMPILE_EXIT_STATUSES: ReadonlyArray<readonly [status: number, when: string]> = [
  [0, 'the object was written'],
  [1, "INPUT's text is more than a JavaScript string holds (about 512 MiB; bytes past 1 GiB are refused " +
    'with status 2 before they are read whole)'],
  [2, 'configuration, all checked before ptxas runs: a bad option or value; a GPU target, optimization ' +
    'level, debug combination, host architecture or host OS the Program refuses; an INPUT that cannot ' +
    'be read; an output that cannot be written (no such directory, no write permission, a directory, ' +
    'a socket, a block device)'],
  [3, 'INPUT is not PTX text (Tile IR and MLIR bytecode are named as such)'],
  [5, 'the compile failed: ptxas, fatbinary (several targets, --ptx) or the SASS dump command failed, ' +
    'could not be started, timed out or was killed (^C, TERM); ^C, TERM or HUP while the object was ' +
    'being written to a file it replaces whole (the file is then left as it was, and no temp file is ' +
    'left beside it: a FIFO, terminal or standard output, which may wait for a reader, is left to the ' +
    "signal's default, as a shell's > is); " +
    'a --dump-sass command that is empty or ' +
    'cannot be split into words (checked when the dump is to run, after ptxas, as tileiras checks it); ' +
    'PTX without a kernel compiled without -c; ' +
    'a temp file it needed could not be made; --host-arch arm64ec (the ' +
    'Program accepts it, and no ARM64EC object can be written); the object could not be written ' +
    'after the compile (a full disk, an output that changed into one that is refused)'],
]

export const COMPILE_USAGE = `usage: tileharness compile [INPUT.ptx] [--gpu-name sm_100] [--allow-any-target] [-O 0-3]
                           [--device-debug] [--lineinfo] [-c] [--ptxas-options OPTS]... [--ptx]
                           [--host-arch x86_64] [--host-os linux]
                           [--dump-sass ['nvdisasm -c']] [--sanitize memcheck] [--timeout D]
                           [-o OUT.o] [--name NAME] [--json] [--example vadd|saxpy|reduce|cluster]

Assembles PTX with ptxas into a host object (ELF; COFF with --host-os windows) holding the
cubin (for several targets or --ptx, a fat binary; with --dump-sass, also its SASS text). Without
INPUT it compiles a built-in example kernel (default vadd); INPUT - reads the PTX from standard
input. ptxas's messages name INPUT as given ('<stdin>' for -).

  --gpu-name NAME      the target: sm_100 (default), sm_103, sm_110, sm_120 or sm_121, or an
                       architecture-specific or family one ptxas accepts (sm_90a, sm_100a, sm_100f);
                       several, comma-separated (sm_90,sm_100a,sm_120): one cubin each, in a fat
                       binary made by fatbinary (NAME_fatbin, NAME_fatbin_size)
  --ptx                put the PTX in the fat binary too, for the driver to JIT on newer GPUs
  --allow-any-target   accept other targets too, such as sm_90
  -O, --opt-level N    ptxas optimization level, 0-3 (default 3)
  --device-debug       full device debug info (needs -O 0)
  --lineinfo           line-number information
  -c, --relocatable-device-code
                       a relocatable cubin (ptxas -c) for nvlink: device functions are kept
                       and may call extern ones; without it, PTX with no .entry is an error
  --ptxas-options OPTS more ptxas options ('--maxrregcount 32 -v'; may be repeated), each one
                       this ptxas lists in its --help and none that compile sets itself
  --host-arch ARCH     the object's machine: x86_64 or aarch64 (default: this machine's)
  --host-os OS         linux (default: an ELF object) or windows (a COFF object)
  --dump-sass [CMD]    run CMD (default '${DEFAULT_DUMP_SASS_COMMAND}') on the cubin, put its output in .nvdisasm;
                       a following argument is CMD unless it starts with '-' or ends in .ptx
  --sanitize memcheck  ptxas --sanitize memcheck
  --timeout D          time limit for the whole compile (500ms, 5s, 2m); with an a/f target or
                       --ptxas-options, ptxas is first asked about itself once, within its own D
  -o, --output FILE    the object to write (default <example>.<gpu>.o, or <INPUT basename>.o;
                       --output-file FILE, tileiras's spelling, is the same option):
                       a regular file is replaced atomically, a symlink's target likewise; a
                       character device or FIFO is written in place; - is standard output
                       (the summary then goes to standard error)
  --name NAME          the symbols' prefix, a C identifier: NAME_cubin, NAME_cubin_size, ...
                       (default: INPUT's base name made one, or the example's name)
  --example NAME       ${EXAMPLE_KERNELS.join(', ')}
  --json               print a JSON summary on stdout; on a failure, the object
                       { status, code, message, reason, tool, diagnostics }
  -h, --help           print this and exit

ptxas is run from PATH, else from $CUDA_ROOT/bin (or $CUDA_HOME, $CUDA_PATH).

exit status (the Program's status):
${COMPILE_EXIT_STATUSES.map(([status, when]) => hangingIndent(`  ${status}  `, when, 100)).join('\n')}`

/** The Program fields create checks against the ptxas at hand or each other, as options. */
const OPTION_OF_FIELD: Readonly<Record<string, string>> = { ptxasOptions: '--ptxas-options', dumpSassCommand: '--dump-sass' }

/** `text` wrapped at `width` columns, its first line after `first`, the rest indented as far. */
function hangingIndent(first: string, text: string, width: number): string {
  const lines: string[] = []
  let line = first
  for (const word of text.split(' ')) {
    if (line.length > first.length && line.length + 1 + word.length > width) {
      lines.push(line)
      line = ' '.repeat(first.length) + word
    } else {
      line += (line.length > first.length ? ' ' : '') + word
    }
  }
  lines.push(line)
  return lines.join('\n')
}

export interface CompileArgs {
  input: string | null
  example: ExampleKernelName | null
  /** --gpu-name as given: one target, or several separated by commas. */
  gpuName: string
  /** --ptx */
  embedPtx: boolean
  /** A number when the text is one; anything else goes to the Program, which rejects it. */
  optLevel: number | string | undefined
  deviceDebug: boolean
  lineinfo: boolean
  relocatable: boolean
  /** --ptxas-options, each occurrence split into tokens, in order. */
  ptxasOptions: string[]
  allowAnyTarget: boolean
  hostArch: string | undefined
  hostOs: string | undefined
  dumpSass: string | null
  sanitize: 'memcheck' | 'none' | undefined
  timeout: number | undefined
  output: string | null
  /** The symbol prefix (--name), checked; null: from INPUT or the example. */
  name: string | null
  json: boolean
}

const COMPILE_OPTIONS: OptionTable = {
  'gpu-name': { kind: 'value' },
  ptx: { kind: 'flag' },
  'opt-level': { kind: 'value', short: 'O' },
  'device-debug': { kind: 'flag' },
  lineinfo: { kind: 'flag' },
  'relocatable-device-code': { kind: 'flag', short: 'c' },
  'ptxas-options': { kind: 'value' },
  'allow-any-target': { kind: 'flag' },
  'host-arch': { kind: 'value' },
  'host-os': { kind: 'value' },
  // A following argument is the command unless it looks like an option or the INPUT.
  'dump-sass': { kind: 'optional', takesNext: (next) => !next.startsWith('-') && !next.endsWith('.ptx') },
  sanitize: { kind: 'value' },
  timeout: { kind: 'value' },
  // tileiras's spelling, as an orchestrator such as nvcc writes it.
  output: { kind: 'value', short: 'o', aliases: ['output-file'] },
  example: { kind: 'value' },
  name: { kind: 'value' },
  json: { kind: 'flag' },
  help: HELP_OPTION,
}

export function parseCompileArgs(argv: readonly string[]): CompileArgs {
  const args: CompileArgs = {
    input: null, example: null, gpuName: 'sm_100', embedPtx: false, optLevel: undefined, deviceDebug: false, lineinfo: false, relocatable: false, ptxasOptions: [],
    allowAnyTarget: false, hostArch: undefined, hostOs: undefined, dumpSass: null, sanitize: undefined,
    timeout: undefined, output: null, name: null, json: false,
  }
  parseCommandLine(argv, COMPILE_OPTIONS, {
    operand(input) {
      if (args.input !== null) throw new UsageError(`more than one INPUT ('${args.input}' and '${input}')`)
      args.input = input
    },
    option(name, value, option) {
      switch (name) {
        case 'gpu-name': args.gpuName = value!; break
        case 'ptx': args.embedPtx = true; break
        case 'opt-level': args.optLevel = /^\d+$/.test(value!) && Number.isSafeInteger(Number(value)) ? Number(value) : value; break
        case 'device-debug': args.deviceDebug = true; break
        case 'lineinfo': args.lineinfo = true; break
        case 'relocatable-device-code': args.relocatable = true; break
        case 'ptxas-options': args.ptxasOptions.push(...usageChecked(() => ptxasOptionTokens(option, value))); break
        case 'allow-any-target': args.allowAnyTarget = true; break
        case 'host-arch': args.hostArch = value; break
        case 'host-os': args.hostOs = value; break
        case 'dump-sass': args.dumpSass = value ?? DEFAULT_DUMP_SASS_COMMAND; break
        case 'sanitize': args.sanitize = oneOf(value!, ['memcheck', 'none'] as const, option); break
        case 'timeout': args.timeout = Math.ceil(parseDuration(value!, option)); break
        case 'output': args.output = value!; break
        case 'example': {
          if (!(EXAMPLE_KERNELS as readonly string[]).includes(value!)) {
            throw new UsageError(`unknown example '${value}' (${EXAMPLE_KERNELS.join(', ')})`)
          }
          args.example = value as ExampleKernelName
          break
        }
        case 'name': args.name = usageChecked(() => checkSymbolPrefix(option, value)); break
        case 'json': args.json = true; break
      }
    },
  })
  if (args.input !== null && args.example !== null) throw new UsageError('give either INPUT or --example, not both')
  if (args.output === '') throw new UsageError('-o needs a file name')
  return args
}

/** The most an INPUT may hold: a file is refused by its size, a stream (/dev/zero, `yes |`) once past it. */
const MAX_INPUT_BYTES = 2 ** 30

export async function compileCommand(argv: readonly string[]): Promise<number> {
  const args = parseCompileArgs(argv)
  const targets = args.gpuName.split(',')

  // What to compile, what to call it, where it goes.
  let input: Buffer | PtxModule
  let name: string
  let output: string
  // What ptxas's messages call the input: the file as it was named here (lib/cuda/ptxas-input-name.ts).
  let inputName: string | undefined
  if (args.input !== null) {
    const fromStdin = args.input === '-'
    try {
      const read = fromStdin ? await readStdinAtMost(MAX_INPUT_BYTES) : readAtMost(args.input, MAX_INPUT_BYTES)
      if (read === null) return refused(CONFIGURATION, `cannot read ${fromStdin ? 'standard input' : `'${args.input}'`}: it is over ${MAX_INPUT_BYTES / 2 ** 30} GiB, more than any PTX module`, args.json)
      input = read
    } catch (error) {
      return refused(CONFIGURATION, `cannot read ${fromStdin ? 'standard input' : `'${args.input}'`}: ${errnoText(error)}`, args.json)
    }
    const base = fromStdin ? 'stdin' : parse(args.input).name
    name = args.name ?? cIdentifier(base)
    output = args.output ?? `${base}.o`
    inputName = fromStdin ? '<stdin>' : args.input
  } else {
    const example = args.example ?? 'vadd'
    // The example is built for the target, so the target is checked first (the input is ours and
    // always PTX, so this is the order Program.create would report in anyway).
    try {
      checkGpuTargets(targets, args.allowAnyTarget, { timeout: args.timeout })
    } catch (error) {
      return failed(error as ProgramError, args.json)
    }
    const ptxTarget = examplePtxTarget(targets)
    if (!isGpuName(ptxTarget)) {
      return refused(CONFIGURATION, `the example kernels are built for ${gpuNames().join(', ')}; give an INPUT.ptx for ${ptxTarget}`, args.json)
    }
    input = exampleKernel(example, ptxTarget)
    name = args.name ?? example
    output = args.output ?? `${example}.${targets.join('+')}.o`
  }
  // Where the object goes is settled before ptxas runs (lib/cli/output.ts has the rules).
  let toStdout: boolean
  try {
    toStdout = isStandardOutput(resolveOutput(output))
  } catch (error) {
    if (!(error instanceof OutputRefused)) throw error
    return refused(CONFIGURATION, `cannot write '${output}': ${error.message}`, args.json)
  }
  if (toStdout && args.json) {
    return refused(CONFIGURATION, `-o ${output} and --json would both write to standard output`, args.json)
  }
  // The object renamed over its own source would leave neither (as gcc refuses it).
  const source = args.input === null ? null : inputIdentity(args.input)
  if (source !== null && source === outputIdentity(output)) {
    return refused(CONFIGURATION, `input file '${args.input}' is the same as output file '${output}'`, args.json)
  }

  const config: ProgramConfig = {
    input,
    gpuName: targets.length === 1 ? targets[0] : targets,
    embedPtx: args.embedPtx,
    optLevel: args.optLevel as number | undefined,
    deviceDebug: args.deviceDebug,
    lineinfo: args.lineinfo,
    relocatable: args.relocatable,
    ptxasOptions: args.ptxasOptions,
    hostArch: (args.hostArch ?? defaultHostArch()) as ProgramConfig['hostArch'],
    hostOs: (args.hostOs ?? 'linux') as ProgramConfig['hostOs'],
    sanitize: args.sanitize ?? 'none',
    dumpSassCommand: args.dumpSass,
    allowAnyTarget: args.allowAnyTarget,
    name,
    ...(inputName === undefined ? {} : { inputName }),
    // ptxas's (and the dump command's) own words, as they wrote them.
    // A last line without its newline (a tool cut off, or its messages cut at maxBuffer) is
    // ended here, so that the command's own next line starts a line of its own.
    onDiagnostic: (text) => { process.stderr.write(text === '' || text.endsWith('\n') ? text : `${text}\n`) },
  }
  if (args.timeout !== undefined) config.timeout = args.timeout

  let program: Program
  try {
    program = Program.create(config)
  } catch (error) {
    if (error instanceof ProgramError) return failed(error, args.json)
    // What create checks that the command line could not (--ptxas-options against this ptxas,
    // --dump-sass with several targets): a configuration error, in the options' own words.
    const field = (error as { field?: unknown }).field
    if (typeof field === 'string' && Object.hasOwn(OPTION_OF_FIELD, field)) {
      return refused(CONFIGURATION, (error as Error).message.replace(/^\w+/, OPTION_OF_FIELD[field]).replace(/ with several targets:/, ' with several --gpu-name targets:').replace(/ with embedPtx:/, ' with --ptx:'), args.json)
    }
    throw error
  }

  // A terminal's ^C or a supervisor's TERM kills ptxas (through the harness) and leaves no output,
  // from here to the end: a file replaced whole is then not replaced (writeOutput has the rest).
  // (Not during Program.create's probe of ptxas, a synchronous run that JavaScript could not
  // interrupt: there the signal's default ends the command, and the probe's child with it.)
  const controller = new AbortController()
  const abort = (sig: NodeJS.Signals): void => { controller.abort(sig) }
  const forwarded: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const sig of forwarded) process.on(sig, abort)
  const stopListening = (): void => { for (const sig of forwarded) process.off(sig, abort) }
  try {
    return await compileAndWrite(program, output, toStdout, args, { signal: controller.signal, stopListening })
  } finally {
    stopListening()
  }
}

/** The rest of compileCommand, while ^C, TERM and HUP abort the compile (and not the process). */
async function compileAndWrite(program: Program, output: string, toStdout: boolean, args: CompileArgs, interruption: Interruption): Promise<number> {
  let result: ProgramOutput
  try {
    result = await program.compile({ signal: interruption.signal })
  } catch (error) {
    if (error instanceof ProgramError) return failed(error, args.json)
    throw error
  } finally {
    program.release()
  }

  try {
    await writeOutput(output, result.object, interruption)
  } catch (error) {
    // The compile produced nothing usable: as far as the caller can tell, it failed.
    const why = error instanceof OutputRefused || error instanceof OutputInterrupted ? error.message : errnoText(error)
    return refused(COMPILE_FAILED, `cannot write '${output}': ${why}`, args.json)
  }
  // With the object on standard output, the summary goes to standard error.
  const summary = args.json ? summaryJson(output, args, result) : summaryText(toStdout ? 'standard output' : output, args, result)
  ;(toStdout ? process.stderr : process.stdout).write(summary)
  return 0
}

function say(line: string): void {
  process.stderr.write(`tileharness compile: ${line}\n`)
}

/** The Program's message, then what else is known; ptxas's own text has already gone out verbatim. */
/**
 * A failure of the command itself (an input it cannot read, an output it cannot write, an option
 * the Program refuses): said on stderr, and with --json the same object a ProgramError gives, so
 * that every failure prints one on stdout (code null: no row of the Program's table).
 */
function refused(status: number, line: string, json: boolean): number {
  say(line)
  if (json) process.stdout.write(JSON.stringify({ status, code: null, message: line, reason: '', tool: null, diagnostics: '' }, null, 2) + '\n')
  return status
}

function failed(error: ProgramError, json: boolean): number {
  say(error.message)
  if (error.reason !== '') say(error.reason)
  if (json) {
    const { status, code, message, reason, tool, diagnostics } = error
    process.stdout.write(JSON.stringify({ status, code, message, reason, tool, diagnostics }, null, 2) + '\n')
  }
  return error.status
}

function summaryText(output: string, args: CompileArgs, r: ProgramOutput): string {
  const count = r.kernels.length === 1 ? '1 kernel' : `${r.kernels.length} kernels`
  if (r.fatbin !== null && r.fatbinary !== null) {
    // A fat binary: the targets, each target's kernels and ptxas run, then fatbinary's.
    const what = `${r.targets.map((image) => image.arch).join(', ')}${args.embedPtx ? ' and PTX' : ''}`
    const lines = [`${output}: ${count} for ${what}, fatbin ${r.fatbin.length} bytes, object ${r.object.length} bytes`]
    for (const image of r.targets) {
      lines.push(`  ${image.arch}: ${image.kernels.map((k) => `${k.name} ${k.registers ?? '?'} registers`).join(', ')}; cubin ${image.cubin.length} bytes`)
    }
    for (const image of r.targets) lines.push(`ptxas ${image.gpuName} ${toolCost(image.ptxas)}`)
    lines.push(`fatbinary ${toolCost(r.fatbinary)}`)
    return lines.join('\n') + '\n'
  }
  const lines = [`${output}: ${count} for ${r.gpuName}, cubin ${r.cubin.length} bytes, object ${r.object.length} bytes`]
  for (const k of r.kernels) lines.push(`  ${k.name}: ${k.registers ?? '?'} registers`)
  lines.push(`ptxas ${toolCost(r.ptxas)}`)
  if (r.sass !== null && r.dumpSass !== null) {
    lines.push(`SASS ${Buffer.byteLength(r.sass)} bytes from '${args.dumpSass}' in .nvdisasm (${seconds(r.dumpSass.durationMs * 1000)})`)
  }
  return lines.join('\n') + '\n'
}

function summaryJson(output: string, args: CompileArgs, r: ProgramOutput): string {
  const u = r.ptxas.rusage
  return JSON.stringify({
    status: 0,
    output,
    gpuName: r.gpuName,
    sm: r.sm,
    arch: r.arch,
    optLevel: args.optLevel ?? 3,
    hostArch: args.hostArch ?? defaultHostArch(),
    hostOs: args.hostOs ?? 'linux',
    kernels: r.kernels.map((k) => ({ name: k.name, registers: k.registers })),
    cubinBytes: r.cubin.length,
    objectBytes: r.object.length,
    sassBytes: r.sass === null ? null : Buffer.byteLength(r.sass),
    wallMs: r.wallMs,
    ptxas: {
      path: r.ptxas.path,
      inputRoute: r.ptxas.inputRoute,
      durationMs: r.ptxas.durationMs,
      userCPUMs: u.userCPUTime / 1000,
      systemCPUMs: u.systemCPUTime / 1000,
      maxRSSKiB: u.maxRSS,
      diagnostics: r.ptxas.diagnostics,
    },
    fatbinBytes: r.fatbin === null ? null : r.fatbin.length,
    targets: r.targets.map((image) => ({ gpuName: image.gpuName, arch: image.arch, cubinBytes: image.cubin.length, ptxasDurationMs: image.ptxas.durationMs })),
    fatbinary: r.fatbinary === null ? null : { argv: r.fatbinary.argv, durationMs: r.fatbinary.durationMs, diagnostics: r.fatbinary.diagnostics },
    dumpSass: r.dumpSass === null ? null : {
      argv: r.dumpSass.argv,
      durationMs: r.dumpSass.durationMs,
      maxRSSKiB: r.dumpSass.rusage.maxRSS,
      diagnostics: r.dumpSass.diagnostics,
    },
  }, null, 2) + '\n'
}

/** A child's cost: wall and CPU time, max RSS (from wait4). */
function toolCost(run: ToolRunSummary): string {
  const u = run.rusage
  return `${seconds(run.durationMs * 1000)} wall, ${seconds(u.userCPUTime + u.systemCPUTime)} CPU, max RSS ${formatBytes(u.maxRSS * 1024)}`
}

/**
 * The target the example kernel is built for: the one given, or for several the oldest SM among
 * them without suffix, as PTX for sm_XY compiles to every sm_MN, sm_MNa and sm_MNf with MN >= XY.
 */
function examplePtxTarget(targets: readonly string[]): string {
  if (targets.length === 1) return targets[0]
  return `sm_${Math.min(...targets.map((gpu) => Number(/^sm_(\d+)/.exec(gpu)?.[1])))}`
}

function seconds(microseconds: number): string {
  return `${(microseconds / 1e6).toFixed(3)} s`
}

/** An option's value checked as the Program checks it (`option` the field named): a bad one is a usage error. */
function usageChecked<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** A symbol prefix from a file name: my-kernel.v2 -> my_kernel_v2. */
function cIdentifier(base: string): string {
  const id = base.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 200)
  return id === '' ? 'program' : /^[0-9]/.test(id) ? `_${id.slice(0, 199)}` : id
}
