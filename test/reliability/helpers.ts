// Helpers of the reliability tests: a node child that runs a script against the package (for
// faults that must not touch the test process itself: lowered rlimits, another uid), and the
// baseline of fds and children a test compares against when it ends.
import fs from 'node:fs'
import path from 'node:path'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { helperPath } from '../../lib/spawn/native.js'
import { REPO_ROOT, childPids, eventually, openFds, paths, script, tempDir, type PathAxes } from '../helpers.js'

/**
 * The environment of a node child that loads the harness: PATH, and under `npm run check:asan`
 * what it takes to load the sanitized addon there too (the runtime, its options, the addon).
 * `staged` is a copy of the package made by stageForNobody: the addon and preload are taken from it.
 */
export function nodeChildEnv(staged?: Staged): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  const asan = process.env.TILEHARNESS_ASAN_PRELOAD
  if (asan && process.env.TILEHARNESS_ADDON) {
    env.LD_PRELOAD = asan
    for (const key of ['ASAN_OPTIONS', 'UBSAN_OPTIONS']) {
      const value = process.env[key]
      if (value !== undefined) env[key] = value
    }
    env.TILEHARNESS_ADDON = staged ? staged.addon : process.env.TILEHARNESS_ADDON
    // Only the preload that keeps the runtime out of the grandchildren; not the rest of this
    // process's NODE_OPTIONS (tap's process tracking would count the child as a test process).
    env.NODE_OPTIONS = `--import=${path.join(staged ? staged.root : REPO_ROOT, 'scripts/asan-preload.mjs')}`
  }
  return env
}

/**
 * test/fixtures/<name>.c built into a shared library in `dir` (a preload, or a constructor run
 * by loading it), with cc; its path.
 */
export function buildFixtureLibrary(dir: string, name: string, libs: string[] = []): string {
  const so = path.join(dir, `${name}.so`)
  const built = spawnChildSync({ file: 'cc', args: ['-shared', '-fPIC', '-o', so, path.join(REPO_ROOT, 'test/fixtures', `${name}.c`), ...libs] })
  if (built.exitCode !== 0) throw new Error(`cc failed: ${built.diagnostic} ${built.stderr}`)
  return so
}

/**
 * The package as a child script requires it: `require(${PACKAGE})`. runNodeScript puts the path of
 * the checkout there, or of the staged copy a script run as another user loads.
 */
export const PACKAGE = JSON.stringify(REPO_ROOT)

/**
 * Runs `code` (CommonJS, `require(PACKAGE)` for the harness) in a node child through the harness
 * and returns what it printed as JSON on its last stdout line. `extra` adds to the child's spec
 * (rlimits); `as` runs it as another user, from a staged copy of the package (stageForNobody).
 */
export function runNodeScript<T>(code: string, extra: Partial<ChildSpec> = {}, as?: Staged): T {
  const argv = [...(as ? as.wrap : []), process.execPath, '-e', code.replaceAll(PACKAGE, JSON.stringify(as ? as.root : REPO_ROOT))]
  const r = spawnChildSync({ file: argv[0]!, args: argv.slice(1), cwd: as ? as.root : REPO_ROOT, env: nodeChildEnv(as), timeout: 60000, ...extra })
  const lines = r.stdout.toString().trim().split('\n')
  if (r.exitCode !== 0) throw new Error(`node child failed (${r.diagnostic || `exit ${r.exitCode}`}): ${r.stderr.toString()}${r.stdout.toString()}`)
  return JSON.parse(lines[lines.length - 1] ?? 'null') as T
}

/**
 * Code for a child script: `PATHS`, the combinations of paths(axes) (test/helpers.ts) as
 * `{ api, launcher, measure, label }`, and `runPath(path, spec)`, which runs a spec that way (the
 * spec's own launcher or measure kept; startChild's streams read, as APIS reads them) and returns
 * a promise of the result.
 */
export function childPaths(axes: PathAxes = {}): string {
  return `
  const PATHS = ${JSON.stringify(paths(axes).map(({ api, launcher, measure, label }) => ({ api, launcher, measure, label })))}
  const runPath = (path, spec) => {
    const harness = require(${PACKAGE})
    const full = { launcher: path.launcher, measure: path.measure, ...spec }
    if (path.api === 'sync') return Promise.resolve(harness.spawnChildSync(full))
    if (path.api === 'async') return harness.spawnChild(full)
    const child = harness.startChild(full)
    child.stdout.on('data', () => {})
    child.stderr.on('data', () => {})
    return child.result
  }
`
}

/** Code for a child script: its own fd list and children, as test/helpers.ts reads them. */
export const CHILD_PROBES = `
  const fs = require('fs')
  const openFds = () => fs.readdirSync('/proc/self/fd').length
  const childPids = () => fs.readdirSync('/proc/self/task').flatMap(t =>
    fs.readFileSync('/proc/self/task/' + t + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean))
`

