// Public types of the harness: what a caller asks for (ChildSpec) and what it gets back
// (ChildResult). Validation lives in normalize.ts, result building in result.ts.

/** Where a child's stdin comes from; 'pipe': startChild's `stdin` Writable (elsewhere the child reads EOF). */
export type StdinSpec = 'ignore' | 'closed' | 'inherit' | 'pipe' | number | { path: string }

/** Where a child's stdout goes. */
export type StdoutSpec = 'pipe' | 'ignore' | 'inherit' | 'closed' | number | { path: string; append?: boolean }

/** Where a child's stderr goes: as stdout, or 'stdout' to merge into stdout's sink with dup2(1, 2). */
export type StderrSpec = StdoutSpec | 'stdout'

export type RlimitValue = number | 'unlimited' | { soft: number | 'unlimited'; hard: number | 'unlimited' }

/** Lower-case RLIMIT_ names. */
export type RlimitName =
  | 'as' | 'core' | 'cpu' | 'data' | 'fsize' | 'locks' | 'memlock' | 'msgqueue' | 'nice'
  | 'nofile' | 'nproc' | 'rss' | 'rtprio' | 'rttime' | 'sigpending' | 'stack'

export type Launcher = 'posix_spawn' | 'fork'

/** Every optional field may also be null, which means "not given", as in Node's options. */
export interface ChildSpec {
  /** Program to run; looked up on the PATH of the child's environment when it has no '/'. */
  file: string | URL
  /** argv[1..]. */
  args?: readonly string[] | null
  /** argv[0]; default: `file`. */
  argv0?: string | null
  /** The child's whole environment; default: inherit process.env. */
  env?: Record<string, string | undefined> | null
  /** Working directory of the child. */
  cwd?: string | URL | null
  stdin?: StdinSpec | null
  /** Fed to the child's stdin through a pipe (instead of `stdin`). */
  input?: string | ArrayBufferView | null
  stdout?: StdoutSpec | null
  stderr?: StderrSpec | null
  /**
   * Extra fds for the child: `{ 3: fd, 7: fd2 }` gives the child this process's open fd `fd` as its
   * fd 3 and `fd2` as its fd 7 (child fds 3 to 1023); every other fd above 2 is still closed in
   * the child. A pipe is passed as one of its ends (a FIFO the caller opened, a net.Socket's
   * `_handle.fd`, an fs fd). The fds must stay open until the child has started.
   */
  fds?: Readonly<Record<number, number>> | null
  /** Milliseconds; 0 or absent = no timeout. */
  timeout?: number | null
  /** Signal sent at the deadline (default SIGKILL, as the contract has it). */
  killSignal?: string | number | null
  /** When killSignal is gentler than SIGKILL: SIGKILL follows after this many ms. */
  forceKillAfterDelay?: number | null
  /** How long to wait for a killed child to be reaped before "wouldn't die" (ms, default 5000). */
  graceTimeout?: number | null
  /**
   * After the child exits, how long its stdout/stderr pipes are read on until EOF while a
   * grandchild still holds them (ms, default 1000; 0: not at all). Output after that is not in the
   * result, and the result says `waitDelayExpired`.
   */
  waitDelay?: number | null
  /** Start the child in a new session (and process group); kills then reach the whole group. */
  setsid?: boolean | null
  rlimits?: Partial<Record<RlimitName, RlimitValue>> | null
  /** The child's user id (fork path). */
  uid?: number | null
  /** The child's group id (fork path). */
  gid?: number | null
  /** The child's supplementary groups (fork path); with uid or gid but no groups they are
   * cleared where allowed, as Node (libuv) does. */
  groups?: readonly number[] | null
  /** The child's umask, 0 to 0o777 (fork path). */
  umask?: number | null
  /** true or 0: the child leads a new process group, and kills reach the whole group; a number:
   * the child joins that existing group (kills reach the child alone). Not with setsid. */
  processGroup?: boolean | number | null
  /**
   * A new pseudo-terminal as the child's controlling terminal on fds 0-2: `true` (80x24) or
   * `{ columns, rows }` (integers 1 to 65535). The child leads a new session (as with setsid:
   * kills reach its group). What it writes is `result.stdout` (as a terminal shows it: `\r\n`
   * line ends, `input` echoed; `stderr` is empty) and startChild's `terminal` stream; `input` is
   * typed into it, then ^D. Not with stdin, stdout, stderr, `setsid: false` or processGroup;
   * fork path (a forced 'posix_spawn' is refused).
   */
  terminal?: boolean | { columns: number; rows: number } | null
  /** The CPUs the child is pinned to (sched_setaffinity; fork path). */
  cpus?: readonly number[] | null
  /** Bytes kept per captured stream; the rest is read and dropped, and the result says so. */
  maxBuffer?: number | null
  launcher?: 'auto' | Launcher | null
  /** Kill children still running when this process exits (default true); on the fork path
   * also PR_SET_PDEATHSIG, so a parent killed by SIGKILL leaves no orphan: 'auto' takes the fork
   * path when this is set. A child forced onto 'posix_spawn' (unmeasured) has no death signal. */
  killOnExit?: boolean | null
  /** Honest resource usage: run the child through the small measuring helper so that
   * rusage.maxRSS is the child's own peak, not this (possibly large) process's. */
  measure?: boolean | null
  /** spawnChild/startChild only: aborting kills the child, and the result says `aborted`. */
  signal?: AbortSignal | null
}

