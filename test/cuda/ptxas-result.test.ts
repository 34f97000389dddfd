// How a finished ptxas child is read: the cubin locator and the contract's exit-code table, on
// synthetic harness results (no ptxas needed; the real-ptxas rows are in ptxas.test.ts).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cubinExtent, splitMergedOutput, interpretPtxasResult, decodeToolResult, ptxasChildSpec } from '../../lib/cuda/index.js'
import { DIAGNOSTIC } from '../../lib/spawn/index.js'
import { revokedProxy, withPollutedPrototype } from '../helpers.js'
import { fakeResult, scratchDir, syntheticCubin } from '../fixtures/cuda/helpers.js'

const CUBIN = syntheticCubin(Buffer.from('\x7fELF inside the payload is not a second cubin'))
const WARN = Buffer.from('ptxas warning : For profile sm_100 adjusting per thread register count of 16 to lower bound of 24\n')
const context = { argv: ['ptxas'], inputRoute: 'argv' as const }

t.test('cubinExtent: the whole object, or -1', async (t) => {
  t.equal(cubinExtent(CUBIN), CUBIN.length, 'a whole cubin')
  t.equal(cubinExtent(Buffer.concat([WARN, CUBIN]), WARN.length), CUBIN.length, 'at an offset')
  const corrupt = (edit: (b: Buffer) => void) => {
    const b = Buffer.from(CUBIN)
    edit(b)
    return cubinExtent(b)
  }
  const rows: Array<[string, number]> = [
    ['truncated by one byte', cubinExtent(CUBIN.subarray(0, CUBIN.length - 1))],
    ['only the header', cubinExtent(CUBIN.subarray(0, 64))],
    ['not ELF', corrupt((b) => b.write('XELF', 0, 'latin1'))],
    ['32-bit class', corrupt((b) => (b[4] = 1))],
    ['big-endian', corrupt((b) => (b[5] = 2))],
    ['not EM_CUDA (x86-64)', corrupt((b) => b.writeUInt16LE(62, 18))],
    ['section table past the end', corrupt((b) => b.writeBigUInt64LE(BigInt(b.length), 40))],
    ['section data past the end', corrupt((b) => b.writeBigUInt64LE(0xffffn, b.readUInt32LE(40) + 64 + 32))],
    ['huge offset', corrupt((b) => b.writeBigUInt64LE(0xffffffffffffffffn, 32))],
    // Offsets and sizes are u64s read as two halves: a high half of 1 is 4 GiB more, not nothing.
    ['a section size 4 GiB past its own', corrupt((b) => b.writeUInt32LE(1, b.readUInt32LE(40) + 64 + 36))],
    ['the program headers at 2^53', corrupt((b) => b.writeBigUInt64LE(2n ** 53n, 32))],
    ['shstrndx out of range', corrupt((b) => b.writeUInt16LE(9, 62))],
  ]
  for (const [name, extent] of rows) t.equal(extent, -1, name)
})

t.test('splitMergedOutput: the ELF found by its magic, the text around it is the diagnostic', async (t) => {
  const rows: Array<[string, Buffer, Buffer | null, string]> = [
    ['cubin only', CUBIN, CUBIN, ''],
    ['warnings before the cubin', Buffer.concat([WARN, CUBIN]), CUBIN, WARN.toString()],
    ['text before and after', Buffer.concat([WARN, CUBIN, Buffer.from('late note\n')]), CUBIN, `${WARN}late note\n`],
    ['a stray magic in the text is skipped', Buffer.concat([Buffer.from('junk \x7fELF junk\n'), CUBIN]), CUBIN, 'junk \x7fELF junk\n'],
    ['text only (a failed compile)', WARN, null, WARN.toString()],
    ['a cut-off cubin is no cubin', Buffer.concat([WARN, CUBIN.subarray(0, 100)]), null, Buffer.concat([WARN, CUBIN.subarray(0, 100)]).toString()],
    ['empty', Buffer.alloc(0), null, ''],
  ]
  for (const [name, merged, cubin, diagnostics] of rows) {
    const split = splitMergedOutput(merged)
    t.same(split.cubin, cubin, `${name}: cubin`)
    t.equal(split.diagnostics.toString(), diagnostics, `${name}: diagnostics`)
    // The same bytes in a plain Uint8Array: found by their magic all the same.
    const plain = splitMergedOutput(new Uint8Array(merged))
    t.same(plain.cubin, cubin, `${name}, as a Uint8Array: cubin`)
    t.equal(plain.diagnostics.toString(), diagnostics, `${name}, as a Uint8Array: diagnostics`)
  }
})

