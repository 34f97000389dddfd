// `tileharness compile -o`, as a subprocess through the harness: a regular file replaced atomically
// and only by a successful compile, symlinks followed, a character device or FIFO written in place,
// - as standard output, and what cannot be written refused before ptxas starts (or, when it changes
// while ptxas runs, at the write).
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild } from '../../lib/index.js'
import { ET_REL } from '../../lib/elf/index.js'
import { CLI_MAIN as MAIN, eventually, processState, script, tempDir } from '../helpers.js'
import { skipWithoutPtxas, PTXAS } from '../fixtures/cuda/helpers.js'
import { buildFixtureLibrary, nodeChildEnv, stageForNobody } from '../reliability/helpers.js'
import { ENV_WITHOUT_ROOTS, cli, lines, files } from './compile-helpers.js'

t.test('an existing output file is replaced only by a successful compile', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const target = path.join(dir, 'vadd.sm_100.o')
  fs.writeFileSync(target, 'previous build')
  t.equal(cli(dir, ['--host-arch', 'arm64ec']).exitCode, 5)
  t.equal(fs.readFileSync(target, 'utf8'), 'previous build', 'a failed compile leaves it alone')
  t.equal(cli(dir, []).exitCode, 0)
  t.equal(fs.readFileSync(target).readUInt16LE(16), ET_REL, 'a successful one replaces it')
  t.same(files(dir), ['vadd.sm_100.o'], 'no temp file')
})

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  t.test(`${sig} while the object is written: the output not replaced, no temp file left, status 5`, skipWithoutPtxas, async (t) => {
    // The compile's listeners were gone by the write: the signal's default ended the command
    // between writing the temp file and renaming it, and the temp file stayed beside the output.
    // A preloaded shim (test/fixtures/hold-fsync.c) holds the temp file's fsync until the signal
    // has been sent.
    const dir = tempDir(t)
    const held = path.join(tempDir(t), 'held')
    const go = `${held}.go`
    const shim = buildFixtureLibrary(tempDir(t), 'hold-fsync', ['-ldl'])
    fs.writeFileSync(path.join(dir, 'vadd.sm_100.o'), 'previous build')
    const env = { ...nodeChildEnv(), HOLD_FSYNC_HELD: held, HOLD_FSYNC_GO: go }
    env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${shim}` : shim
    const child = startChild({ file: process.execPath, args: [MAIN, 'compile'], cwd: dir, env, timeout: 60000 })
    t.ok(await eventually(() => fs.existsSync(held)), 'the object is being written')
    child.kill(sig)
    fs.writeFileSync(go, '')
    const r = await child.result
    t.same([r.exitCode, r.signal], [5, null], `status 5 (${r.stderr})`)
    t.equal(r.stderr.toString(), lines(`cannot write 'vadd.sm_100.o': interrupted by ${sig}, so it was left as it was`))
    t.equal(fs.readFileSync(path.join(dir, 'vadd.sm_100.o'), 'utf8'), 'previous build', 'the old output kept')
    t.same(files(dir), ['vadd.sm_100.o'], 'no temp file')
  })
}

t.test('^C while the object waits for a FIFO\'s reader: the command ends, as a shell\'s > would', skipWithoutPtxas, async (t) => {
  // The compile's listeners were kept through the write (for a file replaced whole, so that its
  // temp file is removed): a FIFO's open with no reader then blocked JavaScript, which could never
  // take the ^C, and only SIGKILL ended the command. A write that can wait for a reader is left to
  // the signal's default.
  const dir = tempDir(t)
  const fifo = path.join(dir, 'out.fifo')
  t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
  const child = startChild({ file: process.execPath, args: [MAIN, 'compile', '-o', fifo], cwd: dir, env: nodeChildEnv(), timeout: 60000 })
  const wchan = (): string => { try { return fs.readFileSync(`/proc/${child.pid}/wchan`, 'utf8') } catch { return '' } }
  t.ok(await eventually(() => wchan() === 'wait_for_partner'), 'the command waits for a reader')
  child.kill('SIGINT')
  const r = await child.result
  t.same([r.exitCode, r.signal, r.timedOut], [null, 'SIGINT', false], 'ended by the ^C')
  t.same(files(dir), ['out.fifo'], 'nothing else made')
})

t.test('-o: a file replaced atomically, a symlink followed, a device or FIFO written in place, - is stdout', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  t.equal(cli(dir, ['-o', 'reference.o']).exitCode, 0)
  const object = fs.readFileSync(path.join(dir, 'reference.o'))
  const at = (name: string) => path.join(dir, name)

  // A regular file: a new inode renamed over it, its permission bits kept.
  fs.writeFileSync(at('plain.o'), 'previous build', { mode: 0o640 })
  fs.chmodSync(at('plain.o'), 0o640)
  const before = fs.statSync(at('plain.o'))
  t.equal(cli(dir, ['-o', 'plain.o']).exitCode, 0)
  const after = fs.statSync(at('plain.o'))
  t.same(fs.readFileSync(at('plain.o')), object, 'plain.o: the object')
  t.not(after.ino, before.ino, 'plain.o: replaced by rename, not rewritten in place')
  t.equal(after.mode & 0o777, 0o640, 'plain.o: mode kept')
  if (process.getuid?.() === 0) {
    // Root rebuilding a user's file leaves it the user's (it had become root's, unreadable to them).
    fs.chownSync(at('plain.o'), 65534, 65534)
    t.equal(cli(dir, ['-o', 'plain.o']).exitCode, 0)
    const owned = fs.statSync(at('plain.o'))
    t.same([owned.uid, owned.gid, owned.mode & 0o777], [65534, 65534, 0o640], 'plain.o: owner, group and mode kept')
  }

  // Symlinks: followed link by link (relative, absolute, through a linked directory); the links stay.
  fs.mkdirSync(at('build'))
  fs.writeFileSync(at('build/real.o'), 'previous build')
  fs.symlinkSync('build/real.o', at('link.o'))
  fs.symlinkSync(at('link.o'), at('link-to-link.o'))
  fs.symlinkSync('build', at('build-link'))
  fs.symlinkSync('not-yet.o', at('build/dangling.o'))
  for (const [output, target] of [['link.o', 'build/real.o'], ['link-to-link.o', 'build/real.o'], ['build-link/real.o', 'build/real.o'], ['build/dangling.o', 'build/not-yet.o']]) {
    fs.writeFileSync(at('build/real.o'), 'previous build')
    const r = cli(dir, ['-o', output])
    t.equal(r.exitCode, 0, `-o ${output}: ${r.err}`)
    t.match(r.out, new RegExp(`^${output.replace('.', '\\.')}: 1 kernel for sm_100`), `-o ${output}: the summary names it as given`)
    t.same(fs.readFileSync(at(target)), object, `-o ${output}: ${target} holds the object`)
  }
  for (const link of ['link.o', 'link-to-link.o', 'build-link', 'build/dangling.o']) t.ok(fs.lstatSync(at(link)).isSymbolicLink(), `${link} is still a symlink`)

  // A character device: written, never replaced. As root, a private node for /dev/null's device
  // (the bug would replace it; /dev/null itself is never risked); otherwise /dev/null.
  const nullDevice = process.getuid?.() === 0 && spawnChildSync({ file: 'mknod', args: [at('null'), 'c', '1', '3'] }).exitCode === 0 ? at('null') : '/dev/null'
  const device = fs.statSync(nullDevice)
  const toNull = cli(dir, ['-o', nullDevice])
  t.equal(toNull.exitCode, 0, toNull.err)
  const deviceAfter = fs.lstatSync(nullDevice)
  t.ok(deviceAfter.isCharacterDevice(), `${nullDevice} is still a character device`)
  t.same([deviceAfter.ino, deviceAfter.rdev], [device.ino, device.rdev], `${nullDevice}: the same node`)

  // A FIFO: its reader gets the object.
  t.equal(spawnChildSync({ file: 'mkfifo', args: [at('fifo')] }).exitCode, 0)
  const reader = startChild({ file: 'sh', args: ['-c', 'exec cat fifo > from-fifo.o'], cwd: dir, timeout: 60000 })
  const toFifo = await new Promise<ReturnType<typeof cli>>((resolve) => setImmediate(() => resolve(cli(dir, ['-o', 'fifo']))))
  t.equal(toFifo.exitCode, 0, toFifo.err)
  t.equal((await reader.result).exitCode, 0)
  t.same(fs.readFileSync(at('from-fifo.o')), object, 'the FIFO carried the object')
  t.ok(fs.lstatSync(at('fifo')).isFIFO(), 'fifo is still a FIFO')

  // Standard output, by every name: the object alone on stdout, the summary on stderr.
  for (const output of ['-', '/dev/stdout', '/dev/fd/1', '/proc/self/fd/1']) {
    const r = cli(dir, ['-o', output])
    t.equal(r.exitCode, 0, `-o ${output}: ${r.err}`)
    t.same(r.stdout, object, `-o ${output}: the object on stdout`)
    t.match(r.err, /^standard output: 1 kernel for sm_100, cubin \d+ bytes, object \d+ bytes\n/, `-o ${output}: the summary on stderr`)
  }
  const json = cli(dir, ['-o', '-', '--json'])
  t.equal(json.exitCode, 2, '-o - --json: both would write to stdout')
  t.equal(json.err, lines('-o - and --json would both write to standard output'))
  t.same(files(dir).filter((f) => f.startsWith('.')), [], 'no temp file left anywhere')
})

t.test('-o that cannot be written: refused with what it is, status 2, before ptxas starts', async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const env = { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` }
  const at = (name: string) => path.join(dir, name)
  fs.mkdirSync(at('a-directory'))
  fs.writeFileSync(at('a-file'), '')
  fs.symlinkSync('loop-b', at('loop-a'))
  fs.symlinkSync('loop-a', at('loop-b'))
  fs.symlinkSync('nowhere/x.o', at('into-nowhere'))
  const server = net.createServer().listen(at('a-socket'))
  await new Promise((resolve) => server.once('listening', resolve))
  t.teardown(() => { server.close() })
  const rows: Array<[string, string]> = [
    ['a-directory', 'it is a directory'],
    ['.', 'it is a directory'],
    ['a-socket', 'it is a socket'],
    ['loop-a', 'too many levels of symbolic links'],
    ['into-nowhere', `directory '${at('nowhere')}': no such file or directory (ENOENT)`],
    ['nodir/x.o', `directory '${at('nodir')}': no such file or directory (ENOENT)`],
    ['a-file/x.o', `'${at('a-file')}' is not a directory`],
    // Walked as the kernel walks it, not normalised first: `nodir/..` needs a nodir (this wrote
    // ./x.o), and a name ending in /, /. or /.. is a directory's (`a-file/` replaced a-file).
    ['nodir/../x.o', `directory '${at('nodir')}/..': no such file or directory (ENOENT)`],
    ['a-file/', 'not a directory (ENOTDIR)'],
    ['new.o/', 'it is a directory'],
    ['a-directory/.', 'it is a directory'],
    ['a-directory/..', 'it is a directory'],
    // Nothing can be made in /proc: these were refused only once ptxas had run (ENOENT).
    ['/dev/fd/99', 'descriptor 99 is not open'],
    ['/proc/self/nothing.o', 'no such file or directory (ENOENT)'],
    // Files of the kernel's: no temp file beside them (ENOENT, EACCES only after ptxas had run).
    ['/proc/version', 'it is in /proc, where no file can be replaced'],
    ['/sys/kernel/notes', 'it is in /sys, where no file can be replaced'],
  ]
  if (process.getuid?.() === 0 && spawnChildSync({ file: 'mknod', args: [at('a-block-device'), 'b', '7', '0'] }).exitCode === 0) {
    rows.push(['a-block-device', 'it is a block device (only character devices and FIFOs are written in place)'])
  }
  const before = files(dir)
  for (const [output, why] of rows) {
    const r = cli(dir, ['-o', output], { env })
    t.equal(r.exitCode, 2, `-o ${output}: status 2`)
    t.equal(r.err, lines(`cannot write '${output}': ${why}`), `-o ${output}: says what it is`)
    t.equal(r.out, '', `-o ${output}: nothing on stdout`)
  }
  // A descriptor open for reading only (5<file, or stdout itself): EBADF after ptxas had run.
  const readOnly = fs.openSync(at('a-file'), 'r')
  t.teardown(() => fs.closeSync(readOnly))
  for (const [output, extra, why] of [
    ['/dev/fd/5', { fds: { 5: readOnly } }, 'descriptor 5 is open for reading only'],
    ['-', { stdout: readOnly }, 'descriptor 1 is open for reading only'],
  ] as const) {
    const r = cli(dir, ['-o', output], { env, ...extra })
    t.same([r.exitCode, r.err], [2, lines(`cannot write '${output}': ${why}`)], `-o ${output} open read-only: status 2, saying so`)
  }
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.same(files(dir), before, 'nothing made, nothing replaced')
  t.ok(fs.lstatSync(at('a-socket')).isSocket(), 'the socket is still a socket')
})

