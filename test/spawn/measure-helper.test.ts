// A measuring helper that cannot be run is the helper's failure, not the program's: stage
// 'helper', its errno, a message naming the helper. It had been reported as the program's own exec
// failure ("Couldn't execute 'true': Permission denied", exit 126), so a helper that lost its
// execute bit in a copy or was deleted by a redeploy blamed the user's program. Each case loads a
// copy of the addon from a directory of its own, where the helper is in the state the case needs.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { helperPath } from '../../lib/spawn/native.js'
import { tempDir } from '../helpers.js'
import { PACKAGE, nodeChildEnv, runNodeScript } from '../reliability/helpers.js'

const addon = process.env.TILEHARNESS_ADDON ?? path.join(path.dirname(helperPath), 'tileharness.node')

interface Row { label: string; stage?: string; code?: string; exitCode: number | null; message?: string; pid: number }

/** The addon and a helper set up by `arrange` in a fresh directory; every path's measured `true`. */
function run(t: Parameters<typeof tempDir>[0], arrange: (helper: string) => void, between = (_helper: string) => ''): { helper: string; rows: Row[] } {
  const dir = tempDir(t)
  fs.copyFileSync(addon, path.join(dir, path.basename(addon)))
  const helper = path.join(dir, 'tileharness-exec')
  arrange(helper)
  const rows = runNodeScript<Row[]>(`
    const { spawnChild, spawnChildSync } = require(${PACKAGE})
    ;(async () => {
      ${between(helper)}
      const rows = []
      for (const launcher of ['fork', 'posix_spawn']) {
        for (const [api, r] of [['sync', spawnChildSync({ file: 'true', measure: true, launcher })], ['async', await spawnChild({ file: 'true', measure: true, launcher })]]) {
          rows.push({ label: api + ' ' + launcher, stage: r.spawnError?.stage, code: r.spawnError?.code, exitCode: r.exitCode, message: r.spawnError?.message, pid: r.pid })
        }
      }
      console.log(JSON.stringify(rows))
    })()
  `, { env: { ...nodeChildEnv(), TILEHARNESS_ADDON: path.join(dir, path.basename(addon)) } })
  return { helper, rows }
}

t.test('a helper without its execute bit, or a directory in its place: stage helper, EACCES, exit 126', async t => {
  for (const [name, arrange] of [
    ['mode 0644', (helper: string) => { fs.copyFileSync(helperPath, helper); fs.chmodSync(helper, 0o644) }],
    ['a directory', (helper: string) => { fs.mkdirSync(helper) }],
  ] as const) {
    const { helper, rows } = run(t, arrange)
    for (const row of rows) {
      // The pid as for any failed exec: the fork path's child's, none from posix_spawn.
      t.same([row.stage, row.code, row.exitCode, row.pid > 0], ['helper', 'EACCES', 126, row.label.endsWith('fork')], `${name}, ${row.label}`)
      t.equal(row.message, `Couldn't run the measuring helper '${helper}': Permission denied`, `${name}, ${row.label}: the message names the helper`)
    }
  }
})

t.test('a helper deleted after it was found: stage helper, ENOENT, exit 127', async t => {
  const { rows } = run(t, helper => { fs.copyFileSync(helperPath, helper) }, helper => `
      const first = spawnChildSync({ file: 'true', measure: true })
      if (first.exitCode !== 0) throw new Error('the helper did not run: ' + first.diagnostic)
      require('node:fs').rmSync(${JSON.stringify(helper)})
  `)
  for (const row of rows) t.same([row.stage, row.code, row.exitCode], ['helper', 'ENOENT', 127], row.label)
})
