// processGroup (a new group without a new session, or joining one) and cpus, through every path
// they apply to: processGroup on both launchers (posix_spawn with POSIX_SPAWN_SETPGROUP), cpus on
// the fork path and 'auto'; measured and not. The group kills themselves: async.test.ts, beside
// setsid's.
import fs from 'node:fs'
import t from 'tap'
import { startChild } from '../../lib/index.js'
import { eachPath, eventually, processState, withRoomToStart } from '../helpers.js'

// pid, pgid and sid of the shell itself (fields 5 and 6 of its /proc stat; its comm, "sh", has no space).
const IDS = 'echo $$ $(cut -d" " -f5,6 /proc/$$/stat)'
const [, , , , ownGroup, ownSession] = fs.readFileSync('/proc/self/stat', 'utf8').split(' ').map(Number)

t.test('processGroup: true or 0, the child leads a new group in the parent\'s session', t => eachPath(t, '', async (t, { run }) => {
  for (const processGroup of [true, 0] as const) {
    const r = await run({ file: 'sh', args: ['-c', IDS], processGroup })
    const [pid, pgid, sid] = r.stdout.toString().trim().split(' ').map(Number)
    t.equal(pid, r.pid, `processGroup ${processGroup}: the pid the result reports`)
    t.equal(pgid, pid, `processGroup ${processGroup}: the child leads its group`)
    t.equal(sid, ownSession, `processGroup ${processGroup}: the session is still the parent's (not setsid)`)
  }
  const plain = await run({ file: 'sh', args: ['-c', IDS], processGroup: false })
  t.equal(plain.stdout.toString().trim().split(' ')[1], String(ownGroup), 'processGroup false: the parent\'s group')
}))

t.test('processGroup: the deadline\'s kill reaches the whole group, grandchildren too', t => eachPath(t, '', async (t, { run }) => {
  const r = await withRoomToStart(run, { file: 'sh', args: ['-c', 'sleep 100 & echo $!; wait'], processGroup: true, timeout: 300 })
  t.equal(r.timedOut, true)
  const grandchild = Number(r.stdout.toString().trim())
  t.ok(grandchild > 0, 'the grandchild started before the deadline')
  t.ok(await eventually(() => processState(grandchild) !== 'alive'), `grandchild ${grandchild} is gone`)
}))

t.test('processGroup: a number joins that group; a group not in this session is EPERM at setpgid', t => eachPath(t, '', async (t, { run }) => {
  const leader = startChild({ file: 'sleep', args: ['100'], processGroup: true })
  t.teardown(() => { leader.kill() })
  const r = await run({ file: 'sh', args: ['-c', IDS], processGroup: leader.pid })
  t.equal(r.stdout.toString().trim().split(' ')[1], String(leader.pid), 'the child joined the leader\'s group')
  leader.kill()
  t.equal((await leader.result).signal, 'SIGKILL')

  // Group 1 (init's) is in another session.
  const other = await run({ file: 'true', processGroup: 1 })
  // 126 on every path, as every start that fails (posix_spawn, which reaps its own child, gave null).
  t.same([other.spawnError?.stage, other.spawnError?.code, other.exitCode], ['setpgid', 'EPERM', 126])
  t.equal(other.spawnError?.message, "Couldn't join process group 1: Operation not permitted")
}))

// The CPUs this process may run on: the child is pinned to the last of them.
const allowed = /^Cpus_allowed_list:\s*(\S+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]!
const lastCpu = Math.max(...allowed.split(',').map(range => Number(range.split('-').pop())))

t.test('cpus: the child is pinned to the CPUs asked for', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({ file: 'grep', args: ['Cpus_allowed_list', '/proc/self/status'], cpus: [lastCpu] })
  t.equal(r.stdout.toString(), `Cpus_allowed_list:\t${lastCpu}\n`, r.diagnostic)
  t.equal(r.launcher, 'fork')
  const both = await run({ file: 'grep', args: ['Cpus_allowed_list', '/proc/self/status'], cpus: [0, lastCpu, 0] })
  t.equal(both.stdout.toString(), `Cpus_allowed_list:\t${lastCpu === 0 ? '0' : lastCpu === 1 ? '0-1' : `0,${lastCpu}`}\n`, 'a list (duplicates are one CPU)')
  const offline = await run({ file: 'true', cpus: [1023] })
  t.same([offline.spawnError?.stage, offline.spawnError?.code, offline.exitCode], ['affinity', 'EINVAL', 126], 'a CPU this machine does not have')
  t.equal(offline.diagnostic, "Couldn't pin the child to CPUs 1023: Invalid argument")
  // The kernel's rule, as taskset(1) has it: CPUs the machine does not have are left out of a set
  // that has one it does.
  const some = await run({ file: 'grep', args: ['Cpus_allowed_list', '/proc/self/status'], cpus: [lastCpu, 1023] })
  t.same([some.spawnError, some.stdout.toString()], [null, `Cpus_allowed_list:\t${lastCpu}\n`], 'a set with one CPU this machine has: pinned to that one')
  t.equal(/^Cpus_allowed_list:\s*(\S+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1], allowed, 'this process keeps its own CPUs')
}, { launchers: ['auto', 'fork'] }))
