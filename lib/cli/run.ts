// `tileharness run`: the harness from the command line, for people who chain `timeout`,
// `prlimit`, `setsid` and `/usr/bin/time -v`. Exit status follows coreutils timeout.
import { startChild, signalName, signalNumber, type ChildResult, type ChildSpec } from '../spawn/index.js'
import { spawnFailureMessage } from '../spawn-failure.js'
import { CHILD_OPTIONS, checkChildSpec, childSpecOf, defaultChildOptions, takeChildOption } from './child-options.js'
import { UsageError, parseCommandLine, type OptionTable } from './options.js'
import { HARNESS_FAILURE } from './status.js'
import { formatBytes, parseDuration } from './units.js'

export const RUN_USAGE = `usage: tileharness run [--timeout 5s] [--kill-after 2s] [--signal SIG] [--rlimit as=2G]...
                       [--setsid] [--cwd DIR] [--env K=V]... [--merge-stderr] [--launcher L]
                       [--cpu LIST] [--usage] [--json] [--no-measure] [--] CMD ARGS...

  --timeout D       kill the child after D (500ms, 5s, 2m; a bare number is seconds)
  --kill-after D    send --signal (default TERM) at the deadline, then KILL after D
  --signal SIG      the signal sent at the deadline, by name (TERM, SIGTERM) or number (15);
                    default KILL, or TERM with --kill-after
  --rlimit N=V      a resource limit: as, core, cpu, data, fsize, memlock, nofile, nproc, rss,
                    stack, ...; V is a size (512K, 2G), a count, 'unlimited', or SOFT:HARD
  --setsid          run the child in a new session; kills reach its whole process group
  --cwd DIR         the child's working directory
  --env K=V         set a variable in the child's (otherwise inherited) environment
  --merge-stderr    send the child's stderr to its stdout (dup2)
  --launcher L      auto (default), posix_spawn or fork
  --cpu LIST        pin the child to these CPUs (1, 0,2 or 0-3: taskset -c's list)
  --usage           print a resource report to stderr after the child ends
  --json            print the whole result as JSON on stdout (output captured, base64)
  --no-measure      rusage as wait4 gives it to this process (max RSS then includes this
                    process's own image); by default the child runs measured, so --usage and
                    --json report its own max RSS, as GNU time does
  -h, --help        print this and exit

exit status: the child's own; 124 timed out; 125 tileharness failed; 126 could not execute;
127 not found; 128+N killed by signal N`

interface RunOptions {
  spec: ChildSpec & { file: string }
  usage: boolean
  json: boolean
}

const RUN_OPTIONS: OptionTable = {
  ...CHILD_OPTIONS,
  'kill-after': { kind: 'value' },
  signal: { kind: 'value' },
  cwd: { kind: 'value' },
  env: { kind: 'value' },
  setsid: { kind: 'flag' },
  'merge-stderr': { kind: 'flag' },
  usage: { kind: 'flag' },
  json: { kind: 'flag' },
}

export function parseRunArgs(argv: string[]): RunOptions {
  const spec: ChildSpec & { file: string } = { file: '', stdin: 'inherit', stdout: 'inherit', stderr: 'inherit' }
  const child = defaultChildOptions()
  const env: Record<string, string> = {}
  let envGiven = false
  let usage = false, json = false, merge = false
  let killAfter: number | undefined
  let signal: string | undefined
  const command = parseCommandLine(argv, RUN_OPTIONS, {
    option(name, value, option) {
      if (takeChildOption(child, name, value, option)) return
      switch (name) {
        case 'kill-after': killAfter = parseDuration(value!, option); break
        case 'signal': signal = value!; break
        case 'cwd': spec.cwd = value!; break
        case 'env': {
          const k = value!.indexOf('=')
          if (k <= 0) throw new UsageError(`invalid --env '${value}' (use NAME=VALUE)`)
          env[value!.slice(0, k)] = value!.slice(k + 1)
          envGiven = true
          break
        }
        case 'setsid': spec.setsid = true; break
        case 'merge-stderr': merge = true; break
        case 'usage': usage = true; break
        case 'json': json = true; break
      }
    },
  }, { operands: 'command' })
  if (command.length === 0) throw new UsageError('no command given')
  spec.file = command[0]
  spec.args = command.slice(1)
  Object.assign(spec, childSpecOf(child))
  if (envGiven) spec.env = { ...process.env, ...env }
  if (signal !== undefined) spec.killSignal = killSignalOf(signal)
  if (killAfter !== undefined) {
    spec.killSignal ??= 'SIGTERM'
    spec.forceKillAfterDelay = killAfter
  }
  if (json) {
    spec.stdout = 'pipe'
    spec.stderr = merge ? 'stdout' : 'pipe'
  } else if (merge) {
    spec.stderr = 'stdout'
  }
  spec.maxBuffer = Infinity
  checkChildSpec(spec)
  return { spec, usage, json }
}

