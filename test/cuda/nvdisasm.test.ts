// dumpSass and tileiras's nvdisasm argv. nvdisasm is not installed on these machines, so the
// dump command is exercised with real programs that take one file argument (readelf, od, cat)
// and with a fake `nvdisasm` shell script standing in for the real one.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  buildNvdisasmArgv,
  dumpSass,
  dumpSassAsync,
  runPtxas,
  searchPath,
  EMPTY_DUMP_SASS_COMMAND,
  NVDISASM_SANITIZE_TAIL,
  type DumpSassOptions,
  type SassDump,
} from '../../lib/cuda/index.js'
import { DIAGNOSTIC, startChild } from '../../lib/spawn/index.js'
import { REPO_ROOT, eventually, processState, withPollutedPrototype } from '../helpers.js'
import { fakeTool, openFds, scratchDir, syntheticCubin, MINIMAL_PTX, NO_PTXAS, PTXAS } from '../fixtures/cuda/helpers.js'

const CUBIN = syntheticCubin(Buffer.from('\x01\x02SASS\x03'))
const READELF = searchPath('readelf', process.env)

/** Tables run through both entry points: they share everything but the spawn. */
const APIS: Array<[string, (cubin: Uint8Array | null, options: DumpSassOptions) => Promise<SassDump>]> = [
  ['sync', async (cubin, options) => dumpSass(cubin, options)],
  ['async', dumpSassAsync],
]

t.test('buildNvdisasmArgv: the tileiras argv, byte for byte', async (t) => {
  t.same(buildNvdisasmArgv(), ['nvdisasm', '-c', '-uumn'])
  t.same(buildNvdisasmArgv({ sanitize: 'none' }), ['nvdisasm', '-c', '-uumn'])
  const sanitized = buildNvdisasmArgv({ sanitize: 'memcheck' })
  t.equal(sanitized.length, 4, 'the tail is one argv element')
  t.same(
    sanitized.map((a) => Buffer.from(a).toString('hex')),
    ['nvdisasm', '-c', '-uumn', ' -sanitize=memcheck -g-tmem-access-check'].map((a) => Buffer.from(a).toString('hex')),
  )
  t.equal(Buffer.byteLength(sanitized[2]), 5, '-uumn: the 5-byte flag block')
  t.equal(sanitized[3][0], ' ', 'leading space included')
  t.equal(Buffer.byteLength(sanitized[3] + '\0'), 41, 'the 41-byte rodata tail: 40 characters and its NUL')
  t.equal(sanitized[3], NVDISASM_SANITIZE_TAIL)
  t.throws(() => buildNvdisasmArgv({ sanitize: 'threadsteer' as 'memcheck' }), { code: 'ERR_INVALID_ARG_VALUE', field: 'sanitize' })
})

t.test('dumpSass with real programs that take a file argument', async (t) => {
  const tempRoot = scratchDir(t)
  const od = dumpSass(CUBIN, { command: 'od -An -tx1 -v', tempRoot })
  t.equal(od.status, 'ok')
  t.equal(od.sass, execFileSync('od', ['-An', '-tx1', '-v'], { input: CUBIN }).toString(), 'the cubin bytes reached the program')
  t.equal(od.argv.length, 5, 'the temp path appended as the last argv element')

  t.same(readdirSync(tempRoot), [], 'temp files removed')
})

t.test('dumpSass with readelf -S -W', { skip: READELF === null ? 'readelf not found on PATH' : false }, async (t) => {
  const tempRoot = scratchDir(t)
  const readelf = dumpSass(CUBIN, { command: 'readelf -S -W', tempRoot, inputBaseName: 'kernel' })
  t.equal(readelf.status, 'ok', readelf.diagnostics)
  t.match(readelf.sass, /\.text\s+PROGBITS/, "readelf read the sections of the cubin we wrote")
  t.match(readelf.argv.at(-1), /\/tileharness-[^/]+\/kernel\.cubin$/, 'named from inputBaseName')

  const broken = dumpSass(Buffer.from('not an ELF file'), { command: 'readelf -S -W', tempRoot })
  t.equal(broken.status, 'failed', 'a failing dump command is a compile failure')
  t.equal(broken.exitCode, 1)
  t.match(broken.diagnostics, /^readelf: Error: /, "its stderr, verbatim")
  t.equal(broken.sass, '', 'no partial dump')
  t.same(readdirSync(tempRoot), [], 'temp files removed')
})