/**
 * `count` ELF headers 64 bytes apart that pass the header checks and share one table of `entries`
 * section headers (each an empty section, the last one past the buffer): every candidate is read
 * to its last entry before it fails.
 */
function decoys(count: number, entries: number): Buffer {
  const table = 64 * count
  const b = Buffer.alloc(table + 64 * entries)
  for (let k = 0; k < count; k++) {
    const at = 64 * k
    b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], at)
    b.writeUInt16LE(190, at + 18); b.writeUInt32LE(1, at + 20); b.writeUInt16LE(64, at + 52)
    b.writeBigUInt64LE(BigInt(table - at), at + 40); b.writeUInt16LE(64, at + 58); b.writeUInt16LE(entries, at + 60)
  }
  b.writeBigUInt64LE(1n << 52n, table + 64 * (entries - 1) + 24)
  return b
}

// Candidates read to the end of one long shared table cost candidates × entries: a hostile tool's
// megabyte held the loop 12 s. The entries read are bounded by the buffer's size; past that the
// buffer holds no cubin (a ptxas writes no such headers, so a real cubin is never given up).
// Both pass instanceof Uint8Array, and threw V8's uncoded "Method get TypedArray.prototype.byteLength
// called on incompatible receiver".
t.test('cubinExtent and splitMergedOutput refuse a look-alike of a Uint8Array by its brand', async (t) => {
  for (const [name, buffer] of [['a Proxy of a Uint8Array', new Proxy(CUBIN, {})], ['Object.create(Uint8Array.prototype)', Object.create(Uint8Array.prototype)]]) {
    t.throws(() => cubinExtent(buffer), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'buffer' }, `cubinExtent: ${name}`)
    t.throws(() => splitMergedOutput(buffer), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', field: 'buffer' }, `splitMergedOutput: ${name}`)
  }
})

t.test('splitMergedOutput reads a bounded number of table entries, whatever the candidates', async (t) => {
  const few = Buffer.concat([decoys(4, 64), CUBIN])
  t.same(splitMergedOutput(few).cubin, CUBIN, 'a cubin after a few candidates that fail is found')
  const many = Buffer.concat([decoys(4096, 4096), CUBIN])
  const split = splitMergedOutput(many)
  t.same([split.cubin, split.cubinOffset, split.diagnostics.length], [null, -1, many.length], 'past the bound (4,096 × 4,096 entries for a 512 KiB buffer), no cubin: the whole buffer is text')
  t.equal(cubinExtent(many, many.length - CUBIN.length), CUBIN.length, 'cubinExtent of one candidate has no bound')
})

