// fds: extra fds for the child (child fd → this process's open fd), through every path (API ×
// launcher × measure). The child gets exactly the fds asked for at the numbers asked for, every
// other fd above 2 still closed; a measured child's helper reports on a fd the caller did not ask
// for (its -R), so the target sees the same fds an unmeasured child does.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { finished } from 'node:stream/promises'
import { spawnChild, spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { native, rawNumbers, specNumbers } from '../../lib/spawn/native.js'
import { normalizeSpec } from '../../lib/spawn/normalize.js'
import { buildResult } from '../../lib/spawn/result.js'
import { LAUNCHERS, MEASURE, eachPath, tempDir } from '../helpers.js'
import { baseline, childPaths, nodeChildEnv } from '../reliability/helpers.js'

const parentFds = baseline()
const dir = tempDir(t)
const known = path.join(dir, 'known')
fs.writeFileSync(known, 'known content\n')

/** A file opened for the test, closed when it ends. */
function open(t: { teardown(fn: () => void): void }, file: string, flags: string): number {
  const fd = fs.openSync(file, flags)
  t.teardown(() => fs.closeSync(fd))
  return fd
}

/** Where the shell's fd n points, or 'closed'. */
const where = (fds: number[]) => ({
  file: 'sh', args: ['-c', fds.map(n => `readlink /proc/$$/fd/${n} || echo closed`).join('; ')],
}) satisfies Partial<ChildSpec>

t.test('a child writing to fd 3', t => eachPath(t, '', async (t, { run, measure }) => {
  const out = path.join(tempDir(t), 'out')
  const r = await run({ file: 'sh', args: ['-c', 'echo hi >&3'], fds: { 3: open(t, out, 'w') } })
  t.same([r.exitCode, r.spawnError], [0, null], r.stderr.toString())
  t.equal(fs.readFileSync(out, 'utf8'), 'hi\n')
  t.equal(r.rusageSource, measure ? 'helper' : 'wait4', 'measured, the helper still reports (on a fd of its own)')
}))

t.test('a child reading fd 4', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', 'cat <&4'], fds: { 4: open(t, known, 'r') } })
  t.same([r.exitCode, r.stdout.toString(), r.stderr.toString()], [0, 'known content\n', ''])
}))

t.test('a sparse mapping: the gap stays closed', t => eachPath(t, '', async (t, { run }) => {
  const d = tempDir(t)
  const [a, b] = [path.join(d, 'a'), path.join(d, 'b')]
  const r = await run({ ...where([3, 4, 5, 6]), fds: { 3: open(t, a, 'w'), 5: open(t, b, 'w') } })
  t.same(r.stdout.toString().split('\n'), [a, 'closed', b, 'closed', ''])
}))

t.test('sources that are other targets, or their own', t => eachPath(t, '', async (t, { run }) => {
  const d = tempDir(t)
  const [a, b] = [path.join(d, 'a'), path.join(d, 'b')]
  const fa = open(t, a, 'w'), fb = open(t, b, 'w')
  t.ok(fa >= 3 && fb >= 3 && fa < 1024 && fb < 1024, `precondition: ${fa} and ${fb} can be child fds`)
  // Crossed: each parent fd goes to the number the other has here (dup2 in order would lose one).
  const crossed = await run({ ...where([fa, fb]), fds: { [fa]: fb, [fb]: fa } })
  t.same(crossed.stdout.toString().split('\n'), [b, a, ''], 'crossed')
  // Onto its own number: still open after exec (a dup2 onto itself would keep close-on-exec).
  // (dash's >& takes one digit: the write goes through the fd's /proc link, open only if the fd is.)
  const same = await run({ file: 'sh', args: ['-c', `echo same > /proc/$$/fd/${fa}`], fds: { [fa]: fa } })
  t.same([same.exitCode, same.stderr.toString()], [0, ''])
  t.equal(fs.readFileSync(a, 'utf8'), 'same\n', 'an fd onto its own number')
  // One parent fd at two child fds, and this process's stdin (fd 0) at a child fd.
  const twice = await run({ ...where([3, 4, 5]), fds: { 3: fb, 4: fb, 5: 0 } })
  t.same(twice.stdout.toString().split('\n'), [b, b, fs.readlinkSync('/proc/self/fd/0'), ''])
}))

