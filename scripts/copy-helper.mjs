// After prebuildify: ship the measuring helper (tileharness-exec) beside the prebuilt addon, where
// lib/spawn/native.ts looks for it.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const from = path.join(root, 'build', 'Release', 'tileharness-exec')
const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`)
fs.mkdirSync(dir, { recursive: true })
fs.copyFileSync(from, path.join(dir, 'tileharness-exec'))
fs.chmodSync(path.join(dir, 'tileharness-exec'), 0o755)
console.log(`copied ${path.relative(root, from)} to ${path.relative(root, dir)}/`)