t.test("decodeToolResult: the contract's exit-code table", async (t) => {
  const enoent = { stage: 'exec' as const, code: 'ENOENT', errno: 2, message: "Couldn't execute 'ptxas': No such file or directory" }
  const eacces = { stage: 'exec' as const, code: 'EACCES', errno: 13, message: "Couldn't execute 'ptxas': Permission denied" }
  const e2big = { stage: 'exec' as const, code: 'E2BIG', errno: 7, message: "Couldn't execute 'ptxas': Argument list too long" }
  const enoexec = { stage: 'exec' as const, code: 'ENOEXEC', errno: 8, message: "Couldn't execute 'ptxas': Exec format error" }
  const pipe = { stage: 'pipe' as const, code: 'EMFILE', errno: 24, message: "Couldn't create a pipe: Too many open files" }
  const rows: Array<[string, Parameters<typeof fakeResult>[0], string, string]> = [
    ['exit 0', { exitCode: 0 }, 'ok', ''],
    ['exit 1', { exitCode: 1 }, 'failed', 'th-ptxas exited with status 1'],
    ['exit 255 (every ptxas failure)', { exitCode: 255 }, 'failed', 'th-ptxas exited with status 255'],
    ['exit 125', { exitCode: 125 }, 'failed', 'th-ptxas exited with status 125'],
    ['exit 126 from a wrapper', { exitCode: 126 }, 'not-executable', DIAGNOSTIC.couldNotExecute],
    ['exit 127 from a wrapper', { exitCode: 127 }, 'not-found', DIAGNOSTIC.notFound],
    // The program, what failed and the errno's text, as `tileharness run` says it.
    ['exec ENOENT', { exitCode: 127, spawnError: enoent, diagnostic: DIAGNOSTIC.notFound }, 'not-found', "failed to run 'th-ptxas': No such file or directory"],
    ['exec EACCES', { exitCode: 126, spawnError: eacces, diagnostic: DIAGNOSTIC.couldNotExecute }, 'not-executable', "failed to run 'th-ptxas': Permission denied"],
    ['exec ENOEXEC', { exitCode: 126, spawnError: enoexec, diagnostic: DIAGNOSTIC.couldNotExecute }, 'not-executable', "failed to run 'th-ptxas': Exec format error (no #! line?)"],
    ['exec E2BIG is about the argv, not the program', { exitCode: 126, spawnError: e2big, diagnostic: DIAGNOSTIC.couldNotExecute }, 'spawn-failed', "failed to run 'th-ptxas': Argument list too long"],
    ['pipe failure', { exitCode: null, spawnError: pipe, diagnostic: pipe.message }, 'spawn-failed', "failed to run 'th-ptxas': cannot create a pipe: Too many open files (the open-file limit (ulimit -n) reached?)"],
    ['signal', { exitCode: null, signal: 'SIGSEGV', coreDumped: true, diagnostic: 'Segmentation fault (core dumped)' }, 'signaled', 'Segmentation fault (core dumped)'],
    ['timeout', { exitCode: null, signal: 'SIGKILL', timedOut: true, diagnostic: DIAGNOSTIC.timedOut }, 'timed-out', DIAGNOSTIC.timedOut],
    ["timeout, wouldn't die", { exitCode: null, timedOut: true, diagnostic: DIAGNOSTIC.wouldntDie }, 'timed-out', DIAGNOSTIC.wouldntDie],
    ['aborted by the caller (async)', { exitCode: null, signal: 'SIGKILL', aborted: true, diagnostic: DIAGNOSTIC.aborted }, 'aborted', DIAGNOSTIC.aborted],
  ]
  for (const [name, overrides, status, message] of rows) {
    const verdict = decodeToolResult('th-ptxas', fakeResult(overrides))  // a name no PATH holds: no hint read from a file
    t.same(verdict, { status, message }, name)
    t.notMatch(verdict.message, /crash/i, `${name}: never "crashed"`)
  }
})

t.test("decodeToolResult: the spawned file and cwd, as paths or file: URLs of one", async (t) => {
  const enoent = { stage: 'exec' as const, code: 'ENOENT', errno: 2, message: "Couldn't execute 'th-ptxas': No such file or directory" }
  const failed = fakeResult({ exitCode: 127, spawnError: enoent, diagnostic: DIAGNOSTIC.notFound })
  t.same(decodeToolResult('th-ptxas', failed, { file: new URL('file:///nonexistent/th-ptxas'), cwd: new URL('file://localhost/') }),
    { status: 'not-found', message: "failed to run '/nonexistent/th-ptxas': No such file or directory" }, 'a file: URL is its path')
  // Refused naming the field, before the result is read (an exit 0 too): fileURLToPath's own
  // errors named none, and a look-alike or a Proxy failed with V8's "Cannot read private member".
  const rows: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['file a file: URL with a host', { file: new URL('file://host/th-ptxas') }, 'ERR_INVALID_ARG_VALUE', /^spawned\.file must be a file: URL that names a path on this machine \(received file:\/\/host\/th-ptxas\): File URL host/],
    ['cwd a file: URL with an encoded /', { file: 'th-ptxas', cwd: new URL('file:///a%2fb') }, 'ERR_INVALID_ARG_VALUE', /^spawned\.cwd must be a file: URL .*encoded \/ characters/],
    ['file a URL look-alike', { file: Object.create(URL.prototype) }, 'ERR_INVALID_ARG_TYPE', /^spawned\.file must be a string or a file: URL \(received an object\)/],
    ['cwd a Proxy around a file: URL', { file: 'th-ptxas', cwd: new Proxy(new URL('file:///'), {}) }, 'ERR_INVALID_ARG_TYPE', /^spawned\.cwd must be a string or a file: URL/],
    ['file an http: URL', { file: new URL('http://example.com/th-ptxas') }, 'ERR_INVALID_ARG_VALUE', /^spawned\.file must be a string or a file: URL \(received http: URL\)/],
    ['no file', { env: {} }, 'ERR_INVALID_ARG_TYPE', /^spawned\.file must be a string \(received undefined\)/],
    ['spawned a revoked Proxy', revokedProxy() as Record<string, unknown>, 'ERR_INVALID_ARG_TYPE', /^spawned must be an object \(received a revoked Proxy\)/],
    ['file a revoked Proxy', { file: revokedProxy() }, 'ERR_INVALID_ARG_TYPE', /^spawned\.file must be a string or a file: URL \(received a revoked Proxy\)/],
  ]
  for (const [name, spawned, code, message] of rows) {
    for (const result of [failed, fakeResult({ exitCode: 0 })]) {
      t.throws(() => decodeToolResult('th-ptxas', result, spawned as never), { name: 'TypeError', code, message }, `${name} (exit ${result.exitCode})`)
    }
  }
})

