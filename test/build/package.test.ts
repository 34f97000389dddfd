// The package as users get it: require() and import of the built package, type declarations,
// and the two native build descriptions agreeing.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT } from '../helpers.js'

const node = (args: string[]) =>
  spawnChildSync({ file: process.execPath, args, cwd: REPO_ROOT, env: { PATH: process.env.PATH! }, timeout: 60000 })

t.test('require() of the package works', async t => {
  const r = node(['-e', "const th = require('tileharness'); console.log(typeof th.spawnChildSync, th.spawnChildSync({ file: 'echo', args: ['ok'] }).stdout.toString().trim())"])
  t.equal(r.stderr.toString(), '')
  t.equal(r.stdout.toString(), 'function ok\n')
})

t.test('import of the package works', async t => {
  const r = node(['--input-type=module', '-e', "import { spawnChildSync, decodeWaitStatus } from 'tileharness'; console.log(typeof spawnChildSync, decodeWaitStatus(0x8b).signal)"])
  t.equal(r.stderr.toString(), '')
  t.equal(r.stdout.toString(), 'function SIGSEGV\n')
})

t.test('type declarations are shipped', async t => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  const types = path.join(REPO_ROOT, pkg.exports['.'].types)
  t.ok(fs.existsSync(types), types)
  t.match(fs.readFileSync(path.join(REPO_ROOT, 'dist/spawn/types.d.ts'), 'utf8'), /interface ChildResult/)
})

t.test('binding.gyp and CMakeLists.txt build the same sources to the same place', async t => {
  const gyp = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'binding.gyp'), 'utf8'))
  const target = gyp.targets.find((x: { target_name: string }) => x.target_name === 'tileharness')
  const cmake = fs.readFileSync(path.join(REPO_ROOT, 'CMakeLists.txt'), 'utf8')
  const cmakeSources = cmake.match(/native\/[\w.-]+\.cc/g)!.sort()
  t.same([...target.sources].sort(), cmakeSources, 'same source list')
  t.match(cmake, /LIBRARY_OUTPUT_DIRECTORY "\$\{CMAKE_BINARY_DIR\}\/Release"/, 'cmake-js output lands in build/Release as node-gyp\'s does')
  t.match(JSON.stringify(gyp), /NAPI_VERSION=8/)
  t.match(cmake, /NAPI_VERSION=8/)
})

t.test('the tileharness bin is executable and runs by name', async t => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  const bin = path.join(REPO_ROOT, pkg.bin.tileharness)
  t.not(fs.statSync(bin).mode & 0o111, 0, `${pkg.bin.tileharness} has its execute bits (npx runs it directly)`)
  const r = spawnChildSync({ file: bin, args: ['--help'], timeout: 60000 })
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stdout.toString(), /^usage: tileharness <command>/)
})

t.test('paths from module URLs go through fileURLToPath (a checkout whose path has a space works)', async t => {
  // new URL(import.meta.url).pathname keeps %20 for a space: a checkout in "My Projects" breaks.
  const files = ['lib', 'test', 'scripts'].flatMap(dir =>
    fs.readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter(f => /\.(ts|mjs|js)$/.test(f)).map(f => path.join(dir, f)))
  t.ok(files.length > 50, `read ${files.length} sources`)
  const pathnameOfUrl = new RegExp(['\\.', 'pathname', '\\b'].join(''))  // not spelled out: this file would match
  const bad = files.filter(f => pathnameOfUrl.test(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8').replace(/\/\/.*$/gm, '')))
  t.same(bad, [], 'no source takes the pathname of a URL as a path')
})

// Another package's addon (a bundle resolving the package root to the consumer's own build/, or
// TILEHARNESS_ADDON pointing at one): the load says so, where it was "Cannot read properties of
// undefined (reading 'slots')".
t.test('an addon that is not tileharness\'s: the load names it and says what to do', async t => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-foreign-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const foreign = path.join(dir, 'other.js')
  fs.writeFileSync(foreign, 'module.exports = { hello() {} }\n')
  const r = spawnChildSync({ file: process.execPath, args: ['-e', "require('tileharness')"], cwd: REPO_ROOT, env: { PATH: process.env.PATH!, TILEHARNESS_ADDON: foreign }, timeout: 60000 })
  t.equal(r.exitCode, 1)
  t.match(r.stderr.toString(), `Error: tileharness: ${foreign} is not tileharness's addon (it declares no layout): rebuild it, or check TILEHARNESS_ADDON`)
})