t.test('-o in a directory this user cannot write: status 2 before ptxas starts (as nobody)', async (t) => {
  const staged = stageForNobody(t)
  if (typeof staged === 'string') return t.skip(staged)
  const dir = tempDir(t)
  const tools = tempDir(t)
  fs.chmodSync(dir, 0o755) // nobody may enter, not write
  fs.chmodSync(tools, 0o777)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const env = { ...nodeChildEnv(staged), PATH: `${tools}:${process.env.PATH}` }
  const main = path.join(staged.root, 'dist/cli/main.js')
  // An existing file too: replacing it takes a temp file and a rename in the directory, even when
  // the file itself is writable.
  fs.writeFileSync(path.join(dir, 'old.o'), 'previous build', { mode: 0o666 })
  fs.chmodSync(path.join(dir, 'old.o'), 0o666)
  for (const args of [[], ['-o', 'out.o'], ['-o', path.join(dir, 'out.o')], ['-o', 'old.o']]) {
    const r = spawnChildSync({ file: staged.wrap[0], args: [...staged.wrap.slice(1), process.execPath, main, 'compile', ...args], cwd: dir, env, timeout: 60000 })
    const output = args[1] ?? 'vadd.sm_100.o'
    t.equal(r.exitCode, 2, `compile ${args.join(' ')}: status 2 (${r.stderr})`)
    t.equal(r.stderr.toString(), lines(`cannot write '${output}': directory '${dir}': permission denied (EACCES)`))
  }
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.same(files(dir), ['old.o'])
  t.equal(fs.readFileSync(path.join(dir, 'old.o'), 'utf8'), 'previous build')
})