t.test('decodeToolResult: a result not shaped as a ChildResult is refused naming the field', async (t) => {
  // Read as far as it went: {} took spawnError undefined for a failed start and failed with V8's
  // "Cannot read properties of undefined (reading 'stage')", uncoded.
  const rows: Array<[string, unknown, RegExp]> = [
    ['an empty object', {}, /^result\.aborted must be a boolean \(received undefined\)/],
    ['exitCode a string', fakeResult({ exitCode: '0' as never }), /^result\.exitCode must be a number or null/],
    ['signal a number', fakeResult({ signal: 9 as never }), /^result\.signal must be a string or null/],
    ['spawnError a string', fakeResult({ spawnError: 'ENOENT' as never }), /^result\.spawnError must be an object or null/],
    ['spawnError without a stage', fakeResult({ spawnError: { code: 'ENOENT', errno: 2, message: 'x' } as never }), /^result\.spawnError\.stage must be a string/],
    ['spawnError with a string errno', fakeResult({ spawnError: { stage: 'exec', code: 'ENOENT', errno: '2', message: 'x' } as never }), /^result\.spawnError\.errno must be a number/],
    ['an inherited aborted', Object.assign(Object.create({ aborted: false }), { ...fakeResult(), aborted: undefined }), /^result\.aborted must be a boolean/],
  ]
  for (const [name, result, message] of rows) {
    t.throws(() => decodeToolResult('th-ptxas', result as never), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message }, name)
  }
})

t.test('interpretPtxasResult: cubin only on a clean exit 0, stderr always verbatim', async (t) => {
  const stderr = Buffer.from('  ptxas fatal   : Unresolved extern function \'f\'\r\n\n')
  const rows: Array<[string, Parameters<typeof fakeResult>[0], boolean, string, Buffer | null, string]> = [
    ['separate: exit 0, stdout is the cubin', { stdout: CUBIN, stderr: WARN }, false, 'ok', CUBIN, WARN.toString()],
    ['separate: exit 0 with nothing on stdout', { stdout: Buffer.alloc(0) }, false, 'no-cubin', null, ''],
    ['separate: exit 0, trailing bytes after the ELF', { stdout: Buffer.concat([CUBIN, Buffer.from('x')]) }, false, 'no-cubin', null, ''],
    ['separate: exit 0, truncated by maxBuffer', { stdout: CUBIN, stdoutTruncated: true }, false, 'no-cubin', null, ''],
    ['separate: exit 255, stderr untouched (not trimmed)', { exitCode: 255, stderr }, false, 'failed', null, stderr.toString()],
    ['separate: exit 255 with a cubin on stdout: still no cubin', { exitCode: 255, stdout: CUBIN, stderr }, false, 'failed', null, stderr.toString()],
    ['merged: warnings then cubin', { stdout: Buffer.concat([WARN, CUBIN]) }, true, 'ok', CUBIN, WARN.toString()],
    ['merged: failure, the whole buffer is the diagnostic', { exitCode: 255, stdout: stderr }, true, 'failed', null, stderr.toString()],
    ['merged: exit 0 but only text', { stdout: WARN }, true, 'no-cubin', null, WARN.toString()],
    ['timeout: no cubin even if some bytes came', { exitCode: null, signal: 'SIGKILL', timedOut: true, diagnostic: 'Child timed out', stdout: CUBIN.subarray(0, 10) }, false, 'timed-out', null, ''],
  ]
  for (const [name, overrides, mergeStderr, status, cubin, diagnostics] of rows) {
    const run = interpretPtxasResult(fakeResult(overrides), { ...context, mergeStderr })
    t.equal(run.status, status, `${name}: status`)
    t.equal(run.ok, status === 'ok', `${name}: ok`)
    t.same(run.cubin, cubin, `${name}: cubin`)
    t.equal(run.diagnostics, diagnostics, `${name}: diagnostics`)
    t.same(run.diagnosticBytes, Buffer.from(diagnostics), `${name}: diagnostic bytes`)
  }
})

