// The claims of SECURITY.md, one test each: no shell unless the caller asks for one; private,
// exclusive temp files that go away on every path; the child's environment exactly what the caller
// passed; no fd that is not the child's reaches it.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { commandArgv } from '../../lib/cli/bench.js'
import { dumpSass } from '../../lib/cuda/nvdisasm.js'
import { createPrivateTempFile, removePrivateTempFile } from '../../lib/cuda/temp-file.js'
import { REPO_ROOT, paths, tempDir } from '../helpers.js'
import { fuzz } from '../fuzz/budget.js'
import { baseline, childPaths } from './helpers.js'

const dir = tempDir(t, 'tileharness-security-')
const pwned = path.join(dir, 'pwned')
// Words a shell would act on: substitution, globs, operators, quotes, expansions, redirections.
const HOSTILE = [`$(touch ${pwned})`, `\`touch ${pwned}\``, `; touch ${pwned}`, `| touch ${pwned}`, `&& touch ${pwned}`, `> ${pwned}`,
  '*', '~', '$HOME', '${PATH}', "it's", '"q"', 'a b', 'tab\there', 'new\nline', '\\', '#c', '']

/** The argv a child got, NUL-separated by printf (which interprets only its format). */
const printArgs = (args: string[]): ChildSpec => ({ file: 'printf', args: ['%s\\0', ...args] })
const words = (out: Buffer) => out.toString().split('\0').slice(0, -1)

t.test('no shell: argv reaches the child verbatim, on every path', async t => {
  for (const { label, run } of paths()) {
    const r = await run(printArgs(HOSTILE))
    t.same(words(r.stdout), HOSTILE, label)
  }
  t.notOk(fs.existsSync(pwned), 'nothing a shell would have run ran')
})

t.test('no shell: a program name is never a command line', async t => {
  for (const { label, run } of paths()) {
    const r = await run({ file: `true; touch ${pwned}` })
    t.same([r.exitCode, r.spawnError?.code], [127, 'ENOENT'], `${label}: looked up as one file name`)
  }
  // A file with the x bit but no #! line: execvp would hand it to /bin/sh; the harness reports
  // ENOEXEC (so does the measuring helper).
  const script = path.join(dir, 'no-shebang')
  fs.writeFileSync(script, `touch ${pwned}\n`, { mode: 0o755 })
  for (const { label, run } of paths()) {
    const r = await run({ file: script })
    t.same([r.exitCode, r.spawnError?.code], [126, 'ENOEXEC'], `${label}: ENOEXEC, not /bin/sh`)
  }
  t.notOk(fs.existsSync(pwned), 'the script never ran')
})