// Nothing else leaked: the child's fds are 0-2 and those asked for, plus the one `ls` opens for
// /proc/self/fd itself, which takes the lowest free number.
const leakRows: Array<[string, number[]]> = [
  ['no fds', []],
  ['fd 3', [3]],
  ['fds 3 and 7', [3, 7]],
  ['fd 5 alone', [5]],
  ['fds 3 to 6', [3, 4, 5, 6]],
  ['fd 1023', [1023]],
]

t.test('nothing else leaks into the child', async t => {
  const fd = open(t, known, 'r')
  for (const [name, targets] of leakRows) {
    await eachPath(t, name, async (t, { run }) => {
      const r = await run({ file: 'ls', args: ['/proc/self/fd'], fds: Object.fromEntries(targets.map(n => [n, fd])) })
      t.equal(r.exitCode, 0, r.stderr.toString())
      const listed = r.stdout.toString().trim().split('\n').map(Number).sort((x, y) => x - y)  // ls sorts by name
      const kept = [0, 1, 2, ...targets]
      let lsOwn = 0
      while (kept.includes(lsOwn)) lsOwn++
      t.same(listed, [...kept, lsOwn].sort((x, y) => x - y), `0-2, ${targets.join(', ') || 'nothing else'}, and ls's own ${lsOwn}`)
    })
  }
})

t.test('null and undefined are "not given"', t => eachPath(t, '', async (t, { run }) => {
  for (const fds of [null, undefined, {}, { 3: undefined }]) {
    const r = await run({ ...where([3]), fds: fds as ChildSpec['fds'] })
    t.equal(r.stdout.toString(), 'closed\n', JSON.stringify(fds) ?? 'undefined')
  }
}))

