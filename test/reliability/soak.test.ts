// The soak in its shortest form: scripts/soak.mjs with 1,600 sequential and 1,000 async spawns
// (64 in flight) of mixed outcomes, in a fresh node with the flags its RSS check needs. It checks
// every result against its kind, and that the open fds, the children (no zombies) and RSS (within
// 10 MiB) are back where they started. `npm run soak` and `npm run soak:long` run the same script
// with 5,000 + 2,000 and 100,000 + 10,000.
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT } from '../helpers.js'
import { baseline, nodeChildEnv } from './helpers.js'

t.test('soak (short): fds, children and RSS back where they started', async t => {
  const before = baseline()
  const r = spawnChildSync({
    file: process.execPath,
    args: ['--expose-gc', '--min-semi-space-size=16', path.join(REPO_ROOT, 'scripts/soak.mjs'), '--sync', '1600', '--async', '1000'],
    cwd: REPO_ROOT, timeout: 280000,
    // Set up as the script wants (see its header), so it does not start itself again.
    env: { ...nodeChildEnv(), GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=65536' },
  })
  const out = r.stdout.toString()
  t.equal(r.exitCode, 0, `soak passed\n${out}${r.stderr.toString()}`)
  t.match(out, /sequential \(spawnChildSync\): 1600 spawns .*the same fds.*children 0 -> 0/)
  t.match(out, /async \(spawnChild, 64 in flight\): 1000 spawns .*the same fds.*children 0 -> 0/)
  await before.check(t)
})
