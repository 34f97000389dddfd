// Shared test helpers: the launch paths every behaviour table runs through, private temp dirs,
// and process-level facts (open fds, children) read from /proc.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Launcher } from '../lib/index.js'

export const LAUNCHERS: Launcher[] = ['posix_spawn', 'fork']

/**
 * A shell script (`sh -c`) that reports everything a program can observe about how it was started:
 * argv, cwd, environment, open fds, signal dispositions and mask, stdin, umask; then exits 7. Run it
 * in a directory it may write (fds.txt).
 */
export const START_PROBE = [
  'echo "argv: $0 $*"',
  'echo "cwd: $(pwd)"',
  'echo "env: $(env | sort | tr "\\n" " ")"',
  // ls is forked with only a redirection: the shell holds no pipe of its own while ls lists it.
  'ls /proc/$$/fd > fds.txt; echo "fds: $(tr "\\n" " " < fds.txt)"',
  'grep -E "^Sig(Ign|Blk|Cgt)" /proc/$$/status | tr "\\t" " "',
  'echo "stdin: $(cat)"',
  'echo "to stderr" >&2',
  'echo "umask: $(umask)"',
  'exit 7',
].join('\n')

/** A private temp directory, removed when the test ends. */
export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'tileharness-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * Runs `fn` with `fields` set on Object.prototype, as a polluted prototype has them, and takes them
 * off again when it has settled, thrown or not: what the caller gave is read with every object
 * answering them.
 */
export async function withPollutedPrototype<T>(fields: Record<string, unknown>, fn: () => T | Promise<T>): Promise<T> {
  const prototype = Object.prototype as Record<string, unknown>
  for (const [key, value] of Object.entries(fields)) prototype[key] = value
  try {
    return await fn()
  } finally {
    for (const key of Object.keys(fields)) delete prototype[key]
  }
}

/** Writes an executable script into dir and returns its path. */
/** A Proxy already revoked: V8 throws its uncoded TypeError at nearly anything asked of it. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

export function script(dir: string, name: string, body: string, mode = 0o755): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, body, { mode })
  fs.chmodSync(file, mode)
  return file
}

export function openFds(): string[] {
  return fs.readdirSync('/proc/self/fd').sort((a, b) => Number(a) - Number(b))
}

/** Pids of this process's children (every thread's), from /proc. Self-contained: tests also hand its source to child scripts. */
export function childPids(): number[] {
  const out: number[] = []
  for (const task of fs.readdirSync('/proc/self/task')) {
    let text = ''
    try { text = fs.readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim() } catch { continue } // the thread is gone
    if (text) out.push(...text.split(/\s+/).map(Number))
  }
  return out
}

/**
 * n bytes of bytes(range(251)) repeated, for captures checked byte by byte: the period is prime to
 * every page, window and pipe size, so a byte lost, doubled or put in the wrong place shows.
 */
export function pattern251(n: number): Buffer {
  const out = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) out[i] = i % 251
  return out
}

/** 'gone', 'zombie', or 'alive' for a pid. */
export function processState(pid: number): 'gone' | 'zombie' | 'alive' {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state === 'Z' || state === 'X' ? 'zombie' : 'alive'
  } catch {
    return 'gone'
  }
}

/** Polls until pred() holds or `ms` pass; returns whether it held. Bounded, never a timed assertion. */
export async function eventually(pred: () => boolean, ms = 10000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (pred()) return true
    await new Promise(r => setTimeout(r, 20))
  }
  return pred()
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The `tileharness` command as built (npm test builds it first). */
export const CLI_MAIN = path.join(REPO_ROOT, 'dist/cli/main.js')

/** binding.gyp's action that builds the measuring helper (its command, inputs and outputs). */
export function helperBuildAction(): { action: string[]; inputs: string[]; outputs: string[] } {
  const gyp = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'binding.gyp'), 'utf8'))
  const target = gyp.targets.find((x: { target_name: string }) => x.target_name === 'tileharness-exec')
  if (!target?.actions?.[0]) throw new Error("binding.gyp has no 'tileharness-exec' target with an action")
  return target.actions[0]
}

import type { Test } from 'tap'
import { spawnChild, spawnChildSync, startChild, type ChildResult, type ChildSpec } from '../lib/index.js'

