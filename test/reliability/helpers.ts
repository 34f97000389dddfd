// Helpers of the reliability tests: a node child that runs a script against the package (for
// faults that must not touch the test process itself: lowered rlimits, another uid), and the
// baseline of fds and children a test compares against when it ends.
import fs from 'node:fs'
import path from 'node:path'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { REPO_ROOT, childPids, eventually, openFds } from '../helpers.js'

/**
 * The environment of a node child that loads the harness: PATH, and under `npm run check:asan`
 * what it takes to load the sanitized addon there too (the runtime, its options, the addon).
 */
export function nodeChildEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  const asan = process.env.TILEHARNESS_ASAN_PRELOAD
  if (asan && process.env.TILEHARNESS_ADDON) {
    env.LD_PRELOAD = asan
    for (const key of ['TILEHARNESS_ADDON', 'ASAN_OPTIONS', 'UBSAN_OPTIONS']) {
      const value = process.env[key]
      if (value !== undefined) env[key] = value
    }
    // Only the preload that keeps the runtime out of the grandchildren; not the rest of this
    // process's NODE_OPTIONS (tap's process tracking would count the child as a test process).
    env.NODE_OPTIONS = `--import=${path.join(REPO_ROOT, 'scripts/asan-preload.mjs')}`
  }
  return env
}

/** The package as a child script requires it. */
export const PACKAGE = JSON.stringify(REPO_ROOT)

/**
 * Runs `code` (CommonJS, `require(PACKAGE)` for the harness) in a node child through the harness
 * and returns what it printed as JSON on its last stdout line. `wrap` puts a command in front of
 * node (setpriv, say); `extra` adds to the child's spec (rlimits).
 */
export function runNodeScript<T>(code: string, extra: Partial<ChildSpec> = {}, wrap: string[] = []): T {
  const argv = [...wrap, process.execPath, '-e', code]
  const r = spawnChildSync({ file: argv[0]!, args: argv.slice(1), cwd: REPO_ROOT, env: nodeChildEnv(), timeout: 60000, ...extra })
  const lines = r.stdout.toString().trim().split('\n')
  if (r.exitCode !== 0) throw new Error(`node child failed (${r.diagnostic || `exit ${r.exitCode}`}): ${r.stderr.toString()}${r.stdout.toString()}`)
  return JSON.parse(lines[lines.length - 1] ?? 'null') as T
}

/** Code for a child script: its own fd list and children, as test/helpers.ts reads them. */
export const CHILD_PROBES = `
  const fs = require('fs')
  const openFds = () => fs.readdirSync('/proc/self/fd').length
  const childPids = () => fs.readdirSync('/proc/self/task').flatMap(t =>
    fs.readFileSync('/proc/self/task/' + t + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean))
`

/** Whether `setpriv` can run a command as nobody here (root with CAP_SETUID, util-linux). */
export function canDropToNobody(): string | false {
  if (process.getuid?.() !== 0) return 'not running as root'
  const r = spawnChildSync({ file: 'setpriv', args: ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'true'] })
  if (r.exitCode !== 0) return `setpriv cannot switch to nobody (${r.diagnostic || r.stderr.toString().trim()})`
  try {
    fs.accessSync(REPO_ROOT, fs.constants.R_OK | fs.constants.X_OK)
  } catch {
    return 'the repository is not readable'
  }
  return false
}

export const AS_NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']

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
