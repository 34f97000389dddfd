#!/usr/bin/env node
// The `tileharness` command. Messages follow coreutils: `tileharness run: <what>` on stderr, one
// line each, never a stack trace; a bad command line adds "Try 'tileharness run --help' for more
// information." and exits with the command's usage status (125; `compile`: 2, the Program's
// configuration status). --help, -h and `help [command]` print on stdout and exit 0.
import fs from 'node:fs'
import { COMMANDS, USAGE, versionText, type Command, type CommandModule } from './commands.js'
import { HelpRequested, UsageError } from './options.js'
import { HARNESS_FAILURE } from './status.js'
import { errnoText } from '../errors.js'
import { readerWentAway, reportedWriteErrors } from './output.js'

// A reader that goes away (`tileharness run --json -- true | head -c0`, or a socket's peer that
// resets the connection) is not this command's failure (readerWentAway): what is left to write is
// dropped and the exit status stays the one it would have been. Any other write error (a full
// disk, `>/dev/full`) is said as coreutils says it, "write error: ...", and the exit status is the
// command's own failure status (compile's 5: what it printed did not arrive), whichever of the
// error and the command's end comes first.
let writeFailed = false
let writer = { prefix: 'tileharness', failureStatus: HARNESS_FAILURE }
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (readerWentAway(err) || writeFailed) return
    writeFailed = true
    if (stream === process.stdout && !reportedWriteErrors.has(err)) say(writer.prefix, `write error: ${errnoText(err)}`)
    process.exitCode = writer.failureStatus
  })
}

// SIGUSR1 opens Node's inspector, by default, on 127.0.0.1:9229: anyone on the machine who may
// signal this process could then attach to it and run code as its user. A command has no use for
// it; with a listener Node does not open it. `run` forwards the signal to its child; the other
// commands ignore it.
process.on('SIGUSR1', () => {})

function say(prefix: string, message: string): void {
  process.stderr.write(`${prefix}: ${message}\n`)
}

/** A bad command line, in coreutils' two lines. */
function usageError(prefix: string, message: string, status: number, help = 'tileharness --help'): number {
  say(prefix, message)
  process.stderr.write(`Try '${help}' for more information.\n`)
  return status
}

function commandNamed(name: string): Command | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
}

/**
 * A command's module, or the status to exit with when it cannot be loaded (the native addon
 * missing or built for another ABI): one line naming the command, as any other failure of it.
 */
async function load(name: string, command: Command): Promise<CommandModule | number> {
  try {
    return await command.load()
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    say(`tileharness ${name}`, `cannot load the command: ${message.split('\n')[0]}`)
    return command.failureStatus
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined) return usageError('tileharness', 'no command given', HARNESS_FAILURE)
  if (name === '--help' || name === '-h') {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  if (name === '--version') {
    process.stdout.write(versionText() + '\n')
    return 0
  }
  if (name === 'help') {
    if (rest.length > 1) return usageError('tileharness help', `extra operand '${rest[1]}'`, HARNESS_FAILURE)
    // `help help` (and `help --help`) is the usage above, which says what help does.
    const topic = rest.length === 0 || ['help', '--help', '-h'].includes(rest[0]) ? null : commandNamed(rest[0])
    if (topic === undefined) return usageError('tileharness help', `unknown command '${rest[0]}'`, HARNESS_FAILURE)
    if (topic === null) {
      process.stdout.write(USAGE + '\n')
      return 0
    }
    const loaded = await load(rest[0], topic)
    if (typeof loaded === 'number') return loaded
    process.stdout.write(loaded.usage + '\n')
    return 0
  }
  if (name.startsWith('-')) return usageError('tileharness', `unknown option ${name}`, HARNESS_FAILURE)
  const command = commandNamed(name)
  if (command === undefined) return usageError('tileharness', `unknown command '${name}'`, HARNESS_FAILURE)
  writer = { prefix: `tileharness ${name}`, failureStatus: command.failureStatus }
  const garbled = notUtf8(rest)
  if (garbled !== null) {
    return usageError(`tileharness ${name}`, `argument ${garbled} is not valid UTF-8: it cannot be used unchanged (as a file name, or passed on to a program)`, command.usageStatus, `tileharness ${name} --help`)
  }
  const loaded = await load(name, command)
  if (typeof loaded === 'number') return loaded
  try {
    return await loaded.main(rest)
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(loaded.usage + '\n')
      return 0
    }
    if (error instanceof UsageError) return usageError(`tileharness ${name}`, error.message, command.usageStatus, `tileharness ${name} --help`)
    say(`tileharness ${name}`, error instanceof Error ? error.message : String(error))
    return command.failureStatus
  }
}

/**
 * The first of `args` whose bytes are not UTF-8, shown as a shell would quote it ($'\xff.o'), or
 * null. process.argv has every argument decoded as UTF-8, invalid bytes replaced by U+FFFD: a file
 * name of such bytes would be another file's name (`\xff.o` would write `\uFFFD.o`), an argument
 * passed on another argument. The bytes themselves are in /proc/self/cmdline, whose last entries
 * are the arguments; where it cannot be read, a U+FFFD is taken as the sign.
 */
function notUtf8(args: string[]): string | null {
  const suspect = args.findIndex((arg) => arg.includes('\uFFFD'))
  if (suspect < 0) return null
  let raw: Buffer[] | null = null
  try {
    const bytes = fs.readFileSync('/proc/self/cmdline')
    const parts: Buffer[] = []
    for (let start = 0; start < bytes.length;) {
      const end = bytes.indexOf(0, start)
      parts.push(bytes.subarray(start, end < 0 ? bytes.length : end))
      start = end < 0 ? bytes.length : end + 1
    }
    if (parts.length >= args.length) raw = parts.slice(parts.length - args.length)
  } catch {
    // No /proc: judged by the decoded text alone.
  }
  for (let i = suspect; i < args.length; i++) {
    const bytes = raw?.[i] ?? null
    const garbled = bytes === null ? args[i]!.includes('\uFFFD') : !bytes.equals(Buffer.from(args[i]!))
    if (!garbled) continue
    if (bytes === null) return `'${args[i]}'`
    let quoted = ''
    for (const byte of bytes) quoted += byte >= 0x20 && byte < 0x7f && byte !== 0x27 && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`
    return `$'${quoted}'`
  }
  return null
}

main(process.argv.slice(2)).then(
  code => { process.exitCode = writeFailed ? writer.failureStatus : code },
  (error: unknown) => {
    say('tileharness', error instanceof Error ? error.message : String(error))
    process.exitCode = HARNESS_FAILURE
  },
)
