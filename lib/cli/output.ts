// Where a command's output file goes (`compile -o`, `bench --json/--markdown/--csv/--svg`),
// decided before any work is spent on it and decided again, by the same rules, when it is written:
//
//   -                               standard output
//   a regular file, or no file yet  replaced atomically: a temp file in the same directory, then
//                                   rename(2) over it, so a reader sees the old file or the new one
//                                   (its permission bits, ACL and extended attributes kept, and its
//                                   owner where this process may give it); a file this process may
//                                   not write is refused, as a shell's `>` refuses it, and so is one
//                                   the rename may not replace (another user's, in a sticky
//                                   directory such as /tmp)
//   a symlink                       followed, link by link; its target is replaced atomically (or
//                                   created), and the link stays a link
//   a character device, a FIFO      written directly, never replaced: /dev/null stays a device
//                                   node even for root, a FIFO's reader gets the bytes
//   /dev/stdout, /dev/fd/N, ...     a descriptor of this process: written to it directly (one
//                                   that is not open is refused)
//   /proc/<pid>/fd/N                another process's open file: written in place (a regular file
//                                   emptied first, as `>` empties it)
//   anything else                   refused, with what it is: a directory, a socket, a block device
//   out.o/, x/., x/..               refused: a name of that form is a directory's (open(2)'s
//                                   EISDIR, or ENOTDIR)
//
// A path is walked as the kernel walks it: `a/../b` needs an `a`, and with `a` a symlink it is
// the parent of the link's target, not the directory `a` is in (no textual normalisation).
//
// A check that passes can still be overtaken (the file changes between the check and the write);
// the write then follows what is there at that moment, refusing as the check would have.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { errnoText } from '../errors.js'

export type OutputTarget =
  /** Standard output or error of this process: `-`, /dev/stdout, /dev/fd/1, /proc/self/fd/2. */
  | { kind: 'stream'; fd: 1 | 2 }
  /** Another descriptor of this process (/dev/fd/N). */
  | { kind: 'descriptor'; fd: number }
  /** A character device or FIFO, opened and written in place. */
  | { kind: 'direct'; path: string }
  /**
   * A regular file, existing or not, replaced atomically; `path` is the symlinks' final target,
   * `mode` and `owner` the existing file's (null when there is none).
   */
  | { kind: 'replace'; path: string; mode: number | null; owner: { uid: number; gid: number } | null }

/** An output that cannot be written; `message` says why, without the path (the caller names it). */
export class OutputRefused extends Error {}

const MAX_LINKS = 40 // as the kernel's own limit for a path walk (ELOOP)
const S_ISVTX = 0o1000 // the sticky bit (Node's fs.constants has no name for it)

/** What writing `file` means, by the rules above; throws OutputRefused when it cannot be written. */
export function resolveOutput(file: string): OutputTarget {
  if (file === '-') {
    writableDescriptor(1)
    return { kind: 'stream', fd: 1 }
  }
  if (file === '') throw new OutputRefused('an empty file name')
  let current = unresolved(process.cwd(), file)
  for (let links = 0; ; links++) {
    namesAFile(current)
    const dir = realDirectory(current)
    current = path.join(dir, path.basename(current))
    const stat = statOf(current, fs.lstatSync)
    if (stat === null) {
      // Nothing can be made in /proc: /dev/fd/N for a descriptor that is not open, say.
      if (dir === '/proc' || dir.startsWith('/proc/')) {
        const fd = ownDescriptor(dir, current)
        throw new OutputRefused(fd === null ? 'no such file or directory (ENOENT)' : `descriptor ${fd} is not open`)
      }
      return replace(current, dir, null)
    }
    if (stat.isSymbolicLink()) {
      // /proc/<pid>/fd/N are not paths to follow but descriptors ("pipe:[1234]" is no file name).
      const fd = ownDescriptor(dir, current)
      if (fd !== null) return descriptor(fd, current)
      if (dir.startsWith('/proc/')) return inPlace(current, statOf(current, fs.statSync))
      if (links === MAX_LINKS) throw new OutputRefused('too many levels of symbolic links')
      current = unresolved(dir, fs.readlinkSync(current))
      continue
    }
    if (stat.isFile()) {
      // /proc/version, /sys/kernel/notes: no temp file can be made beside them, and they are not
      // descriptors of this process (those are written in place, above).
      if (PSEUDO_FS.some((root) => dir === root || dir.startsWith(`${root}/`))) throw new OutputRefused(`it is in ${dir.split('/', 2).join('/')}, where no file can be replaced`)
      return replace(current, dir, stat)
    }
    return inPlace(current, stat)
  }
}

