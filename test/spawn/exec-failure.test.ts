// Exec failure is exact and identical on every path (API × launcher × measure): which errno, which
// exit code, which diagnostic; and the stage of a failure before exec.
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { ChildResult, ChildSpec } from '../../lib/index.js'
import { eachPath, script, tempDir, type Path } from '../helpers.js'

const dir = tempDir(t)
const noX = script(dir, 'no-x-bit', '#!/bin/sh\necho hi\n', 0o644)
const badFormat = script(dir, 'bad-format', 'this is not an executable\0\x01\x02', 0o755)
const subdir = path.join(dir, 'a-directory')
fs.mkdirSync(subdir)
const onlyInPath = path.join(dir, 'bin2')
fs.mkdirSync(onlyInPath)
script(onlyInPath, 'th-only-here', '#!/bin/sh\necho found-in-child-path\n')
const shadowDir = path.join(dir, 'bin1')
fs.mkdirSync(shadowDir)
script(shadowDir, 'th-only-here', '#!/bin/sh\necho not-executable\n', 0o644)
script(shadowDir, 'th-no-x-anywhere', '#!/bin/sh\n', 0o644)

interface Row {
  name: string
  spec: ChildSpec
  exitCode: number | null
  code: string | null
  stage?: string
  diagnostic: string | RegExp
  stdout?: string
}

const rows: Row[] = [
  { name: 'no such program on PATH', spec: { file: 'th-no-such-program-xyz' }, exitCode: 127, code: 'ENOENT', stage: 'exec', diagnostic: 'No such file or directory' },
  { name: 'no such absolute path', spec: { file: path.join(dir, 'missing') }, exitCode: 127, code: 'ENOENT', stage: 'exec', diagnostic: 'No such file or directory' },
  { name: 'no x bit', spec: { file: noX }, exitCode: 126, code: 'EACCES', stage: 'exec', diagnostic: 'Program could not be executed' },
  { name: 'bad format', spec: { file: badFormat }, exitCode: 126, code: 'ENOEXEC', stage: 'exec', diagnostic: 'Program could not be executed' },
  { name: 'a directory', spec: { file: subdir }, exitCode: 126, code: 'EACCES', stage: 'exec', diagnostic: 'Program could not be executed' },
  { name: 'child exits 127 itself', spec: { file: 'sh', args: ['-c', 'exit 127'] }, exitCode: 127, code: null, diagnostic: '' },
  { name: 'child exits 126 itself', spec: { file: 'sh', args: ['-c', 'exit 126'] }, exitCode: 126, code: null, diagnostic: '' },
  {
    name: "PATH is the child's: found only there",
    spec: { file: 'th-only-here', env: { PATH: onlyInPath } },
    exitCode: 0, code: null, diagnostic: '', stdout: 'found-in-child-path\n',
  },
  {
    name: 'PATH walk skips a non-executable match (execvp rules)',
    spec: { file: 'th-only-here', env: { PATH: `${shadowDir}:${onlyInPath}` } },
    exitCode: 0, code: null, diagnostic: '', stdout: 'found-in-child-path\n',
  },
  {
    name: 'PATH walk reports EACCES when only a non-executable match exists',
    spec: { file: 'th-no-x-anywhere', env: { PATH: `/nonexistent:${shadowDir}:${onlyInPath}` } },
    exitCode: 126, code: 'EACCES', stage: 'exec', diagnostic: 'Program could not be executed',
  },
  {
    name: 'chdir fails',
    spec: { file: 'true', cwd: path.join(dir, 'no-such-dir') },
    exitCode: 126, code: 'ENOENT', stage: 'chdir', diagnostic: /^Couldn't change directory to '.*no-such-dir': No such file or directory$/,
  },
  {
    name: 'cwd is a file',
    spec: { file: 'true', cwd: noX },
    exitCode: 126, code: 'ENOTDIR', stage: 'chdir', diagnostic: /Not a directory$/,
  },
  {
    name: 'stdout file cannot be opened',
    spec: { file: 'true', stdout: { path: path.join(dir, 'no-such-dir', 'out') } },
    exitCode: 126, code: 'ENOENT', stage: 'open', diagnostic: /^Couldn't open '.*out' for stdout: No such file or directory$/,
  },
  {
    name: 'stdin file cannot be opened',
    spec: { file: 'true', stdin: { path: path.join(dir, 'missing-input') } },
    exitCode: 126, code: 'ENOENT', stage: 'open', diagnostic: /for stdin: No such file or directory$/,
  },
  {
    name: 'a program name longer than PATH_MAX',
    spec: { file: 'x'.repeat(5000) },
    exitCode: 126, code: 'ENAMETOOLONG', stage: 'exec', diagnostic: 'Program could not be executed',
  },
  {
    name: 'relative program resolved against cwd',
    spec: { file: './th-only-here', cwd: onlyInPath },
    exitCode: 0, code: null, diagnostic: '', stdout: 'found-in-child-path\n',
  },
]

