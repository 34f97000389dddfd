// runFatbinaryAsync's input: an image's name labels its anonymous file and, on the file route, is
// its temp file's name in a private directory of its own, so it must be a plain file name;
// everything is checked before any file is made.
import t from 'tap'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runFatbinaryAsync, type FatbinaryInput, type FatbinaryRun, type RunFatbinaryOptions } from '../../lib/cuda/fatbinary.js'
import { buildFatbinaryArgv } from '../../lib/cuda/fatbinary-argv.js'
import { runPtxas } from '../../lib/cuda/ptxas.js'
import { searchPath } from '../../lib/cuda/toolkit.js'
import { readFatbin } from '../../lib/elf/fatbin.js'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, withPollutedPrototype } from '../helpers.js'
import { nodeChildEnv } from '../reliability/helpers.js'
import { fakeTool, MINIMAL_PTX, NO_PTXAS, openFds, PTXAS, scratchDir } from '../fixtures/cuda/helpers.js'

t.test('bad images are TypeErrors naming the field, and no file is made anywhere', async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'a', 'b')
  mkdirSync(tempRoot, { recursive: true })
  // Runs when it should not have: says so in a file.
  const fatbinary = fakeTool(dir, 'fatbinary', `touch '${join(dir, 'ran')}'`)
  const image: FatbinaryInput = { kind: 'elf', gpuName: 'sm_100', fileName: 'k.sm_100.cubin', data: 'PAYLOAD' }
  const rows: Array<[string, unknown, string, string]> = [
    // '../../escaped.cubin' was written two levels above its private directory, and left there.
    ['a name that climbs out', [{ ...image, fileName: '../../escaped.cubin' }], 'ERR_INVALID_ARG_VALUE', 'images[0].fileName'],
    ['a name with a slash', [image, { ...image, fileName: 'x/y' }], 'ERR_INVALID_ARG_VALUE', 'images[1].fileName'],
    ['an empty name (was EEXIST from the temp file)', [{ ...image, fileName: '' }], 'ERR_INVALID_ARG_VALUE', 'images[0].fileName'],
    ['data a number (fatbinary was started)', [{ ...image, data: 42 }], 'ERR_INVALID_ARG_TYPE', 'images[0].data'],
    // Look-alikes that pass instanceof Uint8Array: a TempFileError (EIO) carrying V8's "incompatible receiver".
    ['data a Proxy of a Uint8Array', [{ ...image, data: new Proxy(new Uint8Array(4), {}) }], 'ERR_INVALID_ARG_TYPE', 'images[0].data'],
    ['data made with its prototype', [{ ...image, data: Object.create(Uint8Array.prototype) }], 'ERR_INVALID_ARG_TYPE', 'images[0].data'],
    ['an image null', [null], 'ERR_INVALID_ARG_TYPE', 'images[0]'],
    ['images not an array', 'k.cubin', 'ERR_INVALID_ARG_TYPE', 'images'],
    ['a bad gpuName, after a good image', [image, { ...image, fileName: 'k2.cubin', gpuName: 'compute_100' }], 'ERR_INVALID_ARG_VALUE', 'images[1].gpuName'],
  ]
  for (const [name, images, code, field] of rows) {
    await t.rejects(runFatbinaryAsync(images as FatbinaryInput[], { fatbinary, tempRoot }), { code, field }, name)
  }
  await t.rejects(runFatbinaryAsync([image], null as unknown as object), { code: 'ERR_INVALID_ARG_TYPE', field: 'options' }, 'options null')
  t.same(readdirSync(tempRoot), [], 'no temp directory was made')
  t.notOk(existsSync(join(dir, 'a', 'escaped.cubin')), 'nothing escaped (it had been written to tempRoot/..)')
  t.notOk(existsSync(join(dir, 'ran')), 'fatbinary never ran')
})

// fatbinary's output was taken when readable, whatever it held: an empty fat binary (a 16-byte
// header, no entries) for two targets, or one followed by other bytes, was installed, exit 0.
t.test('a fat binary that is not the whole output, or does not hold the images given: no-fatbin', async (t) => {
  const dir = scratchDir(t)
  const header = String.raw`\120\355\125\272\001\000\020\000\000\000\000\000\000\000\000\000`
  const empty = fakeTool(dir, 'empty', `printf '${header}'`)
  const trailing = fakeTool(dir, 'trailing', `printf '${header}junk'`)
  const images: FatbinaryInput[] = [
    { kind: 'elf', gpuName: 'sm_100', fileName: 'k.sm_100.cubin', data: 'x' },
    { kind: 'elf', gpuName: 'sm_120', fileName: 'k.sm_120.cubin', data: 'y' },
  ]
  const none = await runFatbinaryAsync(images, { fatbinary: empty, tempRoot: dir })
  t.same([none.status, none.ok, none.fatbin, none.message], ['no-fatbin', false, null, 'fatbinary exited with status 0 but its fat binary holds [], not the images given [elf sm_100, elf sm_120]'])
  const junk = await runFatbinaryAsync(images, { fatbinary: trailing, tempRoot: dir })
  t.same([junk.status, junk.fatbin, junk.message], ['no-fatbin', null, 'fatbinary exited with status 0 but wrote 20 bytes, of which its fat binary is 16'])
})

