// The child starts clean: only fds 0-2, every signal at its default disposition, an empty mask.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { APIS, LAUNCHERS, REPO_ROOT, tempDir } from '../helpers.js'

const dir = tempDir(t)
const so = path.join(dir, 'leak-fd.so')
const built = spawnChildSync({ file: 'cc', args: ['-shared', '-fPIC', '-o', so, path.join(REPO_ROOT, 'test/fixtures/leak-fd.c')] })
if (built.exitCode !== 0) throw new Error(`cc failed: ${built.stderr}`)
try {
  process.dlopen({ exports: {} } as NodeJS.Module, so)
} catch {
  // Expected: not a Node addon. Its constructor has run.
}

for (const [api, run] of APIS) t.test(`${api}: an inheritable fd in the parent does not reach the child`, async t => {
  const flags = fs.readFileSync('/proc/self/fdinfo/50', 'utf8')
  const octal = /flags:\s*([0-7]+)/.exec(flags)![1]
  t.equal(parseInt(octal, 8) & 0o2000000, 0, 'precondition: parent fd 50 is not close-on-exec')
  for (const launcher of LAUNCHERS) {
    for (const extra of [{}, { stdout: 'pipe' as const, input: 'x' }, { cwd: dir, stderr: 'stdout' as const }]) {
      const r = await run({ file: 'sh', args: ['-c', 'ls /proc/$$/fd; true'], launcher, ...extra })
      t.same(r.stdout.toString().trim().split('\n'), ['0', '1', '2'], `${launcher} ${JSON.stringify(extra)}: only 0-2`)
    }
  }
})

function sigLine(status: string, field: string): bigint {
  return BigInt('0x' + new RegExp(`^${field}:\\s*([0-9a-f]+)`, 'm').exec(status)![1])
}

for (const [api, run] of APIS) t.test(`${api}: signals start at their defaults with an empty mask`, async t => {
  const parent = fs.readFileSync('/proc/self/status', 'utf8')
  t.not(sigLine(parent, 'SigIgn') & (1n << 12n), 0n, 'precondition: Node ignores SIGPIPE in the parent')
  for (const launcher of LAUNCHERS) {
    for (const extra of [{}, { setsid: true }]) {
      if (launcher === 'posix_spawn' && 'setsid' in extra) continue
      const r = await run({ file: 'cat', args: ['/proc/self/status'], launcher, ...extra })
      const status = r.stdout.toString()
      t.equal(sigLine(status, 'SigIgn'), 0n, `${launcher}: nothing ignored (SIGPIPE and glibc's internal 32/33 included)`)
      t.equal(sigLine(status, 'SigBlk'), 0n, `${launcher}: empty signal mask`)
      t.equal(sigLine(status, 'SigCgt'), 0n, `${launcher}: nothing caught`)
    }
  }
  // A child that writes to a closed pipe dies of SIGPIPE (status 141 in the shell), as it would
  // from a shell; with SIGPIPE ignored it would see EPIPE and exit 1 instead.
  for (const launcher of LAUNCHERS) {
    const r = await run({ file: 'sh', args: ['-c', '(yes; echo "yes exited $?" >&2) | head -c 1 >/dev/null'], launcher, timeout: 10000 })
    t.equal(r.stderr.toString(), 'yes exited 141\n', `${launcher}: SIGPIPE kills the writer`)
  }
})

for (const [api, run] of APIS) t.test(`${api}: environment: exactly what was given, or inherited`, async t => {
  for (const launcher of LAUNCHERS) {
    const given = await run({ file: '/usr/bin/env', env: { A: '1', B: 'two words', EMPTY: '' }, launcher })
    t.same(given.stdout.toString().trim().split('\n').sort(), ['A=1', 'B=two words', 'EMPTY='], `${launcher}: only the given variables`)
    const none = await run({ file: '/usr/bin/env', env: {}, launcher })
    t.equal(none.stdout.toString(), '', `${launcher}: an empty environment`)
    process.env.TILEHARNESS_PROBE = 'inherited value'
    const inherited = await run({ file: '/usr/bin/env', launcher })
    t.match(inherited.stdout.toString(), /^TILEHARNESS_PROBE=inherited value$/m, `${launcher}: process.env inherited, changes included`)
    delete process.env.TILEHARNESS_PROBE
    const argv0 = await run({ file: 'sh', argv0: 'custom-name', args: ['-c', 'echo $0'], launcher })
    t.equal(argv0.stdout.toString(), 'custom-name\n', `${launcher}: argv0`)
    const cwd = await run({ file: 'pwd', cwd: dir, launcher })
    t.equal(cwd.stdout.toString().trim(), fs.realpathSync(dir), `${launcher}: cwd`)
  }
})

for (const [api, run] of APIS) t.test(`${api}: rlimits reach the child`, async t => {
  const r = await run({
    file: 'sh', args: ['-c', 'ulimit -Sn; ulimit -Hn; ulimit -St; ulimit -Sc'],
    rlimits: { nofile: { soft: 64, hard: 128 }, cpu: 30, core: 'unlimited' },
  })
  t.equal(r.launcher, 'fork', "'auto' takes the fork path for rlimits")
  t.same(r.stdout.toString().trim().split('\n'), ['64', '128', '30', 'unlimited'])
})