// Validated up front, before any child starts: an fd closed between the call and the launch (a
// spawnChild still opening a { path } target) is the child's start failing, stage dup2, EBADF.
const invalid: Array<[string, unknown, string, string, string]> = [
  ['a key that is not a number', { a: 0 }, 'TypeError', 'ERR_INVALID_ARG_VALUE', 'fds[a]'],
  ['a key that is not canonical', { '03': 0 }, 'TypeError', 'ERR_INVALID_ARG_VALUE', 'fds[03]'],
  ['a fractional key', { 3.5: 0 }, 'TypeError', 'ERR_INVALID_ARG_VALUE', 'fds[3.5]'],
  ['key 2: stdio is stdin/stdout/stderr\'s', { 2: 0 }, 'RangeError', 'ERR_OUT_OF_RANGE', 'fds[2]'],
  ['key 1024', { 1024: 0 }, 'RangeError', 'ERR_OUT_OF_RANGE', 'fds[1024]'],
  ['a closed fd', { 3: 987654 }, 'RangeError', 'ERR_INVALID_FD', 'fds[3]'],
  ['a negative fd', { 3: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', 'fds[3]'],
  ['a fractional fd', { 3: 1.5 }, 'RangeError', 'ERR_OUT_OF_RANGE', 'fds[3]'],
  ['an fd that is not a number', { 3: '0' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'fds[3]'],
  ['a pipe by name (not a shape fds takes)', { 3: 'pipe' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'fds[3]'],
  ['an array', [0, 1, 2, 0], 'TypeError', 'ERR_INVALID_ARG_TYPE', 'fds'],
  ['a Map', new Map([[3, 0]]), 'TypeError', 'ERR_INVALID_ARG_TYPE', 'fds'],
  ['a number', 3, 'TypeError', 'ERR_INVALID_ARG_TYPE', 'fds'],
]

t.test('invalid fds are refused before any child starts', async t => {
  for (const [name, fds, kind, code, field] of invalid) {
    await eachPath(t, name, async (t, { run }) => {
      let thrown: unknown = null
      try {
        await run({ file: 'true', fds: fds as ChildSpec['fds'] })
      } catch (e) {
        thrown = e
      }
      t.ok(thrown instanceof Error, 'refused')
      const e = thrown as Error & { code?: string; field?: string }
      t.same([e.constructor.name, e.code, e.field], [kind, code, field], e.message)
      t.ok(e.message.startsWith(field), `the message names ${field}: ${e.message}`)
    }, { launchers: ['auto'] })
  }
})

// The window itself, opened deterministically: the spec normalized (the fd checked open), the fd
// closed, then the launch every API shares.
t.test('an fd closed after the check and before the launch: stage dup2, EBADF, no child (exit code 126)', async t => {
  for (const launcher of LAUNCHERS) for (const measure of MEASURE) {
    const fd = fs.openSync(known, 'r')
    const spec = normalizeSpec({ file: 'true', fds: { 5: fd }, launcher, measure })
    fs.closeSync(fd)
    const numbers = rawNumbers()
    const r = buildResult(numbers, native.spawnSync(spec.native, specNumbers(spec.native), null, numbers), spec)
    const label = `${launcher}${measure ? ' measured' : ''}`
    t.same([r.pid, r.exitCode, r.spawnError?.stage, r.spawnError?.code], [0, 126, 'dup2', 'EBADF'], label)  // 126, as every start that fails
    t.equal(r.spawnError?.message, "Couldn't redirect fd 5: Bad file descriptor", label)
  }
})

// With a { path } target (here a FIFO nobody has opened yet) the async launch waits for its open,
// and the caller's code runs on meanwhile. A caller may close the fds it gave as soon as the call
// has returned (child_process allows it), and the next files it opens get the same numbers: the
// child wrote into those, files the caller never gave it. The fds are now the files as they were
// at the call.
t.test('async, a { path } target still opening: the fds given are the files as they were at the call', async t => {
  const dir = tempDir(t)
  for (const api of ['async', 'start']) for (const launcher of LAUNCHERS) for (const measure of MEASURE) {
    const label = `${api} ${launcher}${measure ? ' measured' : ''}`
    const fifo = path.join(dir, `fifo-${api}-${launcher}-${measure}`)
    spawnChildSync({ file: 'mkfifo', args: [fifo] })
    const file = (name: string) => path.join(dir, `${name}-${api}-${launcher}-${measure}`)
    const given = { err: fs.openSync(file('err'), 'w'), extra: fs.openSync(file('extra'), 'w') }
    const spec: ChildSpec = { file: 'sh', args: ['-c', 'echo to-stderr >&2; echo to-fd5 >&5'], stdout: { path: fifo }, stderr: given.err, fds: { 5: given.extra }, launcher, measure }
    const pending = api === 'async' ? spawnChild(spec) : startChild(spec).result
    fs.closeSync(given.err)
    fs.closeSync(given.extra)
    const later = [fs.openSync(file('later1'), 'w'), fs.openSync(file('later2'), 'w')]
    const reader = fs.createReadStream(fifo)  // the other end: the open completes, the child runs
    reader.resume()
    const r = await pending
    await finished(reader)
    for (const fd of later) fs.closeSync(fd)
    t.same([r.exitCode, r.spawnError], [0, null], label)
    t.same([fs.readFileSync(file('err'), 'utf8'), fs.readFileSync(file('extra'), 'utf8')], ['to-stderr\n', 'to-fd5\n'], `${label}: into the files given`)
    t.same([fs.readFileSync(file('later1'), 'utf8'), fs.readFileSync(file('later2'), 'utf8')], ['', ''], `${label}: not into the files opened after the call under the same numbers`)
  }
})

// Targets at the top of the fd limit: the sources were copied above every target, which a limit
// of 1024 leaves no room for when 1023 is one (F_DUPFD's EINVAL, reported as dup2's); now they go
// where no target is. A target above the limit is dup2's EBADF, before any child starts. The node
// running each case is started by bash with its fd limit set (and, in the last, an inheritable
// fd 1500 opened before the limit was lowered below it: the one fd glibc's posix_spawn file
// actions cannot name, which the child must still not get).
t.test('fd 1023 under a limit of 1024, a target above the limit, an fd above the limit', async t => {
  const file = path.join(tempDir(t), 'top')
  fs.writeFileSync(file, '')
  type Row = { label: string; spawnError: unknown; exitCode: number | null; stdout: string }
  const script = (limit: number, target: number, above = '') => {
    const code = `
      ${childPaths()}
      const fs = require('node:fs')
      ;(async () => {
        const rows = []
        for (const path of PATHS) {
          const fd = fs.openSync(${JSON.stringify(file)}, 'r')
          const r = await runPath(path, { file: 'sh', args: ['-c', 'for n in ${target} 3 1500; do readlink /proc/$$/fd/$n || echo closed; done'], fds: { ${target}: fd, 3: fd } })
          fs.closeSync(fd)
          rows.push({ label: path.label, spawnError: r.spawnError && [r.spawnError.stage, r.spawnError.code], exitCode: r.exitCode, stdout: r.stdout.toString() })
        }
        console.log(JSON.stringify(rows))
      })()`
    const r = spawnChildSync({ file: 'bash', args: ['-c', `${above} ulimit -n ${limit} && exec "$0" -e "$1"`, process.execPath, code], env: nodeChildEnv(), timeout: 60000 })
    t.equal(r.exitCode, 0, r.stderr.toString())
    return JSON.parse(r.stdout.toString()) as Row[]
  }
  for (const row of script(1024, 1023)) {
    t.same([row.spawnError, row.exitCode, row.stdout], [null, 0, `${file}\n${file}\nclosed\n`], `${row.label}: fds 1023 and 3 under a limit of 1024`)
  }
  for (const row of script(400, 500)) {
    t.same([row.spawnError, row.exitCode], [['dup2', 'EBADF'], 126], `${row.label}: fd 500 under a limit of 400 is dup2's own EBADF, no child started (was EINVAL, from the copy)`)
  }
  for (const row of script(1024, 1023, 'exec 1500</dev/null;')) {
    if (row.spawnError === null) t.same([row.exitCode, row.stdout], [0, `${file}\n${file}\nclosed\n`], `${row.label}: fd 1500, inheritable and above the limit, closed in the child`)
    else t.same([row.label.includes('posix_spawn'), row.spawnError], [true, ['spawn', 'EBADF']], `${row.label}: glibc's file actions cannot close fd 1500: refused, not leaked`)
  }
})

// One fd given to many child fds takes one copy in this process, not one per child fd: 100 child
// fds from one fd under a limit of 128 failed with EMFILE (each had its own copy), though every
// one of them was below the limit. With every number below the limit a child fd, there is no room
// for even one copy: EMFILE, where F_DUPFD's EINVAL had said "Invalid argument".
t.test('one fd given to 100 child fds under a limit of 128; to every fd from 3 to 127', async t => {
  const file = path.join(tempDir(t), 'many')
  fs.writeFileSync(file, '')
  const code = `
    ${childPaths()}
    const fs = require('node:fs')
    ;(async () => {
      const rows = []
      for (const count of [100, 125]) for (const path of PATHS) {
        const fd = fs.openSync(${JSON.stringify(file)}, 'r')
        const fds = {}
        for (let target = 3; target < 3 + count; target++) fds[target] = fd
        const r = await runPath(path, { file: 'sh', args: ['-c', 'readlink /proc/$$/fd/3; readlink /proc/$$/fd/102'], fds })
        fs.closeSync(fd)
        rows.push({ count, label: path.label, spawnError: r.spawnError && [r.spawnError.stage, r.spawnError.code], stdout: r.stdout.toString() })
      }
      console.log(JSON.stringify(rows))
    })()`
  const r = spawnChildSync({ file: 'bash', args: ['-c', 'ulimit -n 128 && exec "$0" -e "$1"', process.execPath, code], env: nodeChildEnv(), timeout: 60000 })
  t.equal(r.exitCode, 0, r.stderr.toString())
  for (const row of JSON.parse(r.stdout.toString()) as Array<{ count: number; label: string; spawnError: unknown; stdout: string }>) {
    if (row.count === 100) t.same([row.spawnError, row.stdout], [null, `${file}\n${file}\n`], `${row.label}: 100 child fds from one`)
    else t.same(row.spawnError, ['dup2', 'EMFILE'], `${row.label}: every fd from 3 to 127: no room for the copy, EMFILE`)
  }
})

t.test("this process's fds are as they were", t => parentFds.check(t))
