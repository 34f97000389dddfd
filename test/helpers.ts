// Shared test helpers: the launch paths every behaviour table runs through, private temp dirs,
// and process-level facts (open fds, children) read from /proc.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Launcher } from '../lib/index.js'

export const LAUNCHERS: Launcher[] = ['posix_spawn', 'fork']

/** A private temp directory, removed when the test ends. */
export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'tileharness-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Writes an executable script into dir and returns its path. */
export function script(dir: string, name: string, body: string, mode = 0o755): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, body, { mode })
  fs.chmodSync(file, mode)
  return file
}

export function openFds(): string[] {
  return fs.readdirSync('/proc/self/fd').sort((a, b) => Number(a) - Number(b))
}

/** Pids of this process's children (every thread's), from /proc. */
export function childPids(): number[] {
  const out: number[] = []
  for (const task of fs.readdirSync('/proc/self/task')) {
    const text = fs.readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim()
    if (text) out.push(...text.split(/\s+/).map(Number))
  }
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

import { spawnChild, spawnChildSync, type ChildResult, type ChildSpec } from '../lib/index.js'

export type Run = (spec: ChildSpec) => Promise<ChildResult>

/** The two APIs every behaviour table runs through: the same spec, the same result type. */
export const APIS: Array<[string, Run]> = [
  ['sync', async spec => spawnChildSync(spec)],
  ['async', spec => spawnChild(spec)],
]
