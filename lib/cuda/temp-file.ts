// The files a tool reads its input from. Anonymous files first: the PTX ptxas reads when the text
// is too big for one argv string ("The ptxas child" in docs/toolchain-contract.md) goes into a
// memfd the child inherits, which has no name on disk, so nothing is left behind however this
// process ends. Private temporary files where a name is needed, or where memfd_create is not
// available: the cubin nvdisasm reads ("The SASS dump (nvdisasm)"), and the PTX as the fallback.
// Each lives alone in its own mkdtemp directory (0700), is created exclusively ('wx', 0600) so
// nothing already there is ever followed or reused, and goes away with its directory; a process
// killed by SIGKILL cannot remove it. A temp file that cannot be made (no such temp root, no
// space, no permission) is a TempFileError, which the Program reports as a failed compile.

import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { errnoText, invalidValue, requireString } from '../errors.js'
import { native } from '../spawn/native.js'

export interface PrivateTempFile {
  dir: string
  path: string
}

/**
 * A private temp file could not be made: the system's failure, not a bad argument. `tempRoot` is
 * where it was to go, `file` its name there, `code` the errno's name (ENOENT, ENOSPC, EACCES, ...).
 */
export class TempFileError extends Error {
  readonly code: string
  readonly tempRoot: string
  readonly file: string

  constructor(file: string, tempRoot: string, cause: unknown) {
    super(`cannot create a temp file for ${file} in '${tempRoot}': ${errnoText(cause)}`, { cause })
    this.name = 'TempFileError'
    this.code = typeof (cause as NodeJS.ErrnoException)?.code === 'string' ? (cause as NodeJS.ErrnoException).code! : 'EIO'
    this.tempRoot = tempRoot
    this.file = file
  }
}

/** Longest base name we accept: NAME_MAX (255 bytes) minus room for the extension. */
export const MAX_BASE_NAME_BYTES = 200

/** A file name from a caller: one path component, no NUL, short enough for NAME_MAX. */
export function checkBaseName(field: string, name: unknown): string {
  requireString(field, name)
  const value = name as string
  if (value === '' || value === '.' || value === '..' || value.includes('/') || value.includes('\0')) {
    throw invalidValue(field, "must be a plain file name (no '/', not empty, '.' or '..')", value)
  }
  if (Buffer.byteLength(value) > MAX_BASE_NAME_BYTES) {
    throw invalidValue(field, `must be at most ${MAX_BASE_NAME_BYTES} bytes`)
  }
  return value
}

/**
 * Write `data` to <tempRoot>/tileharness-XXXXXX/<name>. On any failure everything created so far
 * is removed and a TempFileError says why.
 */
export function createPrivateTempFile(name: string, data: string | Uint8Array, tempRoot: string = tmpdir()): PrivateTempFile {
  checkBaseName('name', name) // a '/' or '..' would put the file outside its private directory
  let dir: string
  try {
    dir = mkdtempSync(join(tempRoot, 'tileharness-'))
  } catch (error) {
    throw new TempFileError(name, tempRoot, error)
  }
  try {
    chmodSync(dir, 0o700)
    const path = join(dir, name)
    const fd = openSync(path, 'wx', 0o600)
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
      for (let written = 0; written < bytes.byteLength; ) {
        written += writeSync(fd, bytes, written, bytes.byteLength - written)
      }
    } finally {
      closeSync(fd)
    }
    return { dir, path }
  } catch (error) {
    removePrivateTempFile({ dir, path: '' })
    throw new TempFileError(name, tempRoot, error)
  }
}

/**
 * Remove the file and its directory. Called from finally blocks, so it never throws: a failure
 * to clean up must not replace the outcome being returned.
 */
export function removePrivateTempFile(temp: PrivateTempFile): void {
  try {
    // The directory is ours alone, so whatever the tool may have left next to the file goes too.
    rmSync(temp.dir, { recursive: true, force: true })
  } catch {
    // Best effort; see above.
  }
}

/** What a tool's private temp file holds: created only when the tool runs (see withPrivateTempFile). */
export interface TempFileRequest {
  name: string
  data: string | Uint8Array
  tempRoot: string | undefined
}

/**
 * Runs `use` with the temp file `request` asks for (null: none is needed, and `use` gets null),
 * and removes it when `use` is done: on return or throw, or, when `use` returns a promise, once
 * that settles. The file outlives the child that reads it, and no longer.
 */
export function withPrivateTempFile<T>(request: TempFileRequest | null, use: (temp: PrivateTempFile | null) => T): T {
  const temp = request === null ? null : createPrivateTempFile(request.name, request.data, request.tempRoot)
  return usedThenReleased(temp, use, removePrivateTempFile)
}

/**
 * Runs `use` with a close-on-exec memfd named `name` (only a label: it is on no file system)
 * holding `data`, and closes it when `use` is done, as withPrivateTempFile does. A child reads it
 * as /dev/fd/N on the descriptor it inherits, opening it afresh (offset 0). When memfd_create
 * fails (ENOSYS on an old kernel, EPERM under a seccomp filter, ...), `use` gets null: the caller
 * takes another route.
 */
export function withAnonymousFile<T>(name: string, data: string | Uint8Array, use: (fd: number | null) => T): T {
  return usedThenReleased(anonymousFile(name, data), use, closeSync)
}

/**
 * Runs `use` with one anonymous file per entry of `files`, closed when `use` is done, as
 * withAnonymousFile does; `use` gets null, with none of them left open, when any cannot be made.
 */
export function withAnonymousFiles<T>(files: ReadonlyArray<{ name: string; data: string | Uint8Array }>, use: (fds: number[] | null) => T): T {
  const fds: number[] = []
  for (const file of files) {
    const fd = anonymousFile(file.name, file.data)
    if (fd === null) {
      for (const made of fds) closeSync(made)
      return use(null)
    }
    fds.push(fd)
  }
  return usedThenReleased(fds, use, (all) => { for (const fd of all) closeSync(fd) })
}

/** A close-on-exec memfd labelled `name` holding `data`; null when memfd_create fails. */
function anonymousFile(name: string, data: string | Uint8Array): number | null {
  try {
    return native.anonymousFile(name, typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
  } catch {
    return null
  }
}

/** `use(resource)`, then `release(resource)`: on return or throw, or once a returned promise settles. */
function usedThenReleased<R, T>(resource: R | null, use: (resource: R | null) => T, release: (resource: R) => void): T {
  let settlesLater = false
  try {
    const result = use(resource)
    if (resource !== null && result instanceof Promise) {
      settlesLater = true
      return result.finally(() => release(resource)) as T
    }
    return result
  } finally {
    if (resource !== null && !settlesLater) release(resource)
  }
}