t.test('-o a file this user may not write, in a directory it may: refused, status 2, the file kept (as nobody)', async (t) => {
  const staged = stageForNobody(t)
  if (typeof staged === 'string') return t.skip(staged)
  const dir = tempDir(t)
  const tools = tempDir(t)
  fs.chmodSync(dir, 0o777) // a rename here would succeed: only the file's own mode says no
  fs.chmodSync(tools, 0o777)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const env = { ...nodeChildEnv(staged), PATH: `${tools}:${process.env.PATH}` }
  const main = path.join(staged.root, 'dist/cli/main.js')
  for (const [name, mode] of [['read-only.o', 0o444], ['root-only.o', 0o644]] as const) {
    fs.writeFileSync(path.join(dir, name), 'previous build')
    fs.chmodSync(path.join(dir, name), mode) // owned by root: nobody may not write either
    const r = spawnChildSync({ file: staged.wrap[0], args: [...staged.wrap.slice(1), process.execPath, main, 'compile', '-o', name], cwd: dir, env, timeout: 60000 })
    t.equal(r.exitCode, 2, `-o ${name}: status 2 (${r.stderr})`)
    t.equal(r.stderr.toString(), lines(`cannot write '${name}': permission denied (EACCES)`))
    t.equal(fs.readFileSync(path.join(dir, name), 'utf8'), 'previous build', `${name}: kept`)
  }
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.same(files(dir), ['read-only.o', 'root-only.o'], 'no temp file')
})