/**
 * Starts the reaper thread and its wake-up pipe, which the first child that "wouldn't die" makes
 * and the addon keeps for the life of the process: a test that takes an fd baseline calls this
 * first, so that a child handed to the reaper later does not count as a leak. The child here is
 * sure to outlast its grace period: SIGCHLD does nothing to sleep. Resolves once it is reaped.
 */
export async function startReaper(): Promise<void> {
  const stuck = spawnChildSync({ file: 'sleep', args: ['5'], timeout: 1, killSignal: 'SIGCHLD', graceTimeout: 1 })
  if (!stuck.timedOut || stuck.diagnostic !== "Child timed out but wouldn't die") throw new Error(`startReaper: the child was not handed to the reaper (${stuck.diagnostic})`)
  if (!await eventually(() => processState(stuck.pid) === 'gone')) throw new Error(`startReaper: ${stuck.pid} was not reaped`)
}

export type Run = (spec: ChildSpec) => Promise<ChildResult>

/**
 * `run(spec)`, again with twice the deadline (up to 20 s) while `setUp(result)` says the deadline
 * came before the child had done what the case needs first: set a trap, stopped itself, printed a
 * pid (the default: it printed anything). A busy machine's shell can take longer to start than any fixed deadline, so a case that
 * needs one started gets a short first deadline and room after it; nothing here is timed. With a
 * new session or process group, what the shell had started is killed before the next try.
 */
export async function withRoomToStart(run: Run, spec: ChildSpec & { timeout: number }, setUp = (r: ChildResult) => r.stdout.length > 0): Promise<ChildResult> {
  for (let timeout = spec.timeout; ; timeout *= 2) {
    const r = await run({ ...spec, timeout })
    if (setUp(r) || timeout >= 20000) return r
    if ((spec.setsid || spec.terminal || spec.processGroup === true) && r.pid > 0) {
      try { process.kill(-r.pid, 'SIGKILL') } catch { /* none left */ }
    }
  }
}

/** The three APIs every behaviour table runs through: the same spec, the same result type.
 * startChild's live streams (and its terminal, with one) are read by 'data' listeners that drop what they see (the streams have
 * backpressure: unread, they would stop the pipe; the result carries the output), and its
 * synchronous throws become rejections, as spawnChild's are. */
export const APIS: Array<[string, Run]> = [
  ['sync', async spec => spawnChildSync(spec)],
  ['async', spec => spawnChild(spec)],
  ['start', async spec => {
    const child = startChild(spec)
    child.stdout.on('data', () => {})
    child.stderr.on('data', () => {})
    child.terminal?.on('data', () => {})
    return child.result
  }],
]

/** Unmeasured, and through the measuring helper (native/exec-helper.c): the same child either way. */
export const MEASURE: boolean[] = [false, true]

/** One way through the harness: an API, a launch path, measured or not. */
export interface Path {
  api: string
  launcher: 'auto' | Launcher
  measure: boolean
  /** 'sync posix_spawn', 'start fork measured': the name of the combination. */
  label: string
  /** Runs a spec this way; a spec that names its own launcher or measure keeps it. */
  run: Run
}

export interface PathAxes {
  /** Names from APIS; default all three. */
  apis?: string[]
  /** Default LAUNCHERS; 'auto' where the row is about what 'auto' picks. */
  launchers?: Array<'auto' | Launcher>
  /** Default MEASURE. */
  measure?: boolean[]
}

/** Every combination of API × launcher × measure, in that order. */
export function paths({ apis, launchers = LAUNCHERS, measure = MEASURE }: PathAxes = {}): Path[] {
  const out: Path[] = []
  for (const [api, run] of APIS) if (!apis || apis.includes(api)) for (const launcher of launchers) for (const m of measure) {
    out.push({ api, launcher, measure: m, label: `${api} ${launcher}${m ? ' measured' : ''}`, run: spec => run({ launcher, measure: m, ...spec }) })
  }
  return out
}

/**
 * Runs one row of a behaviour table through every path, each as a subtest named
 * `${name} (${path.label})` (the label alone where the row's own subtest has the name): every
 * assertion of the row is labelled with its combination.
 */
export async function eachPath(t: Test, name: string, check: (t: Test, path: Path) => Promise<void>, axes: PathAxes = {}): Promise<void> {
  for (const path of paths(axes)) await t.test(name ? `${name} (${path.label})` : path.label, t => check(t, path))
}
