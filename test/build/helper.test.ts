// The measuring helper's build: one recipe (scripts/build-helper.sh) for both build systems; musl
// when musl-gcc is installed, since a static glibc program probes the CPU at every start and the
// helper starts once per measured child; glibc otherwise. Either build measures the same child.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { helperPath } from '../../lib/spawn/native.js'
import { REPO_ROOT, helperBuildAction, script, tempDir } from '../helpers.js'
import { PACKAGE, nodeChildEnv, runNodeScript } from '../reliability/helpers.js'

const RECIPE = path.join(REPO_ROOT, 'scripts/build-helper.sh')
const SOURCE = path.join(REPO_ROOT, 'native/exec-helper.c')
const hasMusl = spawnChildSync({ file: 'sh', args: ['-c', 'command -v musl-gcc'], stdout: 'ignore' }).exitCode === 0
const NO_MUSL = 'musl-gcc is not installed here (Debian: musl-tools), so only the glibc build can be made'

/** glibc marks the programs it links with an NT_GNU_ABI_TAG note, section .note.ABI-tag; musl does not. */
const linkedWithGlibc = (file: string): boolean => fs.readFileSync(file).includes('.note.ABI-tag')

/** Runs the recipe into dir/tileharness-exec with `env`; the result and the program's path. */
function build(dir: string, env: Record<string, string>) {
  const out = path.join(dir, 'tileharness-exec')
  const r = spawnChildSync({ file: 'sh', args: [RECIPE, out, SOURCE], env, timeout: 120000 })
  return { r, out }
}

t.test('binding.gyp and CMakeLists.txt build the helper with the one recipe', async t => {
  const action = helperBuildAction()
  t.same(action.action.slice(0, 2), ['sh', 'scripts/build-helper.sh'])
  t.same(action.outputs, ['<(PRODUCT_DIR)/tileharness-exec'])
  t.ok(action.inputs.includes('native/exec-helper.c') && action.inputs.includes('scripts/build-helper.sh'), 'rebuilt when the source or the recipe changes')
  const cmake = fs.readFileSync(path.join(REPO_ROOT, 'CMakeLists.txt'), 'utf8')
  t.match(cmake, /COMMAND sh "\$\{CMAKE_SOURCE_DIR\}\/scripts\/build-helper\.sh" "\$\{TILEHARNESS_HELPER\}"/)
  t.notMatch(cmake, /add_executable\(tileharness-exec/, 'no second recipe')
})

t.test('with musl-gcc installed, the helper is linked with musl', { skip: hasMusl ? false : NO_MUSL }, async t => {
  t.notOk(linkedWithGlibc(helperPath), `the helper in use, ${helperPath}`)
  const { r, out } = build(tempDir(t), { PATH: process.env.PATH! })
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.notOk(linkedWithGlibc(out), 'a fresh build')
})

t.test('a musl-gcc that fails: the helper is built with cc and glibc, and the recipe says so', async t => {
  const dir = tempDir(t)
  const bin = path.join(dir, 'bin')
  fs.mkdirSync(bin)
  script(bin, 'musl-gcc', '#!/bin/sh\necho "musl-gcc: broken" >&2\nexit 1\n')
  const { r, out } = build(dir, { PATH: `${bin}:${process.env.PATH}` })
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.match(r.stderr.toString(), /build-helper: musl-gcc failed; building the helper with cc and glibc instead/)
  t.ok(linkedWithGlibc(out), 'linked with glibc')
  t.same(fs.readdirSync(dir).sort(), ['bin', 'tileharness-exec'], 'no temporary file left beside it')
})

t.test('a compiler that fails: the recipe fails and leaves no program behind', async t => {
  const dir = tempDir(t)
  const { r, out } = build(dir, { PATH: process.env.PATH!, TILEHARNESS_HELPER_CC: 'false' })
  t.not(r.exitCode, 0)
  t.notOk(fs.existsSync(out), 'no helper')
  t.same(fs.readdirSync(dir), [], 'no temporary file')
})

// Each build behind a copy of the addon (which takes its helper from its own directory): a
// measured child's status, signal, exec error and maxRSS are the target's own.
const builds: Array<[string, Record<string, string>, string | false]> = [
  ['musl', {}, hasMusl ? false : NO_MUSL],
  ['glibc', { TILEHARNESS_HELPER_CC: 'cc' }, false],
]
for (const [libc, env, skip] of builds) {
  t.test(`the ${libc} build measures the target itself`, { skip }, async t => {
    const dir = tempDir(t)
    const { r, out } = build(dir, { PATH: process.env.PATH!, ...env })
    t.equal(r.exitCode, 0, r.stderr.toString())
    t.equal(linkedWithGlibc(out), libc === 'glibc', `linked with ${libc}`)
    const addon = process.env.TILEHARNESS_ADDON ? path.resolve(process.env.TILEHARNESS_ADDON) : path.join(path.dirname(helperPath), 'tileharness.node')
    fs.copyFileSync(addon, path.join(dir, path.basename(addon)))
    const got = runNodeScript<Record<string, unknown>>(`
      const fs = require('node:fs')
      const { spawnChildSync, spawnChild, startChild } = require(${PACKAGE})
      const m = spec => spawnChildSync({ measure: true, ...spec })
      ;(async () => {
        const exit = m({ file: 'sh', args: ['-c', 'exit 7'] })
        const killed = await spawnChild({ measure: true, file: 'sleep', args: ['10'], timeout: 50, killSignal: 'SIGTERM' })
        const missing = m({ file: 'tileharness-no-such-program' })
        const small = m({ file: '/bin/true' })
        // Signals sent to the helper itself reach the target, the ones libcs keep for themselves too.
        const forwarded = []
        for (const sig of [32, 33, 34, 35, 64, 15]) {
          const c = startChild({ measure: true, file: 'sleep', args: ['10'], timeout: 20000 })
          while (c.pid === 0) await new Promise(r => setImmediate(r))
          const helper = Number(fs.readFileSync('/proc/' + c.pid + '/stat', 'utf8').split(') ')[1].split(' ')[1])
          process.kill(helper, sig)
          const r = await c.result
          forwarded.push([r.signal, r.rusageSource])
        }
        console.log(JSON.stringify({ exit: exit.exitCode, source: exit.rusageSource, signal: killed.signal, timedOut: killed.timedOut,
          spawnError: missing.spawnError && [missing.spawnError.stage, missing.spawnError.code],
          trueKiB: small.rusage.maxRSS, forwarded, parentKiB: Math.round(process.memoryUsage().rss / 1024) }))
      })()`, { env: { ...nodeChildEnv(), TILEHARNESS_ADDON: path.join(dir, path.basename(addon)) } })
    t.equal(got.exit, 7)
    t.equal(got.source, 'helper', 'rusage from the helper')
    t.equal(got.signal, 'SIGTERM')
    t.equal(got.timedOut, true)
    t.same(got.spawnError, ['exec', 'ENOENT'])
    t.same(got.forwarded, ['SIG32', 'SIG33', 'SIGRTMIN', 'SIGRTMIN+1', 'SIGRTMAX', 'SIGTERM'].map(s => [s, 'helper']),
      'a signal sent to the helper is forwarded to the target, which dies of it; the helper reports')
    t.ok((got.trueKiB as number) > 0 && (got.trueKiB as number) < (got.parentKiB as number) / 4,
      `/bin/true's maxRSS ${got.trueKiB} KiB is its own, not its ${got.parentKiB} KiB spawner's`)
  })
}
