// Builds a ChildResult from what the addon reports (a run's numbers, slot by slot, and its
// captured buffers): every flat field is derived from one decoded wait status (or its absence)
// and the spawn-failure stage, here and nowhere else. One pass straight from the numbers: right
// after a child has run on this CPU the caches are cold, and every object and step in between
// showed up in the per-spawn cost (scripts/bench).
import { helperPath, native, RAW, RUSAGE, RUSAGE_SOURCES, STAGES, type NativeBuffers } from './native.js'
import type { NormalizedSpec } from './normalize.js'
import { decodeWaitStatus, signalDescription } from './status.js'
import type { ChildResult, SpawnError, SpawnStage } from './types.js'

/** The contract's diagnostics, verbatim. */
export const DIAGNOSTIC = {
  notFound: 'No such file or directory',
  couldNotExecute: 'Program could not be executed',
  timedOut: 'Child timed out',
  wouldntDie: "Child timed out but wouldn't die",
  aborted: 'Child aborted',
} as const

const STREAMS = ['stdin', 'stdout', 'stderr']
const SIGKILL = 9

function rlimitName(resource: number): string {
  for (const [name, value] of Object.entries(native.rlimits)) if (value === resource) return `RLIMIT_${name.toUpperCase()}`
  return `resource ${resource}`
}

function spawnErrorMessage(stage: SpawnStage, description: string, detail: number, spec: NormalizedSpec): string {
  const stream = STREAMS[detail] ?? (detail >= 3 ? `fd ${detail}` : 'a stream')
  switch (stage) {
    case 'exec': return `Couldn't execute '${spec.file}': ${description}`
    case 'chdir': return `Couldn't change directory to '${spec.cwd}': ${description}`
    case 'open': return `Couldn't open '${spec.paths[detail] ?? '/dev/null'}' for ${stream}: ${description}`
    case 'dup2': return `Couldn't redirect ${stream}: ${description}`
    case 'setsid': return `Couldn't start a new session: ${description}`
    case 'rlimit': return `Couldn't set ${rlimitName(detail)}: ${description}`
    case 'signal': return `Couldn't reset the child's signal state: ${description}`
    case 'pipe': return `Couldn't create a pipe: ${description}`
    case 'fork': return `Couldn't fork: ${description}`
    case 'spawn': return `Couldn't track the child: ${description}`
    case 'setgroups': return `Couldn't set the supplementary groups to [${spec.ids.groups?.join(', ')}]: ${description}`
    case 'setgid': return `Couldn't change to gid ${spec.ids.gid}: ${description}`
    case 'setuid': return `Couldn't change to uid ${spec.ids.uid}: ${description}`
    case 'setpgid': return spec.ids.processGroup === 0 ? `Couldn't start a new process group: ${description}` : `Couldn't join process group ${spec.ids.processGroup}: ${description}`
    case 'affinity': return `Couldn't pin the child to CPUs ${spec.ids.cpus.join(',')}: ${description}`
    case 'terminal': return `Couldn't give the child a terminal: ${description}`
    case 'helper': return `Couldn't run the measuring helper '${helperPath}': ${description}`
  }
}

function spawnErrorOf(n: Float64Array, spec: NormalizedSpec, aborted: boolean): SpawnError | null {
  const stageNumber = n[RAW.stage]
  if (stageNumber === 0) return null
  const stage = STAGES[stageNumber] as SpawnStage
  const errno = n[RAW.errnum]
  let [code, description] = native.errnoInfo(errno)
  // An open(2) of a { path } target that was still blocked (a FIFO with no other end, a hung
  // mount) when the deadline came or the caller aborted: no child was started.
  if (stage === 'open' && n[RAW.timedOut] === 1) description = 'still blocked in open(2) at the deadline (a FIFO with no other end?)'
  else if (stage === 'open' && aborted) description = 'given up while blocked in open(2) (aborted)'
  return { stage, code, errno, message: spawnErrorMessage(stage, description, n[RAW.detail], spec) }
}