// In a sticky directory (/tmp) the rename over another user's file fails with EPERM, though the
// file is writable: that was found only after ptxas had run (status 5).
t.test('-o another user\'s file in a sticky directory: refused, status 2, before ptxas starts (as nobody)', async (t) => {
  const staged = stageForNobody(t)
  if (typeof staged === 'string') return t.skip(staged)
  const dir = tempDir(t)
  const tools = tempDir(t)
  fs.chmodSync(dir, 0o1777)
  fs.chmodSync(tools, 0o777)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const env = { ...nodeChildEnv(staged), PATH: `${tools}:${process.env.PATH}` }
  const main = path.join(staged.root, 'dist/cli/main.js')
  fs.writeFileSync(path.join(dir, 'shared.o'), 'previous build')
  fs.chmodSync(path.join(dir, 'shared.o'), 0o666) // root's, writable by all
  const r = spawnChildSync({ file: staged.wrap[0], args: [...staged.wrap.slice(1), process.execPath, main, 'compile', '-o', 'shared.o'], cwd: dir, env, timeout: 60000 })
  t.equal(r.exitCode, 2, `status 2 (${r.stderr})`)
  t.equal(r.stderr.toString(), lines("cannot write 'shared.o': it belongs to another user in a sticky directory, so it cannot be replaced (rename: EPERM); remove it or write another name"))
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.same(files(dir), ['shared.o'], 'no temp file')
  t.equal(fs.readFileSync(path.join(dir, 'shared.o'), 'utf8'), 'previous build', 'kept')
})

