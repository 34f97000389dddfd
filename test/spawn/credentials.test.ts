// uid, gid, groups and umask through every path they apply to (API × 'auto'/fork × measure;
// posix_spawn cannot set them, and a spec that forces it is a TypeError: validation.test.ts).
// As root, the child drops to nobody and `id` prints what was asked; as nobody (a node child run
// through setpriv), asking for root's ids fails with the stage and EPERM.
import fs from 'node:fs'
import t from 'tap'
import type { ChildSpec } from '../../lib/index.js'
import { eachPath, paths } from '../helpers.js'
import { PACKAGE, childPaths, runNodeScript, stageForNobody, type Staged } from '../reliability/helpers.js'

const NOBODY = 65534
const PATH_AXES = { launchers: ['auto', 'fork'] as Array<'auto' | 'fork'> }
const PROBE = 'id -u; id -g; id -G; umask'
// This process's umask, which a child not given one inherits.
const UMASK = /^Umask:\s*(\d+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]!

// [spec, what the probe prints: uid, gid, groups, umask]. With a uid or gid but no groups the
// supplementary groups are cleared (as Node's uid/gid, through libuv, clear them).
const rows: Array<[string, Partial<ChildSpec>, string]> = [
  ['uid and gid: nobody, no supplementary groups left', { uid: NOBODY, gid: NOBODY }, `${NOBODY}\n${NOBODY}\n${NOBODY}\n${UMASK}`],
  ['uid, gid and groups', { uid: NOBODY, gid: NOBODY, groups: [NOBODY, 100] }, `${NOBODY}\n${NOBODY}\n${NOBODY} 100\n${UMASK}`],
  ['gid alone: root with group nobody, groups cleared', { gid: NOBODY }, `0\n${NOBODY}\n${NOBODY}\n${UMASK}`],
  ['uid alone: groups cleared', { uid: NOBODY }, `${NOBODY}\n0\n0\n${UMASK}`],
  ['groups alone', { groups: [1, 2] }, `0\n0\n0 1 2\n${UMASK}`],
  ['no groups at all', { uid: NOBODY, gid: NOBODY, groups: [] }, `${NOBODY}\n${NOBODY}\n${NOBODY}\n${UMASK}`],
  ['umask', { umask: 0o027 }, '0\n0\n0\n0027'],
  ['umask 0', { umask: 0 }, '0\n0\n0\n0000'],
  ['umask with a new user', { uid: NOBODY, gid: NOBODY, umask: 0o077 }, `${NOBODY}\n${NOBODY}\n${NOBODY}\n0077`],
]

const notRoot = process.getuid?.() !== 0 && 'not running as root: cannot change to another user'
t.test('as root, the child gets the ids and umask asked for', { skip: notRoot }, async t => {
  for (const [name, extra, want] of rows) {
    await eachPath(t, name, async (t, { run }) => {
      // cwd '/': nobody may not be able to enter this checkout.
      const r = await run({ file: 'sh', args: ['-c', PROBE], cwd: '/', ...extra })
      t.equal(r.stdout.toString().trim(), want, r.stderr.toString() || r.diagnostic)
      t.equal(r.launcher, 'fork')
      t.equal(r.exitCode, 0)
    }, PATH_AXES)
  }
})

interface Run { label: string; name: string; exitCode: number | null; stage: string | null; code: string | null; message: string | null; out: string }

// What nobody asks for, and the stage it must fail at (null: allowed, its own ids).
const denied: Array<[string, Partial<ChildSpec>, string | null]> = [
  ['uid 0', { uid: 0 }, 'setuid'],
  ['gid 0', { gid: 0 }, 'setgid'],
  ['groups [0]', { groups: [0] }, 'setgroups'],
  ['uid 0 with its own gid', { uid: 0, gid: NOBODY }, 'setuid'],
  ['its own uid and gid (the groups it cannot clear are left as they are)', { uid: NOBODY, gid: NOBODY }, null],
]

const script = `
  ${childPaths(PATH_AXES)}
  require(${PACKAGE})
  ;(async () => {
    const runs = []
    for (const [name, extra] of ${JSON.stringify(denied.map(([name, extra]) => [name, extra]))}) for (const path of PATHS) {
      const r = await runPath(path, { file: 'id', args: ['-u'], cwd: '/', ...extra })
      runs.push({ label: path.label, name, exitCode: r.exitCode, stage: r.spawnError && r.spawnError.stage, code: r.spawnError && r.spawnError.code,
        message: r.spawnError && r.spawnError.message, out: r.stdout.toString().trim() })
    }
    console.log(JSON.stringify(runs))
  })()
`

const nobody = stageForNobody(t)
t.test('as nobody, root\'s ids are refused: EPERM, with the stage that refused', { skip: typeof nobody === 'string' ? nobody : false }, async t => {
  const runs = runNodeScript<Run[]>(script, {}, nobody as Staged)
  t.equal(runs.length, denied.length * paths(PATH_AXES).length)
  for (const r of runs) {
    const stage = denied.find(([name]) => name === r.name)![2]
    const label = `${r.name} (${r.label})`
    if (stage === null) {
      t.same([r.exitCode, r.stage, r.out], [0, null, String(NOBODY)], label)
    } else {
      t.same([r.exitCode, r.stage, r.code], [126, stage, 'EPERM'], label)
      t.match(r.message, /^Couldn't (change to uid 0|change to gid 0|set the supplementary groups to \[0\]): Operation not permitted$/, label)
    }
  }
})

// The measuring helper is given the groups on its command line: 30,000 gids of six digits are
// over 200 KB, past the kernel's limit on one argument string (128 KiB), and its exec failed with
// E2BIG, said to be the program's, where the unmeasured child ran. They now go in pieces.
t.test('measured: as many supplementary groups as unmeasured', { skip: notRoot }, async t => {
  const groups = Array.from({ length: 30000 }, (_, i) => 100000 + i)
  await eachPath(t, '', async (t, { run }) => {
    const r = await run({ file: 'id', args: ['-G'], groups })
    t.same([r.exitCode, r.spawnError], [0, null], 'ran')
    // id -G: the effective gid, then the supplementary groups.
    const got = r.stdout.toString().trim().split(/\s+/).map(Number).filter((gid) => gid >= 100000)
    t.same([got.length, got[0], got.at(-1)], [30000, 100000, 129999], 'with every group')
  }, { launchers: ['auto'] })
})

t.test("measured: the groups go to the helper in -G pieces it adds up", async t => {
  const { normalizeSpec } = await import('../../lib/spawn/normalize.js')
  const pieces = (groups: number[]) => {
    const argv = normalizeSpec({ file: 'true', measure: true, groups }).native.argv
    return argv.flatMap((word, i) => (word === '-G' ? [argv[i + 1]!] : []))
  }
  t.same(pieces([]), [''], '[]: one empty -G (no groups)')
  const many = pieces(Array.from({ length: 8193 }, (_, i) => i))
  t.same(many.map((p) => p.split(',').length), [8192, 1], '8,193 gids: two pieces')
  t.ok(many.every((p) => p.length < 128 * 1024), 'each under the kernel limit on one argument')
})
