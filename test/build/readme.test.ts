// The README says what the code and the measurements say: its synopses and compile's exit-status
// table are the CLI's own usage text, its performance figures are bench/RESULTS.md's, its
// supported Node lines are CI's, and the package it describes carries its LICENSE.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, tempDir } from '../helpers.js'

const README = path.join(REPO_ROOT, 'README.md')
const RESULTS = path.join(REPO_ROOT, 'bench/RESULTS.md')
const check = (...args: string[]) => {
  const r = spawnChildSync({ file: process.execPath, args: [path.join(REPO_ROOT, 'scripts/readme.mjs'), '--check', ...args], cwd: REPO_ROOT, timeout: 60000 })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

t.test('every generated part of the README matches its source (npm run readme rewrites them)', async t => {
  const r = check()
  t.equal(r.code, 0, r.err)
  t.match(r.out, /every generated part matches its source/)
})

t.test('the check catches a README that drifts from its sources', async t => {
  const dir = tempDir(t)
  const readme = fs.readFileSync(README, 'utf8')
  const results = fs.readFileSync(RESULTS, 'utf8')
  const rows: Array<[string, string, string, RegExp]> = [
    ['a figure edited in the prose', readme.replace(/(<!-- figure: spawnSync at 4 GiB -->)[^<]*/, '$180 ms'), results, /figure 'spawnSync at 4 GiB'/],
    ['a synopsis edited by hand', readme.replace('[--runs-csv F]', ''), results, /block 'synopsis bench'/],
    ['a row of the status table dropped', readme.replace(/^\| 3 \|.*\n/m, ''), results, /block 'compile exit statuses'/],
    ['a new measurement', readme, results.replace(/^(\| 4096 MiB \| \d+ µs \(mean \d+ µs\) \| )\d+/m, '$1999'), /block 'spawn table'/],
  ]
  for (const [name, text, measured, stale] of rows) {
    t.not(text + measured, readme + results, `${name}: the copy differs`)
    fs.writeFileSync(path.join(dir, 'README.md'), text)
    fs.writeFileSync(path.join(dir, 'RESULTS.md'), measured)
    const r = check('--readme', path.join(dir, 'README.md'), '--results', path.join(dir, 'RESULTS.md'))
    t.equal(r.code, 1, `${name}: --check fails`)
    t.match(r.err, stale, `${name}: names what is stale`)
  }
})

t.test('the intro quotes the spawn costs bench/RESULTS.md measured', async t => {
  const results = fs.readFileSync(RESULTS, 'utf8')
  const row = /^\| 4096 MiB \| [^|]+\| (\d+) µs [^|]+\| ([\d.]+) ms /m.exec(results)
  t.ok(row, 'RESULTS.md has the 4 GiB row')
  const readme = fs.readFileSync(README, 'utf8')
  t.match(readme, `costs about <!-- figure: spawnSync at 4 GiB -->${Math.round(Number(row![2]))} ms<!-- /figure -->`)
})

t.test('the supported Node lines: README, engines and CI agree, and this Node is one of them', async t => {
  const ci = fs.readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8')
  const lines = /^NODE_LINES="([\d ]+)"$/m.exec(ci)?.[1].split(' ').map(Number)
  t.same(lines, [22, 24, 26], '.ci/run tests Node 22, 24 and 26')
  const readme = fs.readFileSync(README, 'utf8').replace(/\s+/g, ' ')
  const [first, second, third] = lines!
  t.match(readme, `Node.js ${first} (${first}.12 or later), ${second} and ${third}, the maintained release lines: CI`, 'the README names them')
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  const semver = createRequire(path.join(REPO_ROOT, 'package.json'))('semver') as { satisfies(v: string, r: string): boolean }
  for (const major of lines!) t.ok(semver.satisfies(`${major}.${major === 22 ? 12 : 0}.0`, pkg.engines.node), `engines (${pkg.engines.node}) admits Node ${major}`)
  t.notOk(semver.satisfies('22.11.0', pkg.engines.node), 'but not a 22 without require() of ES modules')
  t.ok(semver.satisfies(process.version, pkg.engines.node), `this Node, ${process.version}, is one engines admits`)
})

t.test('the npm package carries the LICENSE, MIT as package.json says', async t => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
  t.equal(pkg.license, 'MIT')
  t.match(fs.readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) \d{4} /)
  const r = spawnChildSync({ file: 'npm', args: ['pack', '--dry-run', '--json', '--ignore-scripts'], cwd: REPO_ROOT, timeout: 120000 })
  t.equal(r.exitCode, 0, r.stderr.toString())
  const files = (JSON.parse(r.stdout.toString())[0].files as Array<{ path: string }>).map(f => f.path)
  for (const file of ['LICENSE', 'README.md', 'package.json', 'dist/cli/main.js', 'binding.gyp']) t.ok(files.includes(file), `the tarball has ${file}`)
  // A build from source (no prebuild matches) reads every file the two build descriptions name:
  // scripts/build-helper.sh was left out, so every such install failed ("No rule to make target").
  const named = new Set([
    ...fs.readFileSync(path.join(REPO_ROOT, 'binding.gyp'), 'utf8').matchAll(/"((?:native|scripts)\/[\w.-]+)"/g),
    ...fs.readFileSync(path.join(REPO_ROOT, 'CMakeLists.txt'), 'utf8').matchAll(/\b((?:native|scripts)\/[\w.-]+)/g),
  ].map(m => m[1]!))
  t.ok(named.has('scripts/build-helper.sh') && named.has('native/exec-helper.c'), 'the builds name the helper\'s script and source')
  for (const file of named) t.ok(files.includes(file), `the tarball has ${file}, which a build from source reads`)
})
