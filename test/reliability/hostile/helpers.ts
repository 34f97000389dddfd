// Helpers of the hostile suite. Every scenario that may abort, crash or hang a process runs in a
// child node process (a fixture under ./fixtures), so that an abort is an assertion failure of the
// tap file ("exited by SIGABRT", "stderr has 'terminate called'") and not the end of it. A fixture
// prints one JSON line of what it observed; the test asserts on it and on how the child ended.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { eventually, helperBuildAction } from '../../helpers.js'

export { eventually }

export const HERE = path.dirname(fileURLToPath(import.meta.url))
export const ROOT = path.resolve(HERE, '..', '..', '..')
export const FIXTURES = path.join(HERE, 'fixtures')
const ENV_COMMAND = fs.existsSync('/usr/bin/env') ? '/usr/bin/env' : 'env'

/** Markers in a child's stderr that mean the process (or the addon in it) broke. */
const BROKEN = [/terminate called/, /FATAL ERROR/, /AddressSanitizer/, /runtime error:/, /Segmentation fault/, /double free|free\(\): invalid|malloc\(\): |corrupted (size|double-linked)/]

/**
 * The environment of a fixture: a small clean one (PATH, HOME, TMPDIR, LANG) and, under
 * `npm run check:asan`, what it takes to load the sanitized addon there too (as
 * test/reliability/helpers.ts's nodeChildEnv). Not tap's NODE_OPTIONS: tap would count the child
 * as a test process.
 */
export function fixtureEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  for (const key of ['HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[key]
    if (value !== undefined) env[key] = value
  }
  const asan = process.env.TILEHARNESS_ASAN_PRELOAD
  if (asan && process.env.TILEHARNESS_ADDON) {
    env.LD_PRELOAD = asan
    for (const key of ['TILEHARNESS_ADDON', 'ASAN_OPTIONS', 'UBSAN_OPTIONS']) {
      const value = process.env[key]
      if (value !== undefined) env[key] = value
    }
    env.NODE_OPTIONS = `--import=${path.join(ROOT, 'scripts', 'asan-preload.mjs')}`
  }
  return { ...env, ...extra }
}

export interface FixtureRun {
  label: string
  status: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Killed by the safety timeout (with its whole process group). */
  hung: boolean
  ms: number
  safetyMs: number
  /** The last stdout line that parses as JSON, or null. */
  json: any
  /** Processes of its process group still running after it exited ("pid cmdline"). */
  leftovers: string[]
}

export interface FixtureOptions {
  /** Safety net only: the fixture's process group is SIGKILLed after this long. */
  timeoutMs?: number
  nodeArgs?: string[]
  env?: Record<string, string>
  label?: string
  /** Leave processes it left behind running (the test checks and kills them itself). */
  keepGroup?: boolean
}

/** Running (not zombie) processes whose process group is pgid, as "pid cmdline". */
export function groupMembers(pgid: number): string[] {
  const out: string[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) !== pgid || fields[0] === 'Z' || fields[0] === 'X') continue
      out.push(`${name} ${fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim()}`)
    } catch { /* gone */ }
  }
  return out
}

/** Runs fixtures/<name> in a node child (own process group) and collects how it ended. */
export function runFixture(name: string, args: string[] = [], opts: FixtureOptions = {}): Promise<FixtureRun> {
  const safetyMs = opts.timeoutMs ?? 30000
  const label = opts.label ?? [name, ...args.filter(a => !a.startsWith('/'))].join(' ')
  const started = Date.now()
  return new Promise(resolve => {
    // Through `env -i`: tap's process tracking (@tapjs/processinfo) adds its NODE_OPTIONS and
    // variables to every spawn, and its preload would then run in the fixture (with signal-exit
    // listeners on SIGALRM and friends: not the process the scenario describes).
    const env = Object.entries(fixtureEnv(opts.env)).map(([k, v]) => `${k}=${v}`)
    const argv = ['-i', ...env, process.execPath, ...(opts.nodeArgs ?? []), path.join(FIXTURES, name), ...args]
    const child = spawn(ENV_COMMAND, argv, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a hang is killed with everything it started
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
    let hung = false
    const safety = setTimeout(() => {
      hung = true
      try { process.kill(-child.pid!, 'SIGKILL') } catch { /* already gone */ }
    }, safetyMs)
    child.on('close', async (status, signal) => {
      clearTimeout(safety)
      const ms = Date.now() - started
      let json: any = null
      for (const line of stdout.trim().split('\n').reverse()) {
        try { json = JSON.parse(line); break } catch { /* not the report line */ }
      }
      // What it left behind: members of its process group still running once it is gone (a
      // bounded wait: children it killed on the way out may take a moment to go). Then they are
      // killed, unless the test looks at them itself.
      const pgid = child.pid!
      await eventually(() => groupMembers(pgid).length === 0, 3000)
      const leftovers = groupMembers(pgid)
      if (!opts.keepGroup && leftovers.length) try { process.kill(-pgid, 'SIGKILL') } catch { /* gone */ }
      resolve({ label, status, signal, stdout, stderr, hung, ms, safetyMs, json, leftovers })
    })
  })
}

/** Runs fixtures `limit` at a time; results in the order of `jobs`. */
export async function runAll<T>(jobs: Array<() => Promise<T>>, limit = 4): Promise<T[]> {
  const out: T[] = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker))
  return out
}