/** A signal's name from `TERM`, `SIGTERM`, `term` or `15`, as kill(1) and timeout(1) take it. */
export function killSignalOf(text: string): string {
  const name = /^\d+$/.test(text) ? signalName(Number(text)) : text.toUpperCase()
  if (signalNumber(name) === undefined || signalNumber(name) === 0) throw new UsageError(`invalid --signal '${text}' (a name such as TERM or a number such as 15)`)
  return name
}

/** coreutils timeout's exit status for a result. */
export function exitStatusOf(r: ChildResult): number {
  if (r.timedOut) return 124
  if (r.spawnError) return r.exitCode ?? HARNESS_FAILURE
  if (r.signal !== null) return 128 + (signalNumber(r.signal) ?? 0)
  return r.exitCode ?? HARNESS_FAILURE
}

export function usageReport(r: ChildResult): string {
  const u = r.rusage
  const sec = (us: number) => `${(us / 1e6).toFixed(3)} s`
  return [
    `wall ${(r.durationMs / 1000).toFixed(3)} s, user ${sec(u.userCPUTime)}, sys ${sec(u.systemCPUTime)}, max RSS ${formatBytes(u.maxRSS * 1024)}`,
    `page faults ${u.minorPageFault} minor, ${u.majorPageFault} major; context switches ${u.voluntaryContextSwitches} voluntary, ${u.involuntaryContextSwitches} involuntary; fs ${u.fsRead} in, ${u.fsWrite} out (512-byte blocks)`,
    `${r.launcher}, pid ${r.pid}, ${r.diagnostic || (r.exitCode !== null ? `exit ${r.exitCode}` : '')}`,
  ].map(line => `tileharness: ${line}`).join('\n') + '\n'
}

export function resultJson(r: ChildResult): string {
  return JSON.stringify({ ...r, stdout: r.stdout.toString('base64'), stderr: r.stderr.toString('base64') }, null, 2) + '\n'
}

export async function runCommand(argv: string[]): Promise<number> {
  const { spec, usage, json } = parseRunArgs(argv)
  const child = startChild(spec)
  // The result keeps the output (--json); the streams have no reader here, and a stream nobody
  // reads stops the pipe once its buffer is full (the child would block on its next write).
  child.stdout.resume()
  child.stderr.resume()
  // Forward the signals a terminal or supervisor sends, and wait for the child, as timeout(1) does;
  // and the two a user sends a program (dd's USR1: its progress), which reach the child, not Node.
  const forward = (sig: NodeJS.Signals) => { child.kill(sig) }
  const forwarded: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']
  for (const sig of forwarded) process.on(sig, forward)
  const r = await child.result
  for (const sig of forwarded) process.off(sig, forward)
  if (json) process.stdout.write(resultJson(r))
  else if (r.spawnError) process.stderr.write(`tileharness run: ${spawnFailureMessage(spec.file, r.spawnError, spec)}\n`)
  else if (r.timedOut) process.stderr.write(`tileharness run: ${r.diagnostic}\n`)
  if (usage) process.stderr.write(usageReport(r))
  return exitStatusOf(r)
}