function diagnosticOf(spawnError: SpawnError | null, n: Float64Array, timedOut: boolean, aborted: boolean, signalNumber: number | null, coreDumped: boolean): string {
  if (spawnError) {
    if (spawnError.stage !== 'exec') return spawnError.message
    return spawnError.code === 'ENOENT' ? DIAGNOSTIC.notFound : DIAGNOSTIC.couldNotExecute
  }
  if (n[RAW.wouldntDie] === 1) return DIAGNOSTIC.wouldntDie
  if (timedOut) return DIAGNOSTIC.timedOut
  if (aborted) return DIAGNOSTIC.aborted
  if (signalNumber !== null) return signalDescription(signalNumber) + (coreDumped ? ' (core dumped)' : '')
  return ''
}

export function buildResult(n: Float64Array, buffers: NativeBuffers, spec: NormalizedSpec, aborted = false): ChildResult {
  const rawStatus = n[RAW.status]
  const status = Number.isNaN(rawStatus) ? null : decodeWaitStatus(rawStatus >>> 0)
  const signaled = status !== null && status.kind === 'signaled' ? status : null
  const coreDumped = signaled !== null && signaled.coreDumped
  // What happened first decides. A deadline or abort whose SIGKILL met a child that had already
  // exited on its own (they race: the exit can land between the harness's last look and the
  // signal) killed nothing; SIGKILL cannot be caught, so an exit status proves it.
  let timedOut = n[RAW.timedOut] === 1
  if (status !== null && status.kind === 'exited' && spec.native.killSignal === SIGKILL && n[RAW.wouldntDie] !== 1) {
    timedOut = false
    aborted = false
  }
  const spawnError = spawnErrorOf(n, spec, aborted)
  return {
    pid: n[RAW.pid],
    launcher: n[RAW.fork] === 1 ? 'fork' : 'posix_spawn',
    exitCode: status !== null && status.kind === 'exited' ? status.exitCode : null,
    signal: signaled ? signaled.signal : null,
    coreDumped,
    timedOut,
    aborted,
    spawnError,
    diagnostic: diagnosticOf(spawnError, n, timedOut, aborted, signaled ? signaled.signalNumber : null, coreDumped),
    stdout: buffers ? buffers[0] : Buffer.alloc(0),
    stderr: buffers ? buffers[1] : Buffer.alloc(0),
    stdoutTruncated: n[RAW.stdoutTruncated] === 1,
    stderrTruncated: n[RAW.stderrTruncated] === 1,
    // process.resourceUsage()'s names and units (native/boundary.h, TH_RUSAGE_FIELDS).
    rusage: {
      userCPUTime: n[RUSAGE.userCPUTime], systemCPUTime: n[RUSAGE.systemCPUTime], maxRSS: n[RUSAGE.maxRSS],
      sharedMemorySize: n[RUSAGE.sharedMemorySize], unsharedDataSize: n[RUSAGE.unsharedDataSize],
      unsharedStackSize: n[RUSAGE.unsharedStackSize], minorPageFault: n[RUSAGE.minorPageFault],
      majorPageFault: n[RUSAGE.majorPageFault], swappedOut: n[RUSAGE.swappedOut], fsRead: n[RUSAGE.fsRead],
      fsWrite: n[RUSAGE.fsWrite], ipcSent: n[RUSAGE.ipcSent], ipcReceived: n[RUSAGE.ipcReceived],
      signalsCount: n[RUSAGE.signalsCount], voluntaryContextSwitches: n[RUSAGE.voluntaryContextSwitches],
      involuntaryContextSwitches: n[RUSAGE.involuntaryContextSwitches],
    },
    durationMs: n[RAW.durationMs],
    rusageSource: RUSAGE_SOURCES[n[RAW.rusageSource]]!,
    waitDelayExpired: n[RAW.waitDelayExpired] === 1,
  }
}