/** True when `file` means this process's standard output (so the command's own report must move). */
export function isStandardOutput(target: OutputTarget): boolean {
  return target.kind === 'stream' && target.fd === 1
}

/**
 * What tells two names of one file apart, so that a command can refuse an output that is also an
 * input, or two outputs that would replace each other: the device and inode of the regular file
 * `file` names (through any symlinks), or, when there is none yet, the path an output would be
 * made at. null for what is written in place or read as it comes, which two options may share
 * (standard output, a device such as /dev/null, a FIFO).
 */
export function fileIdentity(file: string): string | null {
  if (file === '-') return null
  try {
    const stat = statOf(file, fs.statSync)
    if (stat !== null) return stat.isFile() ? `${stat.dev}:${stat.ino}` : null
    const target = resolveOutput(file)
    return target.kind === 'replace' ? `path:${target.path}` : null
  } catch (error) {
    // What cannot be looked at is refused by the check that reads or writes it.
    if (error instanceof OutputRefused) return null
    throw error
  }
}

/**
 * fileIdentity of an input: `-` is this process's standard input, which may be a regular file
 * (`< file`), and then an output of the same file would replace the source.
 */
export function inputIdentity(file: string): string | null {
  return file === '-' ? descriptorIdentity(0) : fileIdentity(file)
}

/**
 * fileIdentity of an output: `-` is this process's standard output, which may be a regular file
 * (`>> file`, `1<> file`) as /dev/stdout may, and is the same file as an input by that name too.
 */
export function outputIdentity(file: string): string | null {
  return file === '-' ? descriptorIdentity(1) : fileIdentity(file)
}

function descriptorIdentity(fd: number): string | null {
  try {
    const stat = fs.fstatSync(fd)
    return stat.isFile() ? `${stat.dev}:${stat.ino}` : null
  } catch {
    return null // closed: nothing to replace
  }
}

/** The command was interrupted (SIGINT, SIGTERM, SIGHUP) while it wrote a replacing file: the
 * file was left as it was, and no temp file is left beside it. */
export class OutputInterrupted extends Error {}

/** How a command is told to stop while it writes: its signal, and how it stops listening. */
export interface Interruption {
  readonly signal: AbortSignal
  /** Gives SIGINT, SIGTERM and SIGHUP back to their defaults, which end the command. */
  stopListening(): void
}

/**
 * Writes `data` to `file` by the rules above, deciding again from what is there now. A file
 * replaced whole is not replaced once the command has been interrupted (checked at the last
 * moment, before the rename): the command was told to stop, and the old file is kept. A write
 * that may wait as long as its reader likes (a FIFO, a terminal, a pipe, standard output) makes
 * no temp file: the signals are given back to their defaults first, so that ^C ends it there as
 * it would a shell's `>`, where JavaScript, blocked in the write, could not.
 */
