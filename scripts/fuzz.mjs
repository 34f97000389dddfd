#!/usr/bin/env node
// The fuzz suite (test/fuzz/*.test.ts): ChildSpec validation end to end, splitCommand, the
// knob-file parser, the CLI's duration/size/rlimit and option parsers, readCubin.
//
//   node scripts/fuzz.mjs                      short: a fixed number of runs per property (also part of npm test)
//   node scripts/fuzz.mjs --long               long: each property runs for --seconds (default 30): 19 properties, ~8 min on 2 cores
//        [--seconds N] [--seed N] [files...]   --seed replays a failure (the report prints its seed and path)
//
// Runs tap on the files with TILEHARNESS_FUZZ / TILEHARNESS_FUZZ_SECONDS / TILEHARNESS_FUZZ_SEED
// set (test/fuzz/budget.ts reads them), through the harness itself.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnChildSync } from '../dist/index.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const env = { ...process.env }
const files = []
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--long') env.TILEHARNESS_FUZZ = 'long'
  else if (a === '--seconds') env.TILEHARNESS_FUZZ_SECONDS = args[++i]
  else if (a === '--seed') env.TILEHARNESS_FUZZ_SEED = args[++i]
  else files.push(a)
}
const long = env.TILEHARNESS_FUZZ === 'long'
const tap = path.join(ROOT, 'node_modules/.bin/tap')
const r = spawnChildSync({
  file: tap,
  args: [...(long ? ['--timeout=0'] : []), ...(files.length ? files : fuzzFiles())],
  cwd: ROOT, env, stdin: 'inherit', stdout: 'inherit', stderr: 'inherit',
})
process.exit(r.exitCode ?? 1)

function fuzzFiles() {
  return fs.readdirSync(path.join(ROOT, 'test/fuzz')).filter(f => f.endsWith('.test.ts')).sort().map(f => `test/fuzz/${f}`)
}