t.test('interpretPtxasResult: a failure whose messages went past maxBuffer says so', async (t) => {
  // 300 MB of messages were cut at 100 MiB, and the failure said only "ptxas exited with status 1".
  const stderr = Buffer.from('ptxas error   : first of many\n')
  const cut = interpretPtxasResult(fakeResult({ exitCode: 1, stderr, stderrTruncated: true }), context)
  t.same([cut.status, cut.message], ['failed', `ptxas exited with status 1; its messages were cut at maxBuffer (${stderr.length} bytes kept)`])
  t.equal(cut.diagnostics, stderr.toString(), 'what was kept, as it came')
  const whole = interpretPtxasResult(fakeResult({ exitCode: 1, stderr }), context)
  t.equal(whole.message, 'ptxas exited with status 1', 'not said when nothing was cut')
  const fine = interpretPtxasResult(fakeResult({ stdout: CUBIN, stderr, stderrTruncated: true }), context)
  t.equal(fine.status, 'ok', 'a success keeps its cubin')
})

t.test('a context, a spawned spec and the child spec options are read by their own fields', async (t) => {
  const dir = scratchDir(t)
  // A program of that name on the inherited PATH, whose #! names a missing interpreter: reading
  // that PATH hinted at an interpreter for a program the child never looked for there.
  writeFileSync(join(dir, 'th-ptxas'), '#!/nonexistent/interpreter\n', { mode: 0o755 })
  const enoent = { stage: 'exec' as const, code: 'ENOENT', errno: 2, message: "Couldn't execute 'th-ptxas': No such file or directory" }
  const failed = fakeResult({ exitCode: 127, spawnError: enoent, diagnostic: DIAGNOSTIC.notFound })
  const verdicts = await withPollutedPrototype({ env: { PATH: dir }, cwd: dir }, () => [
    decodeToolResult('th-ptxas', failed),
    decodeToolResult('th-ptxas', failed, { file: 'th-ptxas' }),
  ]).catch((error: unknown) => error)
  const plain = { status: 'not-found', message: "failed to run 'th-ptxas': No such file or directory" }
  t.same(verdicts, [plain, plain], 'decodeToolResult: no hint from an inherited env or cwd')

  const location = 'application ptx input'
  const stderr = Buffer.from(`ptxas ${location}, line 1; fatal   : Parsing error near 'x'\n`)
  const run = await withPollutedPrototype({ inputName: { location, name: 'EVIL.ptx' } }, () =>
    interpretPtxasResult(fakeResult({ exitCode: 255, stderr }), { ...context, mergeStderr: false })).catch((error: unknown) => error)
  t.match(run, { status: 'failed', diagnostics: stderr.toString() }, 'interpretPtxasResult: an inherited inputName renames nothing')

  const argv = ['ptxas', '-arch', 'sm_100']
  const inherited = {
    program: '/tmp/evil', measure: false, env: { PATH: '/tmp/evil' }, timeout: 1, mergeStderr: true, maxBuffer: 1,
    signal: AbortSignal.abort(), stdin: 0,
  }
  const spec = await withPollutedPrototype(inherited, () => ptxasChildSpec(argv, {})).catch((error: unknown) => error)
  t.same(spec, ptxasChildSpec(argv, {}), 'ptxasChildSpec: the spec of no options')
})