t.test('-o the input itself, by any name: refused before ptxas starts, the source kept', async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const source = '.version 9.0\n.target sm_100\n.address_size 64\n'
  fs.writeFileSync(path.join(dir, 'k.ptx'), source)
  fs.symlinkSync('k.ptx', path.join(dir, 'link.ptx'))
  fs.linkSync(path.join(dir, 'k.ptx'), path.join(dir, 'hard.ptx'))
  for (const [input, output] of [['k.ptx', 'k.ptx'], ['k.ptx', './k.ptx'], ['k.ptx', 'link.ptx'], ['link.ptx', 'hard.ptx'], [path.join(dir, 'k.ptx'), 'k.ptx']]) {
    const r = cli(dir, [input, '-o', output], { env: { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` } })
    t.equal(r.exitCode, 2, `${input} -o ${output}: status 2 (${r.err})`)
    t.equal(r.err, lines(`input file '${input}' is the same as output file '${output}'`))
  }
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.equal(fs.readFileSync(path.join(dir, 'k.ptx'), 'utf8'), source, 'the source is kept')
  t.ok(fs.lstatSync(path.join(dir, 'link.ptx')).isSymbolicLink(), 'the link is still a link')
  t.same(files(dir), ['hard.ptx', 'k.ptx', 'link.ptx'], 'nothing else made')
})

// `-` reads the source from standard input, which may be the very file -o names (`- -o k.ptx <
// k.ptx`): the object replaced the source, where /dev/stdin for the same file was refused. And a
// `..` after a symlink leads to the parent of the link's target, where the source is: the textual
// normalisation took the name for another file, and the object replaced the source.
t.test('-o the input by way of stdin, or of a symlink and ..: refused, the source kept', async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  const started = path.join(tools, 'started')
  script(tools, 'ptxas', `#!/bin/sh\ntouch '${started}'\nexit 1\n`)
  const env = { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` }
  const source = '.version 9.0\n.target sm_100\n.address_size 64\n'
  fs.mkdirSync(path.join(dir, 'real/sub'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'real/k.ptx'), source)
  fs.symlinkSync('real/sub', path.join(dir, 'lnk'))
  const stdin = fs.openSync(path.join(dir, 'real/k.ptx'), 'r')
  t.teardown(() => fs.closeSync(stdin))
  for (const [input, output, extra] of [['-', 'real/k.ptx', { stdin }], ['real/k.ptx', 'lnk/../k.ptx', {}]] as const) {
    const r = cli(dir, [input, '-o', output], { env, ...extra })
    t.same([r.exitCode, r.err], [2, lines(`input file '${input}' is the same as output file '${output}'`)], `${input} -o ${output}: refused, status 2`)
  }
  t.notOk(fs.existsSync(started), 'ptxas never started')
  t.equal(fs.readFileSync(path.join(dir, 'real/k.ptx'), 'utf8'), source, 'the source is kept')
  t.same(files(dir), ['lnk', 'real'], 'nothing else made')
})

t.test('-o through a symlink and ..: written where the kernel walks to', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'real/sub'), { recursive: true })
  fs.symlinkSync('real/sub', path.join(dir, 'lnk'))
  const r = cli(dir, ['-o', 'lnk/../out.o'])
  t.equal(r.exitCode, 0, r.err)
  t.ok(fs.existsSync(path.join(dir, 'real/out.o')), 'real/out.o: the parent of the link\'s target, as `> lnk/../out.o` would write')
  t.notOk(fs.existsSync(path.join(dir, 'out.o')), 'not ./out.o')
})

// Another process's open regular file, by /proc/<pid>/fd/N: written in place, and emptied first as
// `>` empties it. It was written from its start without truncation: the object, then what was left
// of the old contents past its end, and exit 0.
t.test('-o /proc/<pid>/fd/N of a regular file: emptied, then written', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  t.equal(cli(dir, ['-o', 'reference.o']).exitCode, 0)
  const object = fs.readFileSync(path.join(dir, 'reference.o'))
  const file = path.join(dir, 'held.o')
  fs.writeFileSync(file, 'A'.repeat(object.length * 3))
  const held = fs.openSync(file, 'r+')
  t.teardown(() => fs.closeSync(held))
  const r = cli(dir, ['-o', `/proc/${process.pid}/fd/${held}`])
  t.equal(r.exitCode, 0, r.err)
  t.same(fs.readFileSync(file), object, 'the file holds the object, and nothing after it')
})

// The replacement is a new inode: it had the old file's mode, owner and group, but not its ACL or
// other extended attributes. With an ACL, the mode's group bits are the ACL's mask, so the lost
// ACL left them for the group owner alone: here the group could write where only the user nobody
// could. Now every extended attribute is copied (the ACL is system.posix_acl_access).
const noSetfacl = spawnChildSync({ file: 'sh', args: ['-c', 'command -v setfacl && command -v getfacl'] }).exitCode === 0 ? false : 'setfacl and getfacl are not installed (Debian: acl)'
t.test('-o a file with an ACL and a user.* attribute: both kept on the replacement', { skip: (skipWithoutPtxas as { skip?: string }).skip ?? noSetfacl }, async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'acl.o')
  fs.writeFileSync(file, 'previous build')
  const set = spawnChildSync({ file: 'setfacl', args: ['-m', 'u:nobody:rw', file], stderr: 'pipe' })
  if (set.exitCode !== 0) return t.skip(`this file system takes no ACL: ${set.stderr.toString().trim()}`)
  const xattr = spawnChildSync({ file: 'python3', args: ['-c', 'import os, sys; os.setxattr(sys.argv[1], "user.note", b"keep")', file], stderr: 'pipe' })
  const acl = () => spawnChildSync({ file: 'getfacl', args: ['-c', '-p', file], stdout: 'pipe' }).stdout.toString()
  const before = acl()
  t.match(before, /^user:nobody:rw-$/m, 'the ACL was set')
  const r = cli(dir, ['-o', 'acl.o'])
  t.equal(r.exitCode, 0, r.err)
  t.equal(fs.readFileSync(file).readUInt16LE(16), ET_REL, 'replaced by the object')
  t.equal(acl(), before, 'the ACL is as it was')
  if (xattr.exitCode === 0) {
    const note = spawnChildSync({ file: 'python3', args: ['-c', 'import os, sys; print(os.getxattr(sys.argv[1], "user.note").decode())', file], stdout: 'pipe' })
    t.equal(note.stdout.toString(), 'keep\n', 'user.note is as it was')
  }
  t.same(files(dir), ['acl.o'], 'no temp file')
})

t.test('-o a name at the file system\'s limit (255 bytes): written, its temp file named to fit', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  for (const name of ['y'.repeat(253) + '.o', 'é'.repeat(126) + '.o']) {
    t.equal(Buffer.byteLength(name), name.startsWith('y') ? 255 : 254)
    const r = cli(dir, ['-o', name])
    t.equal(r.exitCode, 0, `${Buffer.byteLength(name)} bytes: status 0 (${r.err})`)
    t.equal(fs.readFileSync(path.join(dir, name)).readUInt16LE(16), ET_REL, 'the object is there')
  }
  t.same(files(dir).length, 2, 'no temp file left')
})

t.test('the ptxas probe (an a/f target, --ptxas-options) is bounded by --timeout, and a ^C during it leaves no ptxas', async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  // A ptxas that never answers: it records each question's pid and waits for ever.
  script(tools, 'ptxas', `#!/bin/sh\necho $$ >> '${path.join(tools, 'pids')}'\nexec sleep 1000\n`)
  fs.writeFileSync(path.join(dir, 'k.ptx'), '.version 9.0\n.target sm_100a\n.address_size 64\n')
  const env = { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` }
  const pids = () => (fs.existsSync(path.join(tools, 'pids')) ? fs.readFileSync(path.join(tools, 'pids'), 'utf8').trim().split('\n').map(Number) : [])
  // Unbounded, the probe asks three questions at 60 s each: the 45 s here would run out first.
  for (const args of [['--gpu-name', 'sm_100a'], ['--ptxas-options', '-v']]) {
    const r = cli(dir, ['k.ptx', '-o', 'k.o', '--timeout', '300ms', ...args], { env, timeout: 45000 })
    t.equal(r.timedOut, false, `${args.join(' ')}: over long before the 60 s a question would wait unbounded`)
    t.equal(r.exitCode, 5, `${args.join(' ')}: status 5 (${r.err})`)
    t.match(r.err, /Child timed out/, 'the compile itself timed out, after the probe gave up')
  }
  t.ok(await eventually(() => pids().every(pid => processState(pid) !== 'alive')), 'every ptxas it started is gone')

  // ^C while the probe waits: the compile's own handler is not set yet, so the command dies of
  // it, and the probe's child goes with it (its death signal). (Not with this process's
  // NODE_OPTIONS: tap's hooks there catch SIGINT in JavaScript, which cannot run during the probe.)
  fs.rmSync(path.join(tools, 'pids'))
  const child = startChild({
    file: process.execPath, args: [MAIN, 'compile', 'k.ptx', '-o', 'k.o', '--ptxas-options', '-v'], cwd: dir,
    env: { ...nodeChildEnv(), PATH: `${tools}:${process.env.PATH}` }, stdout: 'ignore', stderr: 'ignore', timeout: 45000,
  })
  t.ok(await eventually(() => pids().length === 1), 'the probe asked its first question')
  const [asked] = pids()
  child.kill('SIGINT')
  t.equal((await child.result).signal, 'SIGINT', 'the command died of the ^C')
  t.ok(await eventually(() => processState(asked) !== 'alive'), 'the ptxas it was asking is gone')
  t.same(pids(), [asked], 'and no other question was asked')
  t.notOk(fs.existsSync(path.join(dir, 'k.o')), 'no output')
})

t.test('an output that changes while ptxas runs: decided again at the write; refused there, status 5', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const tools = tempDir(t)
  // ptxas itself, after making the output path a directory behind the command's back.
  script(tools, 'ptxas', `#!/bin/sh\nmkdir '${path.join(dir, 'swapped.o')}'\nexec '${PTXAS}' "$@"\n`)
  const r = cli(dir, ['-o', 'swapped.o'], { env: { ...ENV_WITHOUT_ROOTS, PATH: `${tools}:${process.env.PATH}` } })
  t.equal(r.exitCode, 5, 'the compile produced nothing usable')
  t.equal(r.err, lines("cannot write 'swapped.o': it is a directory"))
  t.equal(r.out, '')
  t.same(files(dir), ['swapped.o'], 'no temp file left')
  t.same(fs.readdirSync(path.join(dir, 'swapped.o')), [], 'nothing written into the directory')
})