t.test('dumpSass of a real ptxas cubin, same as readelf run on the file directly', { skip: READELF === null ? 'readelf not found on PATH' : PTXAS === null ? NO_PTXAS : false }, async (t) => {
  const dir = scratchDir(t)
  const compiled = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100' })
  t.equal(compiled.status, 'ok')
  const file = join(dir, 'k.cubin')
  writeFileSync(file, compiled.cubin!)
  const run = dumpSass(compiled.cubin, { command: 'readelf -S -W', tempRoot: dir })
  t.equal(run.sass, execFileSync('readelf', ['-S', '-W', file], { stdio: ['ignore', 'pipe', 'ignore'] }).toString())
  t.match(run.sass, /\.text\.k\s+PROGBITS/)
})

t.test('dumpSass with a fake nvdisasm (stand-in: nvdisasm is not installed)', async (t) => {
  const dir = scratchDir(t)
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  // Reports how it was called and what it found at the path it was given.
  fakeTool(bin, 'nvdisasm', [
    'for last; do :; done',
    'echo "argc=$# flags=$1 $2"',
    'echo "path=$last"',
    'echo "dir-mode=$(stat -c %a "$(dirname "$last")") file-mode=$(stat -c %a "$last")"',
    'echo "bytes=$(od -An -tx1 -v "$last" | tr -d " \\n")"',
    'echo "a note on stderr" >&2',
  ].join('\n'))
  const env = { PATH: `${bin}:${process.env.PATH}` }
  const run = dumpSass(CUBIN, { env, tempRoot, inputBaseName: 'scale.tileir' })
  t.equal(run.status, 'ok')
  t.same(run.argv.slice(0, 2), ['nvdisasm', '-c'], "the contract's default command")
  const lines = Object.fromEntries(run.sass.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  t.equal(lines.argc, '2 flags=-c ' + run.argv[2])
  t.equal(lines.path, run.argv[2])
  t.match(lines.path, /^.*\/tmp\/tileharness-[^/]+\/scale\.tileir\.cubin$/)
  t.equal(lines['dir-mode'], '700 file-mode=600', 'private directory 0700, file 0600')
  t.equal(lines.bytes, CUBIN.toString('hex'), 'the cubin, byte for byte')
  t.equal(run.diagnostics, 'a note on stderr\n', 'stderr kept separately, verbatim')
  t.notOk(existsSync(run.argv[2]), 'temp file removed')
  t.same(readdirSync(tempRoot), [], 'and its directory')

  const sanitized = dumpSass(CUBIN, { env, tempRoot, command: buildNvdisasmArgv({ sanitize: 'memcheck' }).map(quote).join(' ') })
  t.match(sanitized.sass, /^argc=4 flags=-c -uumn$/m, 'a tileiras-style command survives splitCommand')
})

t.test('a cubinPath from the caller is used as is and never removed', async (t) => {
  const dir = scratchDir(t)
  const cubinPath = join(dir, 'keep me.cubin')
  writeFileSync(cubinPath, CUBIN)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  for (const command of ['cat', 'false']) {
    const run = dumpSass(null, { command, cubinPath, tempRoot })
    t.equal(run.argv.at(-1), cubinPath, `${command}: the caller's path, last`)
    t.ok(existsSync(cubinPath), `${command}: still there`)
    t.same(readdirSync(tempRoot), [], `${command}: no temp file made`)
  }
  t.equal(dumpSass(Buffer.from('other bytes'), { command: 'cat', cubinPath }).sass, CUBIN.toString('utf8'), 'a cubin given too is ignored: the path is read')
})

t.test('dump command failures, through the harness', async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  const rows: Array<[string, string, string, number | null, string, string]> = [
    ['not found', 'nvdisasm-that-is-not-installed -c', 'not-found', 127, "failed to run 'nvdisasm-that-is-not-installed': No such file or directory", ''],
    ['exit 1 with stderr', `${fakeTool(dir, 'fail', 'printf "nvdisasm fatal   : Could not open input file\\n" >&2; exit 1')} -c`, 'failed', 1, `${join(dir, 'fail')} exited with status 1`, 'nvdisasm fatal   : Could not open input file\n'],
    ['signal', fakeTool(dir, 'sig', 'kill -TERM $$'), 'signaled', null, 'Terminated', ''],
    ['timeout', fakeTool(dir, 'sleeper', 'exec sleep 30'), 'timed-out', null, DIAGNOSTIC.timedOut, ''],
  ]
  for (const [api, dump] of APIS) for (const [row, command, status, exitCode, message, diagnostics] of rows) {
    const name = `${api} ${row}`
    const run = await dump(CUBIN, { command, tempRoot, timeout: row === 'timeout' ? 300 : 0 })
    t.equal(run.status, status, `${name}: status`)
    t.equal(run.exitCode, exitCode, `${name}: exit code`)
    t.equal(run.message, message, `${name}: message`)
    t.equal(run.diagnostics, diagnostics, `${name}: stderr verbatim`)
    t.same(readdirSync(tempRoot), [], `${name}: temp file removed`)
  }
})