export const AS_NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']

/** A copy of the built package another user can load, and how to run a command as that user. */
export interface Staged {
  root: string
  /** The addon file in the copy. */
  addon: string
  wrap: string[]
}

/**
 * Stages what a node child running as nobody needs (package.json, dist/, the addon and its helper,
 * node-gyp-build, the ASan preload) in a temp directory nobody can read: the checkout itself may
 * live where nobody cannot reach (a 0700 home or `mktemp -d`). Returns the staged copy, or the
 * reason it cannot be done here (not root, no setpriv), for the test to skip with.
 */
export function stageForNobody(t: { teardown(fn: () => void): void }): Staged | string {
  if (process.getuid?.() !== 0) return 'not running as root'
  const probe = spawnChildSync({ file: 'setpriv', args: [...AS_NOBODY.slice(1), 'true'] })
  if (probe.exitCode !== 0) return `setpriv cannot switch to nobody (${probe.diagnostic || probe.stderr.toString().trim()})`
  const root = tempDir(t, 'tileharness-staged-')
  fs.chmodSync(root, 0o755)
  const addonDir = path.dirname(helperPath)
  const addonName = path.basename(process.env.TILEHARNESS_ADDON ?? 'tileharness.node')
  const copy = (from: string, to = from) => fs.cpSync(path.join(REPO_ROOT, from), path.join(root, to), { recursive: true })
  for (const f of ['package.json', 'dist', 'node_modules/node-gyp-build', 'scripts/asan-preload.mjs']) copy(f)
  for (const f of [addonName, 'tileharness-exec']) {
    fs.cpSync(path.join(addonDir, f), path.join(root, 'build/Release', f))
  }
  // cpSync keeps modes; the directories it makes are 0755 under root's umask, but say so.
  for (const d of ['build', 'build/Release', 'node_modules', 'scripts']) fs.chmodSync(path.join(root, d), 0o755)
  const staged = { root, addon: path.join(root, 'build/Release', addonName), wrap: AS_NOBODY }
  const check = spawnChildSync({ file: 'setpriv', args: [...AS_NOBODY.slice(1), 'test', '-r', staged.addon] })
  if (check.exitCode !== 0) return `nobody cannot read the staged package in ${root}`
  return staged
}

/** The fds and children of this process now; check() waits (bounded) until they are back. */
export function baseline(): { check(t: { same(a: unknown, b: unknown, m: string): void }): Promise<void> } {
  const fds = openFds()
  const children = childPids()
  return {
    async check(t) {
      await eventually(() => JSON.stringify(openFds()) === JSON.stringify(fds) && JSON.stringify(childPids()) === JSON.stringify(children))
      t.same(openFds(), fds, 'no fds left behind')
      t.same(childPids(), children, 'no children left behind (no zombies)')
    },
  }
}

/**
 * The environment of a node child whose measuring helper runs `prelude` (sh) before it starts: a
 * copy of the addon (which takes its helper from its own directory) beside a wrapper that runs
 * it, then execs the real helper.
 */
function wrappedHelperEnv(t: { teardown(fn: () => void): void }, prelude: string): Record<string, string> {
  const dir = tempDir(t)
  const addon = process.env.TILEHARNESS_ADDON ? path.resolve(process.env.TILEHARNESS_ADDON) : path.join(path.dirname(helperPath), 'tileharness.node')
  fs.copyFileSync(addon, path.join(dir, path.basename(addon)))
  script(dir, 'tileharness-exec', `#!/bin/sh\n${prelude}\nexec ${shellQuote(helperPath)} "$@"\n`)
  return { ...nodeChildEnv(), TILEHARNESS_ADDON: path.join(dir, path.basename(addon)) }
}

/** Quoted for sh: a checkout's path may hold spaces (or quotes). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

/**
 * The environment of a node child whose measuring helper takes `ms` to start. For tests that tell
 * the helper's own time from the target's.
 */
export function slowHelperEnv(t: { teardown(fn: () => void): void }, ms: number): Record<string, string> {
  return wrappedHelperEnv(t, `sleep ${ms / 1000}`)
}

/**
 * The environment of a node child whose measuring helper starts only once the file `gate` exists
 * (it looks every 10 ms; the test creates the file when it is ready): for tests of what happens
 * before a measured child's target is reported, whatever the machine's speed.
 */
export function gatedHelperEnv(t: { teardown(fn: () => void): void }, gate: string): Record<string, string> {
  return wrappedHelperEnv(t, `while [ ! -e ${shellQuote(gate)} ]; do sleep 0.01; done`)
}