/** Which step of starting the child failed. */
export type SpawnStage =
  | 'exec' | 'chdir' | 'open' | 'dup2' | 'setsid' | 'rlimit' | 'signal'
  | 'pipe' | 'fork' | 'spawn' | 'setgroups' | 'setgid' | 'setuid' | 'setpgid' | 'affinity' | 'terminal'
  | 'helper'

export interface SpawnError {
  stage: SpawnStage
  /** errno name, e.g. 'ENOENT'. */
  code: string
  errno: number
  message: string
}

/** Mirrors process.resourceUsage(): CPU times in microseconds, maxRSS in KiB. */
export interface ChildRusage {
  userCPUTime: number
  systemCPUTime: number
  maxRSS: number
  sharedMemorySize: number
  unsharedDataSize: number
  unsharedStackSize: number
  minorPageFault: number
  majorPageFault: number
  swappedOut: number
  fsRead: number
  fsWrite: number
  ipcSent: number
  ipcReceived: number
  signalsCount: number
  voluntaryContextSwitches: number
  involuntaryContextSwitches: number
}

export interface ChildResult {
  /** 0 when no process could be created or identified (see README). */
  pid: number
  /** The launch path actually taken. */
  launcher: Launcher
  exitCode: number | null
  signal: string | null
  coreDumped: boolean
  timedOut: boolean
  /** The AbortSignal fired and the child was killed for it (always false from spawnChildSync). */
  aborted: boolean
  spawnError: SpawnError | null
  /** The harness's one-line verdict; '' when the child exited normally, whatever its code. */
  diagnostic: string
  stdout: Buffer
  stderr: Buffer
  stdoutTruncated: boolean
  stderrTruncated: boolean
  rusage: ChildRusage
  /**
   * The child's lifetime in ms, monotonic: from its launch to when its exit was seen. Measured
   * (rusageSource 'helper'), the target's own, clocked by the helper from just before it starts
   * the target to its reaping, so the helper's exec and exit are not counted.
   */
  durationMs: number
  /**
   * Whose figures `rusage` holds: 'wait4', the child's own from wait4 (maxRSS never below the
   * image that exec'd it: this process's, see `measure`); 'helper', the measured target's own,
   * reported by the measuring helper; 'unavailable', a measured child whose helper was killed
   * before it could report: every rusage figure is NaN rather than a figure that is not the child's.
   */
  rusageSource: 'wait4' | 'helper' | 'unavailable'
  /** The pipes were still open (held by a grandchild) waitDelay after the exit: output after that is cut. */
  waitDelayExpired: boolean
}

/** A decoded wait status (see decodeWaitStatus). */
export type WaitStatus =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'signaled'; signal: string; signalNumber: number; coreDumped: boolean }
  | { kind: 'stopped'; signal: string; signalNumber: number }
  | { kind: 'continued' }