export async function writeOutput(file: string, data: string | Uint8Array, interruption?: Interruption): Promise<void> {
  const target = resolveOutput(file)
  if (target.kind !== 'replace') interruption?.stopListening()
  switch (target.kind) {
    case 'stream': return writeStream(target.fd === 1 ? process.stdout : process.stderr, data)
    case 'descriptor': return writeAll(target.fd, data)
    case 'direct': {
      // No O_CREAT: the node is written, never made. A device or FIFO is not emptied; a regular
      // file (another process's open file, through /proc/<pid>/fd/N) is, as `>` empties it: else
      // what is left of its old contents past the new end would still be there.
      const fd = fs.openSync(target.path, fs.constants.O_WRONLY | fs.constants.O_NOCTTY)
      try {
        if (fs.fstatSync(fd).isFile()) fs.ftruncateSync(fd, 0)
        writeAll(fd, data)
      } finally {
        fs.closeSync(fd)
      }
      return
    }
    case 'replace': {
      // The addon, for the extended attributes, only now: main.ts imports this module, and the
      // top level answers --help and --version without a loadable addon.
      const { native } = await import('../spawn/native.js')
      return replaceAtomically(target.path, data, target.mode, target.owner, native.copyExtendedAttributes, interruption?.signal)
    }
  }
}

/** The object of `stat` when it can be written in place, else OutputRefused saying what it is. */
function inPlace(file: string, stat: fs.Stats | null): OutputTarget {
  if (stat === null) throw new OutputRefused('a link to nothing')
  if (stat.isCharacterDevice() || stat.isFIFO()) return { kind: 'direct', path: file }
  if (stat.isFile()) return { kind: 'direct', path: file } // an open file reached through /proc
  if (stat.isDirectory()) throw new OutputRefused('it is a directory')
  if (stat.isSocket()) throw new OutputRefused('it is a socket')
  if (stat.isBlockDevice()) throw new OutputRefused('it is a block device (only character devices and FIFOs are written in place)')
  throw new OutputRefused('it is not a regular file, a character device or a FIFO')
}

/**
 * A file replaced (or made) by a temp file and a rename in `dir`: the directory must take both,
 * and a file already there must be one this process may write (a rename needs only the
 * directory's permission; a file made read-only is kept, as `>` in a shell keeps it).
 */
function replace(file: string, dir: string, existing: fs.Stats | null): OutputTarget {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
  } catch (error) {
    throw new OutputRefused(`directory '${dir}': ${errnoText(error)}`)
  }
  if (existing === null) return { kind: 'replace', path: file, mode: null, owner: null }
  try {
    fs.accessSync(file, fs.constants.W_OK)
  } catch (error) {
    throw new OutputRefused(errnoText(error))
  }
  // In a sticky directory (/tmp), only the file's owner, the directory's, or a process with
  // CAP_FOWNER may rename over it: the rename would fail with EPERM after all the work.
  const uid = process.geteuid?.() ?? 0
  const directory = uid !== 0 && existing.uid !== uid ? fs.statSync(dir) : null
  if (directory !== null && (directory.mode & S_ISVTX) !== 0 && directory.uid !== uid) {
    throw new OutputRefused(`it belongs to another user in a sticky directory, so it cannot be replaced (rename: EPERM); remove it or write another name`)
  }
  return { kind: 'replace', path: file, mode: existing.mode & 0o7777, owner: { uid: existing.uid, gid: existing.gid } }
}

/**
 * `file` made absolute against `dir` as the kernel will walk it: not normalised, so that `a/..`
 * still needs an `a` (and, with `a` a symlink, leads to the parent of its target), as path.resolve
 * would not have it.
 */
function unresolved(dir: string, file: string): string {
  return path.isAbsolute(file) ? file : `${dir}/${file}`
}

/**
 * A path whose last component is a directory's by its form (`out.o/`, `x/.`, `x/..`) names no file
 * to write, as open(2) would have it: EISDIR, or ENOTDIR when what is there is no directory.
 */
function namesAFile(file: string): void {
  if (!/(^|\/)(\.|\.\.)?$/.test(file)) return
  const stat = statOf(file, fs.statSync)
  if (stat !== null && !stat.isDirectory()) throw new OutputRefused('not a directory (ENOTDIR)')
  throw new OutputRefused('it is a directory')
}

