// Shared by the `tileharness compile` end-to-end tests (compile*.test.ts): the CLI run as a
// subprocess through the harness, and the shapes of its messages.
import fs from 'node:fs'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { searchPath } from '../../lib/cuda/index.js'
import { EM_AARCH64, EM_X86_64 } from '../../lib/elf/index.js'
import { CLI_MAIN as MAIN } from '../helpers.js'

export { MAIN }
export const NATIVE_MACHINE = process.arch === 'arm64' ? EM_AARCH64 : EM_X86_64
export const READELF = searchPath('readelf', process.env)
export const PREFIX = 'tileharness compile: '

export const cli = (cwd: string, args: string[], extra: Partial<ChildSpec> = {}) => {
  const r = spawnChildSync({ file: process.execPath, args: [MAIN, 'compile', ...args], cwd, timeout: 120000, ...extra })
  return { ...r, out: r.stdout.toString(), err: r.stderr.toString() }
}

/** The environment minus the toolkit variables, so PATH alone decides where ptxas is. */
export const ENV_WITHOUT_ROOTS = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['CUDA_ROOT', 'CUDA_HOME', 'CUDA_PATH'].includes(k)))

/** What the CLI writes for these messages: one line each, after the program's name. */
export function lines(...messages: string[]): string {
  return messages.map((m) => `${PREFIX}${m}\n`).join('')
}

/** A bad command line: its message, then coreutils' pointer to --help. */
export function usage(message: string): string {
  return `${PREFIX}${message}\nTry 'tileharness compile --help' for more information.\n`
}

/** The directory's entries, sorted. */
export function files(dir: string): string[] {
  return fs.readdirSync(dir).sort()
}