t.test('no temp file or fd leaks on any path, exceptions included', async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'tmp')
  mkdirSync(tempRoot)
  const sleeper = fakeTool(dir, 'sleeper', 'exec sleep 30')
  dumpSass(CUBIN, { command: 'true', tempRoot }) // warm up the addon
  const before = openFds()
  const paths: Array<[string, DumpSassOptions]> = [
    ['success', { command: 'cat' }],
    ['failure', { command: 'false' }],
    ['timeout', { command: sleeper, timeout: 200 }],
    ['not found', { command: join(dir, 'none') }],
  ]
  for (const [api, dump] of APIS) {
    for (const [name, options] of paths) {
      await dump(CUBIN, { ...options, tempRoot })
      t.same(readdirSync(tempRoot), [], `${api} ${name}`)
    }
    // The harness rejects these after our temp file exists: the exception path.
    await t.rejects(dump(CUBIN, { command: 'cat', tempRoot, env: { 'A=B': 'x' } }), TypeError)
    t.same(readdirSync(tempRoot), [], `${api}: exception from the harness`)
    await t.rejects(dump(CUBIN, { command: 'cat', tempRoot, maxBuffer: -1 }), RangeError)
    t.same(readdirSync(tempRoot), [], `${api}: another exception from the harness`)
  }
  const controller = new AbortController()
  const pending = dumpSassAsync(CUBIN, { command: sleeper, tempRoot, signal: controller.signal })
  setTimeout(() => controller.abort(), 100)
  t.equal((await pending).status, 'aborted')
  t.same(readdirSync(tempRoot), [], 'aborted: temp file removed')
  t.equal(openFds(), before, 'no fds leaked')
})

t.test('bad input', async (t) => {
  const tempRoot = scratchDir(t)
  const rows: Array<[string, unknown, unknown, string, string, string | RegExp]> = [
    ['empty command', CUBIN, { command: '' }, 'ERR_INVALID_ARG_VALUE', 'command', EMPTY_DUMP_SASS_COMMAND],
    ['blank command', CUBIN, { command: ' \t ' }, 'ERR_INVALID_ARG_VALUE', 'command', 'Please provide a valid dumpSassCommand. For example, `nvdisasm -c`.'],
    ['unterminated quote', CUBIN, { command: "nvdisasm '-c" }, 'ERR_INVALID_ARG_VALUE', 'command', /unterminated single quote/],
    ['command not a string', CUBIN, { command: ['nvdisasm'] }, 'ERR_INVALID_ARG_TYPE', 'command', /must be a string/],
    ['no cubin and no path', null, {}, 'ERR_INVALID_ARG_TYPE', 'cubin', /cubin must be/],
    ['cubin as a string', 'ELF', {}, 'ERR_INVALID_ARG_TYPE', 'cubin', /cubin must be/],
    // Each passes instanceof Uint8Array: the cubin's temp file failed as a TempFileError (EIO)
    // carrying V8's "incompatible receiver".
    ['cubin a Proxy of a Uint8Array', new Proxy(CUBIN, {}), {}, 'ERR_INVALID_ARG_TYPE', 'cubin', /cubin must be/],
    ['cubin made with its prototype', Object.create(Uint8Array.prototype), {}, 'ERR_INVALID_ARG_TYPE', 'cubin', /cubin must be/],
    ['inputBaseName with a slash', CUBIN, { inputBaseName: 'a/b' }, 'ERR_INVALID_ARG_VALUE', 'inputBaseName', /plain file name/],
    ['inputBaseName ..', CUBIN, { inputBaseName: '..' }, 'ERR_INVALID_ARG_VALUE', 'inputBaseName', /plain file name/],
    ['inputBaseName too long', CUBIN, { inputBaseName: 'x'.repeat(300) }, 'ERR_INVALID_ARG_VALUE', 'inputBaseName', /at most/],
    ['empty cubinPath', CUBIN, { cubinPath: '' }, 'ERR_INVALID_ARG_VALUE', 'cubinPath', /empty/],
    ['bad timeout', CUBIN, { timeout: 1.5 }, 'ERR_OUT_OF_RANGE', 'timeout', /timeout/],
  ]
  for (const [name, cubin, options, code, field, message] of rows) {
    t.throws(() => dumpSass(cubin as Uint8Array, { tempRoot, ...(options as DumpSassOptions) }), { code, field, message }, `sync ${name}`)
    await t.rejects(dumpSassAsync(cubin as Uint8Array, { tempRoot, ...(options as DumpSassOptions) }), { code, field, message }, `async ${name}`)
    t.same(readdirSync(tempRoot), [], `${name}: nothing created`)
  }
})