/** The real directory holding `file` (its symlinks resolved); OutputRefused when there is none. */
function realDirectory(file: string): string {
  const dir = path.dirname(file)
  let real: string
  try {
    real = fs.realpathSync.native(dir)
  } catch (error) {
    throw new OutputRefused(`directory '${dir}': ${errnoText(error)}`)
  }
  if (!fs.statSync(real).isDirectory()) throw new OutputRefused(`'${dir}' is not a directory`)
  return real
}

/** `stat(file)`; null when there is no such file, OutputRefused for any other error. */
function statOf(file: string, stat: (file: string) => fs.Stats): fs.Stats | null {
  try {
    return stat(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new OutputRefused(errnoText(error))
  }
}

/** N when `file` is /proc/<this pid>/fd/N (or a thread's), reached from /dev/stdout, /dev/fd/N. */
function ownDescriptor(dir: string, file: string): number | null {
  const m = /^\/proc\/(\d+)(?:\/task\/\d+)?\/fd$/.exec(dir)
  if (m === null || Number(m[1]) !== process.pid) return null
  const fd = Number(path.basename(file))
  return Number.isSafeInteger(fd) ? fd : null
}

function descriptor(fd: number, file: string): OutputTarget {
  givenDescriptor(fd)
  writableDescriptor(fd)
  if (fd === 1 || fd === 2) return { kind: 'stream', fd }
  // What the descriptor is must be writable in place: never rename over a file we hold open.
  inPlace(file, statOf(file, fs.statSync))
  return { kind: 'descriptor', fd }
}

/** File systems whose files are the kernel's: nothing can be made in them to rename over one. */
const PSEUDO_FS = ['/proc', '/sys']

/**
 * A descriptor of this process open for reading only (`5<file`, `/dev/stdin`, `-` with fd 1 on a
 * read-only file) is refused now, not with EBADF after the work; its access mode is in
 * /proc/self/fdinfo. Where that cannot be read, the write decides.
 */
function writableDescriptor(fd: number): void {
  const flags = descriptorFlags(fd)
  if (flags === null) return
  if ((flags & 0o3) === fs.constants.O_RDONLY) throw new OutputRefused(`descriptor ${fd} is open for reading only`)
}

/**
 * A descriptor that is this process's own plumbing, not an output it was given: an event loop's
 * epoll set, eventfd or signalfd (anon_inode:[...]), or a pipe whose reading end this process
 * holds as well and no other process holds at all (libuv's signal and wake-up pipes): what went
 * there came back to this process or nowhere (the object lost in an internal pipe, a report that
 * filled it and hung, a crash).
 */
function givenDescriptor(fd: number): void {
  if (fd <= 2) return
  let link: string
  try {
    link = fs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return // not open: the checks after this one say so
  }
  if (link.startsWith('anon_inode:')) throw new OutputRefused(`descriptor ${fd} is not a file but this process's own ${link.slice('anon_inode:'.length)}`)
  if (!link.startsWith('pipe:')) return
  for (const other of fs.readdirSync('/proc/self/fd')) {
    if (Number(other) === fd) continue // its own mode is writableDescriptor's to judge
    let same = false
    try {
      same = fs.readlinkSync(`/proc/self/fd/${other}`) === link
    } catch {
      continue
    }
    if (same && ((descriptorFlags(Number(other)) ?? fs.constants.O_WRONLY) & 0o3) === fs.constants.O_RDONLY && !heldElsewhere(link)) {
      throw new OutputRefused(`descriptor ${fd} is a pipe this process reads from itself (descriptor ${other}), one of its own`)
    }
  }
}

/**
 * Whether another process holds `link` (pipe:[inode]) open: a pipe given with both its ends
 * (Python's pass_fds=(r, w)) is still its giver's, where libuv's own pipes are this process's
 * alone (close-on-exec, so no child has them). Processes this user may not look into are not seen.
 */
function heldElsewhere(link: string): boolean {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    let fds: string[]
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return true
      } catch {}
    }
  }
  return false
}

