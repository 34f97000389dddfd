// Builds a ChildResult from what the addon reports: every flat field is derived from one decoded
// wait status (or its absence) and the spawn-failure stage, here and nowhere else.
import { native, type RawResult } from './native.js'
import type { NormalizedSpec } from './normalize.js'
import { decodeWaitStatus, signalDescription } from './status.js'
import type { ChildResult, SpawnError, SpawnStage } from './types.js'

/** The seed's diagnostics, verbatim. */
export const DIAGNOSTIC = {
  notFound: 'No such file or directory',
  couldNotExecute: 'Program could not be executed',
  timedOut: 'Child timed out',
  wouldntDie: "Child timed out but wouldn't die",
  aborted: 'Child aborted',
} as const

const STREAMS = ['stdin', 'stdout', 'stderr']

function rlimitName(resource: number | undefined): string {
  for (const [name, value] of Object.entries(native.rlimits)) if (value === resource) return `RLIMIT_${name.toUpperCase()}`
  return `resource ${resource}`
}

function spawnErrorMessage(stage: SpawnStage, description: string, detail: number | undefined, spec: NormalizedSpec): string {
  const stream = STREAMS[detail ?? -1] ?? 'a stream'
  switch (stage) {
    case 'exec': return `Couldn't execute '${spec.file}': ${description}`
    case 'chdir': return `Couldn't change directory to '${spec.cwd}': ${description}`
    case 'open': return `Couldn't open '${spec.paths[detail ?? 0] ?? '/dev/null'}' for ${stream}: ${description}`
    case 'dup2': return `Couldn't redirect ${stream}: ${description}`
    case 'setsid': return `Couldn't start a new session: ${description}`
    case 'rlimit': return `Couldn't set ${rlimitName(detail)}: ${description}`
    case 'signal': return `Couldn't reset the child's signal state: ${description}`
    case 'pipe': return `Couldn't create a pipe: ${description}`
    case 'fork': return `Couldn't fork: ${description}`
    case 'spawn': return `Couldn't track the child: ${description}`
  }
}

function spawnErrorOf(raw: RawResult, spec: NormalizedSpec): SpawnError | null {
  if (raw.stage === null) return null
  const stage = raw.stage as SpawnStage
  const errno = raw.errno ?? 0
  const [code, description] = native.errnoInfo(errno)
  return { stage, code, errno, message: spawnErrorMessage(stage, description, raw.detail, spec) }
}

function diagnosticOf(result: Omit<ChildResult, 'diagnostic'>, raw: RawResult, signalNumber: number | null): string {
  const err = result.spawnError
  if (err) {
    if (err.stage !== 'exec') return err.message
    return err.code === 'ENOENT' ? DIAGNOSTIC.notFound : DIAGNOSTIC.couldNotExecute
  }
  if (raw.wouldntDie) return DIAGNOSTIC.wouldntDie
  if (raw.timedOut) return DIAGNOSTIC.timedOut
  if (result.aborted) return DIAGNOSTIC.aborted
  if (signalNumber !== null) return signalDescription(signalNumber) + (result.coreDumped ? ' (core dumped)' : '')
  return ''
}

export function buildResult(raw: RawResult, spec: NormalizedSpec, aborted = false): ChildResult {
  const status = raw.status === null ? null : decodeWaitStatus(raw.status >>> 0)
  const signaled = status?.kind === 'signaled' ? status : null
  const partial = {
    pid: raw.pid,
    launcher: raw.launcher,
    exitCode: status?.kind === 'exited' ? status.exitCode : null,
    signal: signaled ? signaled.signal : null,
    coreDumped: signaled ? signaled.coreDumped : false,
    timedOut: raw.timedOut,
    aborted,
    spawnError: spawnErrorOf(raw, spec),
    stdout: raw.stdout,
    stderr: raw.stderr,
    stdoutTruncated: raw.stdoutTruncated,
    stderrTruncated: raw.stderrTruncated,
    rusage: raw.rusage,
    durationMs: raw.durationMs,
  }
  const diagnostic = diagnosticOf(partial, raw, signaled ? signaled.signalNumber : null)
  return { ...partial, diagnostic }
}