/** Quote one argv element for splitCommand (single quotes; ' itself via '\''). */
function quote(arg: string): string {
  return `'${arg.replace(/'/g, "'\\''")}'`
}

t.test('dumpSass cannot be cancelled', async (t) => {
  t.throws(() => dumpSass(CUBIN, { signal: new AbortController().signal }), { code: 'ERR_INVALID_ARG_VALUE', field: 'signal' })
})

t.test('a dump command dies with a driver killed by SIGKILL (killOnExit on the posix_spawn path)', async (t) => {
  const dir = scratchDir(t)
  const pidFile = join(dir, 'pid')
  const command = fakeTool(dir, 'slow-nvdisasm', `echo $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'\nexec sleep 100`)
  const code = `
    const { dumpSassAsync } = require(${JSON.stringify(join(REPO_ROOT, 'dist/cuda/index.js'))})
    dumpSassAsync(Buffer.from(${JSON.stringify(CUBIN.toString('base64'))}, 'base64'), { command: ${JSON.stringify(command)} })
    setInterval(() => {}, 1000)
  `
  // The killed driver leaves its private temp directory (the cubin it handed the command): in the
  // scratch directory, which the test removes, not in the machine's /tmp.
  const driver = startChild({ file: process.execPath, args: ['-e', code], env: { ...process.env, TMPDIR: dir }, timeout: 60000 })
  t.ok(await eventually(() => existsSync(pidFile), 30000), 'the dump command started')
  const pid = Number(readFileSync(pidFile, 'utf8'))
  t.teardown(() => { if (processState(pid) === 'alive') process.kill(pid, 'SIGKILL') })
  driver.kill('SIGKILL')
  t.equal((await driver.result).signal, 'SIGKILL')
  t.ok(await eventually(() => processState(pid) !== 'alive', 30000), 'the dump command got SIGKILL from the kernel')
})

t.test('options are read by their own fields: nothing inherited from a polluted Object.prototype is taken', async (t) => {
  const dir = scratchDir(t)
  const nowhere = join(dir, 'nowhere')
  // A stand-in nvdisasm that says whether MARK reached it and prints the cubin it was given.
  const nvdisasm = fakeTool(dir, 'nvdisasm', 'echo "MARK=${MARK-unset}"; for a; do last=$a; done; /bin/cat "$last"')
  t.same(await withPollutedPrototype({ sanitize: 'memcheck' }, () => buildNvdisasmArgv()).catch((error: unknown) => error), ['nvdisasm', '-c', '-uumn'], 'buildNvdisasmArgv: no inherited sanitize')
  // Each inherited field would show: an environment replaced, a bad value refused, a temp root or
  // cubin that does not exist, a dump cut short, a command that is not the one given.
  const rows: Array<[string, Record<string, unknown>, DumpSassOptions]> = [
    ['env, another environment', { env: { MARK: 'inherited' } }, { command: nvdisasm }],
    ['timeout, not a number', { timeout: 'soon' }, { command: nvdisasm }],
    ['inputBaseName, a path', { inputBaseName: '../x' }, { command: nvdisasm }],
    ['tempRoot, a missing directory', { tempRoot: nowhere }, { command: nvdisasm }],
    ['cubinPath, a missing file', { cubinPath: join(nowhere, 'k.cubin') }, { command: nvdisasm }],
    ['maxBuffer, one byte', { maxBuffer: 1 }, { command: nvdisasm }],
    ['signal, not an AbortSignal (and for dumpSass, refused)', { signal: 'stop' }, { command: nvdisasm }],
    ['command, a missing program', { command: join(nowhere, 'nvdisasm') }, { env: { PATH: dir } }],
  ]
  for (const [api, dump] of APIS) {
    const plain = await dump(CUBIN, { command: nvdisasm })
    t.match(plain, { status: 'ok', sass: /^MARK=unset\n/ }, `${api}: the plain dump`)
    for (const [row, inherited, options] of rows) {
      const run = await withPollutedPrototype(inherited, () => dump(CUBIN, options)).catch((error: unknown) => error)
      t.ok((run as SassDump).status === 'ok' && (run as SassDump).sass === plain.sass, `${api} ${row}: the dump of the plain run`, { run })
    }
  }
})