const FATBINARY = searchPath('fatbinary', process.env)
const withFatbinary = PTXAS === null ? { skip: NO_PTXAS } : FATBINARY === null ? { skip: 'fatbinary not found on PATH' } : {}

// Each image had been a temp file whose path went into --image3, which fatbinary splits at commas:
// a temp root with a comma in its path (TMPDIR=/tmp/a,b) failed every multi-target compile.
t.test('the images are anonymous files fatbinary inherits: a temp root with a comma is nothing to it', withFatbinary, async (t) => {
  const dir = scratchDir(t)
  const tempRoot = join(dir, 'builds,nightly')
  mkdirSync(tempRoot)
  const cubins = ['sm_100', 'sm_120'].map((gpuName) => runPtxas(MINIMAL_PTX, { gpuName }).cubin!)
  const images: FatbinaryInput[] = [
    { kind: 'elf', gpuName: 'sm_100', fileName: 'k.sm_100.cubin', data: cubins[0] },
    { kind: 'elf', gpuName: 'sm_120', fileName: 'k,sm_120.cubin', data: cubins[1] },
    { kind: 'ptx', gpuName: 'sm_100', fileName: 'k.ptx', data: MINIMAL_PTX },
  ]
  const before = openFds()
  const run = await runFatbinaryAsync(images, { tempRoot })
  t.equal(run.status, 'ok', run.message + run.diagnostics)
  t.equal(run.inputRoute, 'memfd', 'the result says which route was taken')
  t.same(run.argv.slice(4), ['--image3=kind=elf,sm=100,file=/dev/fd/3', '--image3=kind=elf,sm=120,file=/dev/fd/4', '--image3=kind=ptx,sm=100,file=/dev/fd/5'])
  t.same(readFatbin(run.fatbin!).map((e) => [e.kind, e.arch]), [['elf', 'sm_100'], ['elf', 'sm_120'], ['ptx', 'sm_100']])
  for (const [i, cubin] of cubins.entries()) t.ok(Buffer.from(readFatbin(run.fatbin!)[i].payload).equals(cubin), `image ${i} is the cubin given`)
  t.same(readdirSync(tempRoot), [], 'nothing was written to the temp root')
  t.equal(openFds(), before, 'the anonymous files are closed')

  // The same images as temp files (the route where memfd_create fails): the same fat binary, and
  // a comma in their paths is still refused, naming the image, with nothing left behind.
  const plain = join(dir, 'plain')
  mkdirSync(plain)
  const named = images.map((image) => ({ ...image, fileName: image.fileName.replace(',', '.') }))
  const viaFiles = await runFatbinaryAsync(named, { tempRoot: plain, inputRoute: 'file' })
  t.same([viaFiles.status, viaFiles.inputRoute], ['ok', 'file'])
  t.match(viaFiles.argv[4], /^--image3=kind=elf,sm=100,file=.*\/tileharness-[^/]+\/k\.sm_100\.cubin$/)
  t.ok(viaFiles.fatbin?.equals(run.fatbin!), 'the same fat binary from temp files')
  t.same(readdirSync(plain), [], 'the temp files are removed')
  await t.rejects(runFatbinaryAsync(named, { tempRoot, inputRoute: 'file' }), { code: 'ERR_INVALID_ARG_VALUE', field: 'images[0].file', message: /comma/ })
  t.same(readdirSync(tempRoot), [], 'and removed when refused')
  await t.rejects(runFatbinaryAsync(named, { inputRoute: 'argv' as 'file' }), { code: 'ERR_INVALID_ARG_VALUE', field: 'options.inputRoute' })
})

