// The `tileharness` commands, their one-line summaries, usage texts and exit statuses: one table
// read by main.ts (dispatch, --help, `help [command]`), and by scripts/readme.mjs, which writes the
// README's synopses from the same usage texts. Each command's module is loaded only when that
// command runs: `tileharness run` never loads the CUDA layer, and a usage error at the top level
// loads no command at all (a CLI that starts in the time Node itself takes).
import { readFileSync } from 'node:fs'
import { CONFIGURATION, COMPILE_FAILED, HARNESS_FAILURE } from './status.js'

/** What a command's module gives once loaded. */
export interface CommandModule {
  /** What --help prints: the synopsis (the lines up to the first blank one), then the options. */
  usage: string
  main(argv: string[]): Promise<number>
}

export interface Command {
  /** One line for the list of commands. */
  summary: string
  /** The exit status of a bad command line. */
  usageStatus: number
  /** The exit status of a failure nothing more specific covers. */
  failureStatus: number
  /** Loads the command's module (import() evaluates it once). */
  load(): Promise<CommandModule>
}

export const COMMANDS: Readonly<Record<string, Command>> = Object.freeze({
  run: {
    summary: 'run a command through the harness (timeout, rlimits, setsid, resource usage)',
    usageStatus: HARNESS_FAILURE,
    failureStatus: HARNESS_FAILURE,
    load: async () => { const m = await import('./run.js'); return { usage: m.RUN_USAGE, main: m.runCommand } },
  },
  compile: {
    summary: 'assemble PTX with ptxas into a host object (no arguments: the vadd example for sm_100)',
    usageStatus: CONFIGURATION,
    failureStatus: COMPILE_FAILED,
    load: async () => { const m = await import('./compile.js'); return { usage: m.COMPILE_USAGE, main: m.compileCommand } },
  },
  bench: {
    summary: 'benchmark commands: wall time, CPU, max RSS, faults, context switches per run',
    usageStatus: HARNESS_FAILURE,
    failureStatus: HARNESS_FAILURE,
    load: async () => { const m = await import('./bench.js'); return { usage: m.BENCH_USAGE, main: m.benchCommand } },
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
