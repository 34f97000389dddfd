// Fault: a cwd the child cannot enter. Root enters any directory (CAP_DAC_OVERRIDE), so the
// permission cases run in a node child as nobody (setpriv); the rest (not a directory, dangling
// symlink, name too long, removed) run here. Every path (API × launcher × measure) reports stage
// 'chdir' with the errno and exit code 126.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { eachPath, paths, tempDir } from '../helpers.js'
import { baseline, childPaths, runNodeScript, stageForNobody, type Staged } from './helpers.js'

const dir = tempDir(t, 'tileharness-cwd-')
fs.chmodSync(dir, 0o711) // nobody may pass through, not list
const locked = path.join(dir, 'locked')
fs.mkdirSync(locked, { mode: 0o000 })
const behindLocked = path.join(locked, 'inner') // made while root could still write there
fs.chmodSync(locked, 0o700)
fs.mkdirSync(behindLocked, { mode: 0o755 })
fs.chmodSync(locked, 0o000)
const searchOnly = path.join(dir, 'search-only')
fs.mkdirSync(searchOnly, { mode: 0o311 })
fs.chmodSync(searchOnly, 0o311)
t.teardown(() => fs.chmodSync(locked, 0o700)) // so tempDir's removal can go inside

interface Run { label: string; exitCode: number | null; stage: string | null; code: string | null; diagnostic: string; stdout: string }

const cwds = [['mode 000', locked], ['behind a mode 000 directory', behindLocked], ['search but no read permission', searchOnly]]
const script = `
  ${childPaths()}
  ;(async () => {
    const runs = []
    for (const [name, cwd] of ${JSON.stringify(cwds)}) for (const path of PATHS) {
      const r = await runPath(path, { file: 'sh', args: ['-c', 'pwd'], cwd })
      runs.push({ label: name + ' (' + path.label + ')', exitCode: r.exitCode, stage: r.spawnError && r.spawnError.stage,
        code: r.spawnError && r.spawnError.code, diagnostic: r.diagnostic, stdout: r.stdout.toString() })
    }
    console.log(JSON.stringify(runs))
  })()
`

const nobody = stageForNobody(t)
const skip = typeof nobody === 'string' ? nobody : false
t.test('as nobody: no search permission is EACCES at chdir; search without read works', { skip }, async t => {
  const before = baseline()
  const runs = runNodeScript<Run[]>(script, {}, nobody as Staged)
  t.equal(runs.length, cwds.length * paths().length)
  for (const r of runs) {
    if (r.label.startsWith('search but no read')) {
      t.same({ exitCode: r.exitCode, stage: r.stage, stdout: r.stdout }, { exitCode: 0, stage: null, stdout: `${searchOnly}\n` }, r.label)
    } else {
      t.same({ exitCode: r.exitCode, stage: r.stage, code: r.code }, { exitCode: 126, stage: 'chdir', code: 'EACCES' }, r.label)
      t.match(r.diagnostic, /^Couldn't change directory to '.*': Permission denied$/, `${r.label}: diagnostic`)
    }
  }
  await before.check(t)
})

const file = path.join(dir, 'a-file')
fs.writeFileSync(file, '')
const dangling = path.join(dir, 'dangling')
fs.symlinkSync(path.join(dir, 'nowhere'), dangling)
const removed = path.join(dir, 'removed')

t.test('other cwds that cannot be entered', t => eachPath(t, '', async (t, { run }) => {
  const before = baseline()
  const rows: Array<[string, string, string]> = [
    ['a regular file', file, 'ENOTDIR'],
    ['a path through a regular file', path.join(file, 'x'), 'ENOTDIR'],
    ['a dangling symlink', dangling, 'ENOENT'],
    ['a name longer than NAME_MAX', path.join(dir, 'n'.repeat(300)), 'ENAMETOOLONG'],
    ['a directory removed just before', removed, 'ENOENT'],
  ]
  for (const [name, cwd, code] of rows) {
    if (cwd === removed) {
      fs.mkdirSync(removed)
      fs.rmdirSync(removed)
    }
    const r = await run({ file: 'true', cwd })
    t.same({ exitCode: r.exitCode, stage: r.spawnError?.stage, code: r.spawnError?.code }, { exitCode: 126, stage: 'chdir', code }, name)
  }
  await before.check(t)
}))
