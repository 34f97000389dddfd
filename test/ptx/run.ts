// How the ptx and elf tests run external programs (ptxas, cc, readelf, objdump, the linked test
// programs). Library code under lib/ptx and lib/elf starts no processes; only tests do.
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { ChildResult, ChildSpec } from '../../lib/spawn/types.js'
import { spawnChildSync } from '../../lib/spawn/index.js'

/** The fields of a ChildResult these tests read. */
export type RunResult = Pick<ChildResult, 'exitCode' | 'signal' | 'stdout' | 'stderr'>

/** Runs `file` with `args`, stdin closed, stdout and stderr captured separately. */
export function run(file: string, args: readonly string[], options: Omit<ChildSpec, 'file' | 'args'> = {}): RunResult {
  // stdin closed unless input is given: the harness refuses both at once.
  const stdin = options.input === undefined ? { stdin: 'ignore' as const } : {}
  return spawnChildSync({ file, args, ...stdin, stdout: 'pipe', stderr: 'pipe', ...options })
}

/** The path of `program` on PATH, or null: decides which tests skip (and say why). */
export function which(program: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, program)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not in this directory
    }
  }
  return null
}

/** The tap `skip` option for a test that needs `programs`: false, or the reason it skips. */
export function needs(...programs: string[]): false | string {
  const missing = programs.filter((p) => which(p) === null)
  return missing.length === 0 ? false : `${missing.join(', ')} not on PATH`
}
