// No fds, zombies or gross memory leak: 2,000 spawns of mixed kinds, each measured and not, leave
// the fd count and the child list as they were. (The soak, scripts/soak.mjs, holds RSS after a
// full GC to within 10 MiB over 5,000 more, and is where a slow leak is caught.)
import t from 'tap'
import { spawnChild, spawnChildSync, type ChildSpec } from '../../lib/index.js'
import { MEASURE, childPids, openFds } from '../helpers.js'

const unmeasured: ChildSpec[] = [
  { file: '/bin/true' },
  { file: '/bin/true', launcher: 'fork' },
  { file: '/bin/cat', input: 'some input' },
  { file: '/bin/sh', args: ['-c', 'echo out; echo err >&2; exit 3'], timeout: 5000 },
  { file: '/bin/sh', args: ['-c', 'echo x'], stderr: 'stdout', setsid: true },
  { file: '/nonexistent/program' },
  { file: '/nonexistent/program', launcher: 'fork' },
  { file: '/bin/true', cwd: '/nonexistent' },
  { file: '/bin/true', rlimits: { nofile: 64 } },
  { file: '/bin/sh', args: ['-c', 'kill -TERM $$'] },
]
const kinds = unmeasured.flatMap(kind => MEASURE.map(measure => ({ ...kind, measure })))

t.test('2,000 spawns', async t => {
  for (let i = 0; i < 200; i++) spawnChildSync(kinds[i % kinds.length])  // warm up lazily created state
  const fdsBefore = openFds()
  const childrenBefore = childPids()
  const rssBefore = process.memoryUsage().rss
  let failures = 0
  for (let i = 0; i < 2000; i++) {
    const r = spawnChildSync(kinds[i % kinds.length])
    if (r.pid === 0 && r.spawnError === null) failures++
  }
  t.equal(failures, 0)
  t.same(openFds(), fdsBefore, 'same open fds')
  t.same(childPids(), childrenBefore, 'no children left behind (no zombies)')
  const growthMiB = (process.memoryUsage().rss - rssBefore) / 1048576
  t.ok(growthMiB < 40, `RSS growth ${growthMiB.toFixed(1)} MiB over 2,000 spawns`)
})

t.test('5,000 async spawns, 32 in flight', async t => {
  await Promise.all(kinds.map(k => spawnChild(k)))
  const fdsBefore = openFds()
  const childrenBefore = childPids()
  let next = 0
  let failures = 0
  const worker = async () => {
    while (next < 5000) {
      const r = await spawnChild(kinds[next++ % kinds.length])
      if (r.pid === 0 && r.spawnError === null) failures++
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  t.equal(failures, 0)
  t.same(openFds(), fdsBefore, 'same open fds')
  t.same(childPids(), childrenBefore, 'no children left behind (no zombies)')
})
