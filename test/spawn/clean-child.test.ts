// The child starts clean: only fds 0-2, every signal at its default disposition, an empty mask; on
// every path (API × launcher × measure).
import fs from 'node:fs'
import t from 'tap'
import { type ChildSpec } from '../../lib/index.js'
import { eachPath, tempDir } from '../helpers.js'
import { buildFixtureLibrary } from '../reliability/helpers.js'

const dir = tempDir(t)
const so = buildFixtureLibrary(dir, 'leak-fd')
try {
  process.dlopen({ exports: {} } as NodeJS.Module, so)
} catch {
  // Expected: not a Node addon. Its constructor has run.
}

t.test('an inheritable fd in the parent does not reach the child', async t => {
  const flags = fs.readFileSync('/proc/self/fdinfo/50', 'utf8')
  const octal = /flags:\s*([0-7]+)/.exec(flags)![1]
  t.equal(parseInt(octal, 8) & 0o2000000, 0, 'precondition: parent fd 50 is not close-on-exec')
  await eachPath(t, '', async (t, { run }) => {
    for (const extra of [{}, { stdout: 'pipe' as const, input: 'x' }, { cwd: dir, stderr: 'stdout' as const }]) {
      const r = await run({ file: 'sh', args: ['-c', 'ls /proc/$$/fd; true'], ...extra })
      t.same(r.stdout.toString().trim().split('\n'), ['0', '1', '2'], `${JSON.stringify(extra)}: only 0-2`)
    }
  })
})

function sigLine(status: string, field: string): bigint {
  return BigInt('0x' + new RegExp(`^${field}:\\s*([0-9a-f]+)`, 'm').exec(status)![1])
}

t.test('signals start at their defaults with an empty mask', async t => {
  const parent = fs.readFileSync('/proc/self/status', 'utf8')
  t.not(sigLine(parent, 'SigIgn') & (1n << 12n), 0n, 'precondition: Node ignores SIGPIPE in the parent')
  await eachPath(t, '', async (t, { run, launcher }) => {
    for (const extra of [{}, { setsid: true }]) {
      if (launcher === 'posix_spawn' && 'setsid' in extra) continue
      const r = await run({ file: 'cat', args: ['/proc/self/status'], ...extra })
      const status = r.stdout.toString()
      const label = JSON.stringify(extra)
      t.equal(sigLine(status, 'SigIgn'), 0n, `${label}: nothing ignored (SIGPIPE and glibc's internal 32/33 included)`)
      t.equal(sigLine(status, 'SigBlk'), 0n, `${label}: empty signal mask`)
      t.equal(sigLine(status, 'SigCgt'), 0n, `${label}: nothing caught`)
    }
    // A child that writes to a closed pipe dies of SIGPIPE (status 141 in the shell), as it would
    // from a shell; with SIGPIPE ignored it would see EPIPE and exit 1 instead.
    const r = await run({ file: 'sh', args: ['-c', '(yes; echo "yes exited $?" >&2) | head -c 1 >/dev/null'], timeout: 10000 })
    t.equal(r.stderr.toString(), 'yes exited 141\n', 'SIGPIPE kills the writer')
  })
})

t.test('environment: exactly what was given, or inherited', t => eachPath(t, '', async (t, { run }) => {
  const given = await run({ file: '/usr/bin/env', env: { A: '1', B: 'two words', EMPTY: '' } })
  t.same(given.stdout.toString().trim().split('\n').sort(), ['A=1', 'B=two words', 'EMPTY='], 'only the given variables')
  const none = await run({ file: '/usr/bin/env', env: {} })
  t.equal(none.stdout.toString(), '', 'an empty environment')
  process.env.TILEHARNESS_PROBE = 'inherited value'
  const inherited = await run({ file: '/usr/bin/env' })
  t.match(inherited.stdout.toString(), /^TILEHARNESS_PROBE=inherited value$/m, 'process.env inherited, changes included')
  delete process.env.TILEHARNESS_PROBE
  const argv0 = await run({ file: 'sh', argv0: 'custom-name', args: ['-c', 'echo $0'] })
  t.equal(argv0.stdout.toString(), 'custom-name\n', 'argv0')
  const cwd = await run({ file: 'pwd', cwd: dir })
  t.equal(cwd.stdout.toString().trim(), fs.realpathSync(dir), 'cwd')
}))

// rlimits, and what the child sees of them.
const rlimitRows: Array<[ChildSpec['rlimits'], string, string[]]> = [
  [{ nofile: { soft: 64, hard: 128 }, cpu: 30, core: 'unlimited' }, 'ulimit -Sn; ulimit -Hn; ulimit -St; ulimit -Sc', ['64', '128', '30', 'unlimited']],
  // Few fds, but enough for sh.
  [{ nofile: 5 }, 'ulimit -n', ['5']],
]

for (const [rlimits, script, want] of rlimitRows) t.test(`rlimits reach the child: ${JSON.stringify(rlimits)}`, t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'sh', args: ['-c', script], rlimits })
  t.equal(r.launcher, 'fork', "'auto' takes the fork path for rlimits")
  t.same([r.exitCode, r.spawnError], [0, null], 'the child ran')
  t.same(r.stdout.toString().trim().split('\n'), want, 'the limits it sees')
}, { launchers: ['auto'] }))