function check(t: Test, r: ChildResult, row: Row) {
  t.equal(r.exitCode, row.exitCode, 'exitCode')
  t.equal(r.signal, null, 'no signal')
  if (row.code === null) {
    t.equal(r.spawnError, null, 'spawnError null')
  } else {
    t.equal(r.spawnError?.code, row.code, 'spawnError.code')
    t.equal(r.spawnError?.stage, row.stage, 'spawnError.stage')
    t.type(r.spawnError?.errno, 'number')
    t.ok(r.spawnError!.errno > 0, 'errno set')
  }
  if (typeof row.diagnostic === 'string') t.equal(r.diagnostic, row.diagnostic, 'diagnostic')
  else t.match(r.diagnostic, row.diagnostic, 'diagnostic')
  if (row.stdout !== undefined) t.equal(r.stdout.toString(), row.stdout, 'stdout')
}

for (const row of rows) {
  t.test(row.name, async t => {
    const results: Array<[Path, ChildResult]> = []
    await eachPath(t, '', async (t, path) => {
      const { api, launcher, measure } = path
      const r = await path.run(row.spec)
      t.equal(r.launcher, launcher)
      check(t, r, row)
      // Whether there is a pid to report is the launcher's, not measure's: paths() runs the
      // unmeasured path of each API and launcher just before the measured one.
      if (measure) {
        const unmeasured = results.find(([p]) => p.api === api && p.launcher === launcher && !p.measure)![1]
        t.equal(r.pid === 0, unmeasured.pid === 0, `pid ${unmeasured.pid === 0 ? '0' : 'non-zero'}, as unmeasured`)
      }
      results.push([path, r])
    })
    // Identical observable outcome, field for field, apart from what differs by nature.
    const strip = ({ pid, launcher, durationMs, rusage, rusageSource, ...rest }: ChildResult) => rest
    const [, first] = results[0]!
    for (const [{ label }, r] of results.slice(1)) t.same(strip(r), strip(first), `${label}: every API and path reports the same`)
  })
}

t.test('an rlimit the kernel refuses is reported with stage rlimit', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'true', rlimits: { nofile: 2 ** 40 } })
  t.equal(r.launcher, 'fork')
  t.equal(r.spawnError?.stage, 'rlimit')
  t.equal(r.spawnError?.code, 'EPERM')
  t.equal(r.exitCode, 126)
  t.equal(r.diagnostic, "Couldn't set RLIMIT_NOFILE: Operation not permitted")
}, { launchers: ['auto', 'fork'] }))

t.test('the errno comes through the error channel, not from the exit code', t => eachPath(t, '', async (t, { run }) => {
  // Same exit code (126) for three different causes: only the channel can tell them apart.
  const codes = []
  for (const file of [noX, badFormat, subdir]) codes.push((await run({ file })).spawnError?.code)
  t.same(codes, ['EACCES', 'ENOEXEC', 'EACCES'])
  const own = await run({ file: 'sh', args: ['-c', 'exit 126'] })
  t.equal(own.spawnError, null)
}, { launchers: ['fork'] }))

// A start that fails has no rusage of the child's to give on the posix_spawn path: glibc reaped
// it, no wait4 here. It said rusageSource 'wait4' with every figure 0; now 'unavailable', NaN, as
// the README promises for any figure that is not the child's. The fork path reaps its failed
// child itself, and its figures are wait4's.
t.test("a failed start's rusage: wait4's on the fork path, none on posix_spawn", t => eachPath(t, '', async (t, { run, launcher, measure }) => {
  const r = await run({ file: '/nonexistent/program' })
  t.same([r.exitCode, r.spawnError?.stage], [127, 'exec'])
  if (measure) return  // the helper's report: its own rule (measure-helper.test.ts)
  if (launcher === 'posix_spawn') {
    t.equal(r.rusageSource, 'unavailable', 'posix_spawn: unavailable')
    t.ok(Number.isNaN(r.rusage.userCPUTime) && Number.isNaN(r.rusage.maxRSS), 'every figure NaN')
  } else {
    t.equal(r.rusageSource, 'wait4', 'fork: reaped here, with wait4')
  }
}))