type T = Pick<Test, 'ok' | 'equal' | 'same' | 'notMatch' | 'fail'>

/** A short description of how a fixture ended, for messages. */
export function howEnded(r: FixtureRun): string {
  if (r.hung) return `hung: killed by the ${r.safetyMs} ms safety timeout`
  if (r.signal) return `killed by ${r.signal}${r.signal === 'SIGABRT' ? ' (abort)' : r.signal === 'SIGALRM' ? ' (Alarm clock)' : ''}`
  return `exit ${r.status}`
}

function tail(s: string, n = 600): string {
  return s.length > n ? '...' + s.slice(-n) : s
}

/**
 * The fixture ended as a healthy process does: in time, not by a signal, with `status` (0 unless
 * told), nothing in stderr that says it broke, its JSON report printed, and nothing it started
 * still running after it (its process group is empty). Returns the report, or
 * null when there is none (the failure is already recorded).
 */
export function assertHealthy(t: T, r: FixtureRun, opts: { status?: number | null } = {}): any {
  const extra = { stderr: tail(r.stderr), stdout: tail(r.stdout, 300), ms: r.ms }
  const how = howEnded(r)
  t.equal(r.hung, false, `${r.label}: did not hang (${how})`, extra)
  t.equal(r.signal, null, `${r.label}: not killed by a signal (${how})`, extra)
  if (opts.status !== null) t.equal(r.status, opts.status ?? 0, `${r.label}: exit status ${opts.status ?? 0} (${how})`, extra)
  for (const re of BROKEN) t.notMatch(r.stderr, re, `${r.label}: stderr has no ${re}`, extra)
  t.ok(r.json !== null, `${r.label}: printed its JSON report`, extra)
  if (!r.hung) t.same(r.leftovers, [], `${r.label}: left no process behind (its process group is empty once it is gone)`)
  return r.json
}

/** A private temp directory, removed when the test ends. */
export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'tileharness-hostile-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Whether a command can be run here (for skips with a reason). */
export function haveCommand(cmd: string, args: string[] = ['--version']): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore' })
  return !r.error
}

/** The newest mtime under dir of the files matching re. */
function newest(dir: string, re: RegExp): number {
  let max = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !re.test(entry.name)) continue
    const full = path.join(entry.parentPath ?? (entry as any).path, entry.name)
    max = Math.max(max, fs.statSync(full).mtimeMs)
  }
  return max
}

/**
 * The fixtures load dist/ and build/ (a user's view of the package), not lib/: make sure those
 * are not older than the sources, or a fix in lib/ or native/ would look like it did nothing.
 */
export function assertFreshBuild(t: T): void {
  const dist = path.join(ROOT, 'dist', 'index.js')
  // Under `npm run check:asan` the fixtures load the sanitized addon TILEHARNESS_ADDON names.
  const addon = process.env.TILEHARNESS_ADDON ? path.resolve(process.env.TILEHARNESS_ADDON) : path.join(ROOT, 'build', 'Release', 'tileharness.node')
  if (!fs.existsSync(dist) || !fs.existsSync(addon)) {
    t.fail(`dist/ and ${path.relative(ROOT, addon)} exist (run npm install, or npm run build)`)
    return
  }
  const distTime = newest(path.join(ROOT, 'dist'), /\.js$/)
  t.ok(distTime >= newest(path.join(ROOT, 'lib'), /\.ts$/), 'dist/ is not older than lib/ (else: npm run build:ts; npm test does it)')
  t.ok(fs.statSync(addon).mtimeMs >= newest(path.join(ROOT, 'native'), /\.(cc|h)$/), `${path.relative(ROOT, addon)} is not older than native/ (else: npm run build:gyp)`)
  // The measuring helper is built apart from the addon, from the inputs binding.gyp's action names.
  const helper = path.join(path.dirname(addon), 'tileharness-exec')
  const inputs = helperBuildAction().inputs
  const helperTime = fs.existsSync(helper) ? fs.statSync(helper).mtimeMs : -1
  t.ok(helperTime >= Math.max(...inputs.map(f => fs.statSync(path.join(ROOT, f)).mtimeMs)), `${path.relative(ROOT, helper)} is not older than ${inputs.join(', ')} (else: npm run build:gyp)`)
}

/** 'gone', 'zombie' or 'alive'; and whether a live pid still runs `needle` (pid reuse guard). */
export function processInfo(pid: number, needle?: string): 'gone' | 'zombie' | 'alive' {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    if (state === 'Z' || state === 'X') return 'zombie'
    if (needle !== undefined && !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return 'gone'
    return 'alive'
  } catch {
    return 'gone'
  }
}

