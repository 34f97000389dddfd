// The `tileharness` commands, their one-line summaries, usage texts and exit statuses: one table
// read by main.ts (dispatch, --help, `help [command]`), and by scripts/readme.mjs, which writes the
// README's synopses from the same usage texts.
import { readFileSync } from 'node:fs'
import { BENCH_USAGE, benchCommand } from './bench.js'
import { COMPILE_USAGE, CONFIGURATION, COMPILE_FAILED, compileCommand } from './compile.js'
import { HARNESS_FAILURE, RUN_USAGE, runCommand } from './run.js'

export interface Command {
  /** One line for the list of commands. */
  summary: string
  /** What --help prints: the synopsis (the lines up to the first blank one), then the options. */
  usage: string
  /** The exit status of a bad command line. */
  usageStatus: number
  /** The exit status of a failure nothing more specific covers. */
  failureStatus: number
  main(argv: string[]): Promise<number>
}

export const COMMANDS: Readonly<Record<string, Command>> = Object.freeze({
  run: {
    summary: 'run a command through the harness (timeout, rlimits, setsid, resource usage)',
    usage: RUN_USAGE,
    usageStatus: HARNESS_FAILURE,
    failureStatus: HARNESS_FAILURE,
    main: runCommand,
  },
  compile: {
    summary: 'assemble PTX with ptxas into a host object (no arguments: the vadd example for sm_100)',
    usage: COMPILE_USAGE,
    usageStatus: CONFIGURATION,
    failureStatus: COMPILE_FAILED,
    main: compileCommand,
  },
  bench: {
    summary: 'benchmark commands: wall time, CPU, max RSS, faults, context switches per run',
    usage: BENCH_USAGE,
    usageStatus: HARNESS_FAILURE,
    failureStatus: HARNESS_FAILURE,
    main: benchCommand,
  },
})

export const USAGE = `usage: tileharness <command> [options]
       tileharness help [command]
       tileharness --version

commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`).join('\n')}
  ${'help'.padEnd(10)}print this, or the usage of one command

'tileharness <command> --help' or 'tileharness help <command>' for the options of each`

/** `tileharness 0.1.0`: the package's name and version, from its package.json. */
export function versionText(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string }
  return `${pkg.name} ${pkg.version}`
}

/** The synopsis of a usage text: its lines up to the first blank one, without the `usage: `. */
export function synopsis(usage: string): string {
  const lines = usage.split('\n')
  const end = lines.indexOf('')
  return lines.slice(0, end < 0 ? lines.length : end).map(line => line.slice('usage: '.length)).join('\n')
}
