// Checks the loader's choice: a copy of the package with prebuilds/ and no build/ must load the
// prebuild (and work); the same copy without prebuilds/ must fail to find an addon, which is
// when `npm install` builds from source (the package's install script is `node-gyp-build`).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tileharness-prebuild-'))
try {
  const pkg = path.join(tmp, 'node_modules', 'tileharness')
  fs.mkdirSync(pkg, { recursive: true })
  for (const entry of ['package.json', 'dist', 'prebuilds']) fs.cpSync(path.join(root, entry), path.join(pkg, entry), { recursive: true })
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'))
  const prebuilt = fs.readdirSync(path.join(pkg, 'prebuilds', `${process.platform}-${process.arch}`))
  if (prebuilt.length === 0) throw new Error('no prebuild was made')

  const require = createRequire(path.join(tmp, 'index.js'))
  const gypBuild = require(path.join(root, 'node_modules', 'node-gyp-build'))
  const chosen = gypBuild.resolve(pkg)
  if (!chosen.includes(`${path.sep}prebuilds${path.sep}`)) throw new Error(`loader chose ${chosen}, not the prebuild`)
  const { spawnChildSync } = require('tileharness')
  const r = spawnChildSync({ file: 'echo', args: ['prebuild works'] })
  if (r.stdout.toString() !== 'prebuild works\n') throw new Error('the prebuild did not run a child')
  const m = spawnChildSync({ file: 'echo', args: ['measured'], measure: true })
  if (m.stdout.toString() !== 'measured\n' || !(m.rusage.maxRSS > 0)) throw new Error('the prebuild\'s measuring helper did not run')
  console.log(`prebuild loaded: ${path.relative(pkg, chosen)}`)

  fs.rmSync(path.join(pkg, 'prebuilds'), { recursive: true })
  let found = null
  try { found = gypBuild.resolve(pkg) } catch { /* expected: nothing to load, build from source */ }
  if (found) throw new Error(`without prebuilds the loader still found ${found}`)
  console.log('without prebuilds/ and build/, the loader finds nothing: npm install builds from source')
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
