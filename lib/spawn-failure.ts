// One sentence for a child that could not be started, in coreutils' shape ("timeout: failed to run
// command 'x': Exec format error"): the program, the step that failed, the C library's text for the
// errno, and a hint where the cause is known.
//
//   failed to run 'x': Exec format error (no #! line?)
//   failed to run './tool': No such file or directory (its #! interpreter '/opt/py/bin/python' was not found)
//   failed to run 'true': cannot change directory to '/nope': No such file or directory
//
// `tileharness run` and `bench` print it; the CUDA layer gives it as the reason when ptxas or the
// SASS dump command cannot be started. The harness's own verdicts ("Program could not be executed")
// stay in ChildResult.diagnostic, untouched.
import fs from 'node:fs'
import path from 'node:path'
import { own, requirePath } from './errors.js'
import { native } from './spawn/native.js'
import type { SpawnError } from './spawn/types.js'

/**
 * `failed to run '<file>': <what failed>: <strerror text> (<hint>)`. `spawned` is how the child
 * was started: its environment (whose PATH the hint searches) and its working directory (where a
 * relative path, or a relative PATH entry, is looked up, as the child's exec did). Both are its
 * own fields, as the harness read them: a spec without an env or cwd was started without one,
 * whatever a polluted Object.prototype says.
 */
export function spawnFailureMessage(program: string | URL, spawnError: SpawnError, spawned: Spawned = {}): string {
  const file = requirePath('file', program)
  const cwd = spawnedCwd(spawned)
  const hint = spawnFailureHint(file, spawnError, (own(spawned, 'env') as SpawnedEnv | undefined) ?? process.env, cwd)
  const suffix = hint === null ? '' : ` (${hint})`
  if (spawnError.stage === 'exec') return `failed to run '${file}': ${native.errnoInfo(spawnError.errno)[1]}${suffix}`
  // Every other stage's message already names what it was doing and the errno's text:
  // "Couldn't change directory to '/nope': No such file or directory".
  return `failed to run '${file}': ${spawnError.message.replace(/^Couldn't /, 'cannot ')}${suffix}`
}

/** The working directory a child was given, as a path (`field` names it); undefined for none. */
export function spawnedCwd(spawned: Spawned, field = 'cwd'): string | undefined {
  const dir = own(spawned, 'cwd')
  return dir === undefined || dir === null ? undefined : requirePath(field, dir)
}

/** What is known to cause this failure, in a few words; null when nothing more is known. */
/** The environment a child was given (ChildSpec.env: null or absent is this process's). */
export type SpawnedEnv = Record<string, string | undefined> | null

/** How a child was started, as far as its failure's wording needs: ChildSpec's env and cwd. */
export interface Spawned {
  env?: SpawnedEnv | undefined
  cwd?: string | URL | null | undefined
}

export function spawnFailureHint(file: string, spawnError: SpawnError, env: Record<string, string | undefined> = process.env, cwd?: string): string | null {
  const { stage, code } = spawnError
  if (stage === 'fork' && code === 'EAGAIN') return 'the process limit (ulimit -u) reached?'
  if (stage === 'pipe' && (code === 'EMFILE' || code === 'ENFILE')) return 'the open-file limit (ulimit -n) reached?'
  if ((stage === 'setuid' || stage === 'setgid' || stage === 'setgroups') && code === 'EPERM') return 'only root (CAP_SETUID/CAP_SETGID) can change them'
  if (stage === 'affinity' && code === 'EINVAL') return 'none of those CPUs is online or allowed?'
  if (stage === 'helper') return 'reinstall or rebuild tileharness, or run without measure'
  if (stage !== 'exec') return null
  switch (code) {
    case 'ENOEXEC':
      return 'no #! line?'
    case 'ETXTBSY':
      return 'it is open for writing'
    case 'ENOENT': {
      // The kernel says ENOENT for a missing interpreter too: the program is there, its #! is not.
      const found = locate(file, env, cwd)
      if (found === null) return null
      const head = firstBytes(found, 256)
      if (head.subarray(0, 2).toString('latin1') === '#!') {
        const interpreter = head.subarray(2).toString('latin1').split('\n')[0].trim().split(/[ \t]/)[0]
        return interpreter === '' ? 'its #! line names no interpreter' : `its #! interpreter '${interpreter}' was not found`
      }
      if (head.subarray(0, 4).toString('latin1') === '\x7fELF') return 'its ELF interpreter (the dynamic loader) is missing?'
      return null
    }
    case 'EACCES': {
      const found = locate(file, env, cwd)
      if (found === null) return null
      const stat = fs.statSync(found, { throwIfNoEntry: false })
      if (stat === undefined) return null
      if (stat.isDirectory()) return 'it is a directory'
      if (!stat.isFile()) return 'it is not a regular file'
      if ((stat.mode & 0o111) === 0) return 'it has no execute permission'
      return null
    }
    default:
      return null
  }
}

/**
 * Where exec would have looked: `file` itself when it has a '/', else the first PATH entry holding
 * it; a relative one from the child's working directory (`cwd`, default this process's).
 */
function locate(file: string, env: NodeJS.ProcessEnv, cwd = '.'): string | null {
  if (file.includes('/')) {
    const candidate = path.resolve(cwd, file)
    return fs.existsSync(candidate) ? candidate : null
  }
  for (const dir of ((own(env, 'PATH') as string | undefined) ?? '').split(path.delimiter)) {
    const candidate = path.resolve(cwd, dir === '' ? '.' : dir, file)
    if (fs.existsSync(candidate)) return candidate
  }
  return null
}

function firstBytes(file: string, count: number): Buffer {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, 'r')
    const buffer = Buffer.alloc(count)
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, count, 0))
  } catch {
    return Buffer.alloc(0)
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}