t.test('no shell in the layers above: run, bench, the CUDA adapters', async t => {
  const cli = spawnChildSync({ file: process.execPath, args: [path.join(REPO_ROOT, 'dist/cli/main.js'), 'run', '--', 'printf', '%s\\0', ...HOSTILE], timeout: 60000 })
  t.same(words(cli.stdout), HOSTILE, 'tileharness run passes its argv through')
  t.same(commandArgv(`printf %s $(touch ${pwned})`, false), ['printf', '%s', '$(touch', `${pwned})`], 'tileharness bench splits without expanding')
  t.same(commandArgv('true', true), ['sh', '-c', 'true'], 'bench runs sh -c only with --shell, which the caller asks for')
  const dump = dumpSass(Buffer.from('cubin'), { command: `printf %s\\\\0 $(touch ${pwned}) ';' '*'`, tempRoot: dir })
  t.same(words(Buffer.from(dump.sass)).slice(0, 4), ['$(touch', `${pwned})`, ';', '*'], 'dumpSass: the command string is split, nothing expanded')
  t.notOk(fs.existsSync(pwned), 'nothing ran')
  // The source holds no other way to a shell: no child_process, and 'sh' in an argv only where
  // bench's --shell puts it.
  const sources = fs.readdirSync(path.join(REPO_ROOT, 'lib'), { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))
  const hits = sources.flatMap(f => fs.readFileSync(path.join(REPO_ROOT, 'lib', f), 'utf8').split('\n')
    .map((line, i) => [`lib/${f}:${i + 1}`, line] as const)
    .filter(([, line]) => /child_process|['"](\/bin\/)?sh['"]|\bshell:\s*true|execSync|\bexecvp\b/.test(line) && !/^\s*(\/\/|\*)/.test(line)))
  t.same(hits.map(([at]) => at.replace(/:\d+$/, '')), ['lib/cli/bench.ts'], `only bench's --shell: ${JSON.stringify(hits)}`)
})

t.test('temp files: exclusive, 0600, in a private 0700 directory, removed', async t => {
  const temp = createPrivateTempFile('kernel.cubin', Buffer.from('data'), dir)
  t.equal(fs.statSync(temp.dir).mode & 0o777, 0o700, 'directory 0700')
  t.equal(fs.statSync(temp.path).mode & 0o777, 0o600, 'file 0600')
  t.same(fs.readdirSync(temp.dir), ['kernel.cubin'], 'alone in it')
  removePrivateTempFile(temp)
  t.notOk(fs.existsSync(temp.dir), 'removed with its directory')

  // A name planted in the directory before the open (a symlink to a file worth overwriting) is
  // not followed: the open is O_EXCL, fails, and the directory goes.
  const victim = path.join(dir, 'victim')
  fs.writeFileSync(victim, 'precious')
  const planted = fs.mkdtempSync(path.join(dir, 'planted-'))
  fs.symlinkSync(victim, path.join(planted, 'kernel.cubin'))
  const opened: Array<[string, unknown, unknown]> = []
  const { createPrivateTempFile: create } = await t.mockImport<typeof import('../../lib/cuda/temp-file.js')>('../../lib/cuda/temp-file.js', {
    'node:fs': { ...fs, mkdtempSync: () => planted, openSync: (p: string, flags: unknown, mode: unknown) => (opened.push([p, flags, mode]), fs.openSync(p, flags as string, mode as number)) },
  })
  t.throws(() => create('kernel.cubin', Buffer.from('evil'), dir), { code: 'EEXIST' }, 'EEXIST: the planted symlink is not followed')
  t.same(opened, [[path.join(planted, 'kernel.cubin'), 'wx', 0o600]], "opened with 'wx' (O_CREAT|O_EXCL) and 0600")
  t.equal(fs.readFileSync(victim, 'utf8'), 'precious', 'the symlink target is untouched')
  t.notOk(fs.existsSync(planted), 'the directory is removed on the failure path too')

  // A write that fails half-way (ENOSPC, say) removes what was made.
  let made = ''
  const { createPrivateTempFile: failing } = await t.mockImport<typeof import('../../lib/cuda/temp-file.js')>('../../lib/cuda/temp-file.js', {
    'node:fs': {
      ...fs,
      mkdtempSync: (prefix: string) => (made = fs.mkdtempSync(prefix)),
      writeSync: () => { throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }) },
    },
  })
  t.throws(() => failing('kernel.cubin', Buffer.from('data'), dir), { code: 'ENOSPC' })
  t.ok(made !== '' && !fs.existsSync(made), 'a failed write leaves nothing behind')
  // The harness itself (lib/spawn, native/) makes no temp files at all.
  for (const f of ['lib/spawn/normalize.ts', 'lib/spawn/sync.ts', 'lib/spawn/async.ts', 'native/launcher.cc', 'native/waiter.cc', 'native/exec-helper.c']) {
    t.notMatch(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8'), /mkdtemp|mkstemp|tmpfile|tmpdir|\/tmp\//, `${f}: no temp files`)
  }
})

/** The child's whole environment, as env -0 prints it. */
const childEnv = (out: Buffer) => out.toString().split('\0').slice(0, -1).sort()

t.test('environment: exactly what the caller passed, nothing added', async t => {
  const name = fc.oneof(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/), fc.constantFrom('a.b', 'é', '1X', 'LD_PRELOAD', 'PATH', 'NODE_OPTIONS', '-'))
  const value = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 16 }), fc.string({ unit: fc.constantFrom('=', '\n', ' ', '$', "'", 'é', 'a'), maxLength: 16 }))
    .filter(v => !v.includes('\0'))
  const runs = paths().map(({ label, run }): [string, (spec: ChildSpec) => Promise<Buffer>] => [label, async spec => (await run(spec)).stdout])
  await fuzz(t, 'random environments arrive exactly', fc.asyncProperty(fc.dictionary(name, value, { maxKeys: 6 }), fc.constantFrom(...runs), async (env, [label, run]) => {
    const got = childEnv(await run({ file: '/usr/bin/env', args: ['-0'], env }))
    const want = Object.entries(env).map(([k, v]) => `${k}=${v}`).sort()
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${label}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`)
  }), 100)
  for (const [label, run] of runs) {
    t.same(childEnv(await run({ file: '/usr/bin/env', args: ['-0'], env: {} })), [], `${label}: an empty environment is empty`)
    t.same(childEnv(await run({ file: '/usr/bin/env', args: ['-0'], env: { A: '1', B: undefined } })), ['A=1'], `${label}: undefined values are left out`)
    const inherited = Object.entries(process.env).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`).sort()
    t.same(childEnv(await run({ file: '/usr/bin/env', args: ['-0'] })), inherited, `${label}: no env given: this process's, as it is`)
  }
})

t.test("fds: none that are not the child's reach it", async t => {
  // Fds 5-9 open in the parent WITHOUT close-on-exec (what Node never does on its own, what an
  // addon or a parent process might): a node child started that way spawns through every path.
  const code = `
    ${childPaths()}
    ;(async () => {
      const out = {}
      for (const path of PATHS) {
        const r = await runPath(path, { file: 'sh', args: ['-c', 'ls /proc/$$/fd'], input: 'x' })
        out[path.label] = r.stdout.toString().trim().split('\\n')
      }
      console.log(JSON.stringify(out))
    })()
  `
  const before = baseline()
  const r = spawnChildSync({
    file: 'sh', args: ['-c', 'exec 5</dev/null 6>/dev/null 7</dev/null 8>/dev/null 9</dev/null; ls /proc/$$/fd >&2; exec "$0" -e "$1"', process.execPath, code],
    cwd: REPO_ROOT, timeout: 60000,
  })
  const held = r.stderr.toString().trim().split('\n')
  t.ok(['5', '6', '7', '8', '9'].every(fd => held.includes(fd)), `precondition: the node child holds inheritable fds 5-9 (${held.join(' ')})`)
  const lists = JSON.parse(r.stdout.toString()) as Record<string, string[]>
  t.equal(Object.keys(lists).length, paths().length)
  for (const [label, fds] of Object.entries(lists)) t.same(fds, ['0', '1', '2'], `${label}: only 0-2`)

  // Children started while other children's pipes are open do not get those pipes: 24 at once,
  // three on each async path.
  const asyncPaths = paths({ apis: ['async', 'start'] })
  const all = await Promise.all(Array.from({ length: 24 }, (_, i) => asyncPaths[i % asyncPaths.length]!.run({
    file: 'sh', args: ['-c', 'sleep 0.1; ls /proc/$$/fd'], input: 'x',
  })))
  t.ok(all.every(c => c.stdout.toString() === '0\n1\n2\n'), '24 concurrent children, each with only 0-2')
  await before.check(t)
})