/** A descriptor's open flags, from /proc/self/fdinfo; null where they cannot be read (it is not open). */
function descriptorFlags(fd: number): number | null {
  try {
    const flags = parseInt(/^flags:\s*([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '', 8)
    return Number.isNaN(flags) ? null : flags
  } catch {
    return null
  }
}


/** The longest file name (one path component) Linux file systems take, in bytes. */
const NAME_MAX = 255

async function replaceAtomically(
  file: string, data: string | Uint8Array, mode: number | null, owner: { uid: number; gid: number } | null,
  copyExtendedAttributes: (from: string, toFd: number) => string[], interrupted: AbortSignal | undefined,
): Promise<void> {
  // Named after the file when that fits: a name near NAME_MAX is a legal output, its temp file's
  // name must be one too.
  const suffix = `.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const named = `.${path.basename(file)}${suffix}`
  const temp = path.join(path.dirname(file), Buffer.byteLength(named) <= NAME_MAX ? named : `.tileharness${suffix}`)
  try {
    const fd = fs.openSync(temp, 'wx', 0o666)
    try {
      writeAll(fd, data)
      if (owner !== null) keepOwner(fd, owner)
      if (mode !== null) fs.fchmodSync(fd, mode) // after the chown, which may clear set-id bits
      // Its ACL and other extended attributes, as `cp --preserve=xattr` keeps them: best effort,
      // as the owner (what cannot be set, the file system refusing it, stays unset).
      if (mode !== null) copyExtendedAttributes(file, fd)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    if (interrupted !== undefined) {
      // A signal that came while the file was written (synchronously: no listener of ours could
      // run) reaches its listener now, and then the file is not replaced.
      await pollPhase()
      if (interrupted.aborted) throw new OutputInterrupted(`interrupted by ${String(interrupted.reason)}, so it was left as it was`)
    }
    fs.renameSync(temp, file)
  } catch (error) {
    // What failed is the error, never the cleanup: where the temp file cannot be removed either
    // (an append-only directory, which also refused the rename), it stays, and the reason given
    // is the rename's.
    try {
      fs.rmSync(temp, { force: true })
    } catch {}
    throw error
  }
}

/**
 * A poll phase of the loop, where libuv hands a caught signal to its listeners (its handler only
 * notes it, on a pipe the loop reads then): two check phases (setImmediate) have one between
 * them, wherever this is called from. After it, a signal that came while this process ran
 * synchronous code has reached its JavaScript listeners.
 */
export async function pollPhase(): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve))
}

/**
 * The replaced file's owner and group, where this process may give them (root may; another user
 * may give a group it belongs to), as `sed -i` keeps them: root rebuilding a user's file leaves it
 * the user's. Where it may not, the file is this process's, as any file it makes.
 */
function keepOwner(fd: number, owner: { uid: number; gid: number }): void {
  try {
    fs.fchownSync(fd, owner.uid, owner.gid)
  } catch {
    try {
      fs.fchownSync(fd, -1, owner.gid)
    } catch {
      // Neither: the file is ours, as a new one would be.
    }
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data
  for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done)
}

/** Through the stream, so a pipe is written as Node writes it; a reader that left is no failure. */
function writeStream(stream: NodeJS.WriteStream, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(data, (error) => {
      if (error && !readerWentAway(error)) {
        // The caller says what could not be written; the stream's 'error' event (main.ts), which
        // follows this callback, need not say it again.
        reportedWriteErrors.add(error)
        reject(error)
      } else {
        resolve()
      }
    })
  })
}

/**
 * A write error that means the reader went away (a closed pipe, a socket its peer reset): not the
 * writer's failure, as for a command killed by SIGPIPE in a shell that ignores it.
 */
export function readerWentAway(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'EPIPE' || code === 'ECONNRESET'
}

/** Write errors a command has taken on itself to report (writeStream's). */
export const reportedWriteErrors = new WeakSet<Error>()

/** Re-exported for the commands that have always imported it from here. */
export { errnoText }
