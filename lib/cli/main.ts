#!/usr/bin/env node
// The `tileharness` command. Bad options give a one-line error and exit 125 (`compile`: 2, its
// configuration status), never a stack trace.
import { compileCommand } from './compile.js'
import { RUN_USAGE, runCommand } from './run.js'
import { BENCH_USAGE, benchCommand } from './bench.js'
import { UsageError } from './options.js'

const USAGE = `usage: tileharness <command> [options]

commands:
  run       run a command through the harness (timeout, rlimits, setsid, resource usage)
  compile   assemble PTX with ptxas into a host object (no arguments: the vadd example for sm_100)
  bench     benchmark commands: wall time, CPU, max RSS, faults, context switches per run

tileharness <command> --help for the options of each`

const HARNESS_FAILURE = 125

// A reader that goes away (`tileharness run --json -- true | head -c0`) is not this command's
// failure: what is left to write is dropped and the exit status stays the one it would have been,
// as for a command killed by SIGPIPE in a shell that ignores it. Any other write error is reported.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return
    process.exitCode = HARNESS_FAILURE
  })
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'run':
      if (rest[0] === '--help' || rest[0] === '-h') { process.stdout.write(RUN_USAGE + '\n'); return 0 }
      return runCommand(rest)
    case 'compile':
      return compileCommand(rest)
    case 'bench':
      if (rest[0] === '--help' || rest[0] === '-h') { process.stdout.write(BENCH_USAGE + '\n'); return 0 }
      return benchCommand(rest)
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(USAGE + '\n')
      return command === undefined ? HARNESS_FAILURE : 0
    default:
      throw new UsageError(`unknown command '${command}'`)
  }
}

main(process.argv.slice(2)).then(
  code => { process.exitCode = code },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err)
    const prefix = process.argv[2] && process.argv[2] !== '--help' ? `tileharness ${process.argv[2]}` : 'tileharness'
    process.stderr.write(`${prefix}: ${message}\n`)
    process.exitCode = HARNESS_FAILURE
  },
)