// More images than child fds 3-1023 hold had failed with a RangeError naming fds[1024], an option
// the caller never gave; and where memfd_create failed part way (EMFILE), the fall back to temp
// files ran with every memfd made so far still open, and failed with EMFILE in turn.
t.test('images the memfd route cannot take go by the file route, with no memfd held', withFatbinary, async (t) => {
  const dir = scratchDir(t)
  const cubin = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100' }).cubin!
  const many = (n: number): FatbinaryInput[] => Array.from({ length: n }, (_, i) => ({ kind: 'elf', gpuName: 'sm_100', fileName: `k${i}.cubin`, data: cubin }))
  const before = openFds()
  const run = await runFatbinaryAsync(many(1022), { tempRoot: dir })
  t.same([run.status, run.inputRoute, readFatbin(run.fatbin!).length], ['ok', 'file', 1022], `1,022 images: ${run.message}`)
  t.same(readdirSync(dir), [], 'the temp files are removed')
  t.equal(openFds(), before, 'no fd left')

  // 600 images under a 512-fd limit: the memfds run out part way. Not under check:asan: the
  // sanitizer's own check of the thrown error's type reads memory through a pipe it makes, which
  // a process out of fds cannot, and it reports that as an invalid object (ci11).
  if (process.env.TILEHARNESS_ASAN_PRELOAD) {
    t.skip('under check:asan: the sanitizer needs a pipe for its vptr check, and this case uses up the fds')
    return
  }
  const script = `
    const { runFatbinaryAsync } = require(${JSON.stringify(join(REPO_ROOT, 'dist/cuda/index.js'))})
    const cubin = require('node:fs').readFileSync(${JSON.stringify(join(dir, 'k.cubin'))})
    const images = Array.from({ length: 600 }, (_, i) => ({ kind: 'elf', gpuName: 'sm_100', fileName: 'k' + i + '.cubin', data: cubin }))
    runFatbinaryAsync(images, { tempRoot: ${JSON.stringify(dir)} }).then((r) => console.log(JSON.stringify([r.status, r.inputRoute, r.message])), (e) => console.log(JSON.stringify(['threw', e.code, e.message])))
  `
  writeFileSync(join(dir, 'k.cubin'), cubin)
  const r = spawnChildSync({ file: 'prlimit', args: ['--nofile=512:512', process.execPath, '-e', script], env: nodeChildEnv(), timeout: 120000 })
  t.same(JSON.parse(r.stdout.toString()), ['ok', 'file', ''], `600 images, 512 fds: ${r.stderr.toString()}`)
  t.same(readdirSync(dir), ['k.cubin'], 'its temp files are removed')
})

t.test('options, images and the image list are read by their own fields and elements', withFatbinary, async (t) => {
  const dir = scratchDir(t)
  const nowhere = join(dir, 'nowhere')
  const cubin = runPtxas(MINIMAL_PTX, { gpuName: 'sm_100' }).cubin!
  const image: FatbinaryInput = { kind: 'elf', gpuName: 'sm_100', fileName: 'k.sm_100.cubin', data: cubin }
  const plain = await runFatbinaryAsync([image])
  // Each inherited field would show: a program or PATH with no fatbinary, a bad value refused, a
  // temp root that does not exist, relocatable images.
  const rows: Array<[string, Record<string, unknown>, RunFatbinaryOptions]> = [
    ['fatbinary, a missing program', { fatbinary: join(nowhere, 'fatbinary') }, {}],
    ['env, a PATH without fatbinary', { env: { PATH: nowhere } }, {}],
    ['timeout, not a number', { timeout: 'soon' }, {}],
    ['inputRoute, not a route', { inputRoute: 'pipe' }, {}],
    ['tempRoot, a missing directory', { tempRoot: nowhere }, { inputRoute: 'file' }],
    ['signal, not an AbortSignal', { signal: 'stop' }, {}],
    ['relocatable', { relocatable: true }, {}],
  ]
  for (const [row, inherited, options] of rows) {
    const run = await withPollutedPrototype(inherited, () => runFatbinaryAsync([image], options)).catch((error: unknown) => error)
    const { status, fatbin, argv } = run as FatbinaryRun
    t.ok(status === 'ok' && fatbin?.equals(plain.fatbin!) && !argv.includes('--device-c'), `${row}: the fat binary of the plain run`, { run })
  }
  // An image's field only inherited is missing, and a hole in the list is not Object.prototype's image.
  const { kind: _, ...kindless } = image
  const noKind = await withPollutedPrototype({ kind: 'elf' }, () => runFatbinaryAsync([kindless as FatbinaryInput])).then(() => 'ran', (error: unknown) => error)
  t.match(noKind, { code: 'ERR_INVALID_ARG_VALUE', field: 'images[0].kind' }, 'a kind only inherited is missing')
  const ptx: FatbinaryInput = { kind: 'ptx', gpuName: 'sm_100', fileName: 'k.ptx', data: MINIMAL_PTX }
  // eslint-disable-next-line no-sparse-arrays
  const hole = await withPollutedPrototype({ 1: ptx }, () => runFatbinaryAsync([image, , ] as FatbinaryInput[])).then(() => 'ran', (error: unknown) => error)
  t.match(hole, { code: 'ERR_INVALID_ARG_TYPE', field: 'images[1]' }, 'a hole is refused, not an inherited image')
  const argv = await withPollutedPrototype({ relocatable: true }, () => buildFatbinaryArgv([{ kind: 'elf', gpuName: 'sm_100', file: '/k.cubin' }])).catch((error: unknown) => error)
  t.same(argv, ['fatbinary', '--create=/dev/stdout', '-64', '--compress=false', '--image3=kind=elf,sm=100,file=/k.cubin'], 'buildFatbinaryArgv: no inherited relocatable')
})
