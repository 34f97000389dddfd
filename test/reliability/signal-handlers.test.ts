// Fault: user code has its own SIGALRM and SIGCHLD handlers (process.on), and spawns with Node's
// child_process at the same time. The harness's results stay exact (its deadlines, its statuses,
// its rusage), the user's SIGALRM listener sees only the alarms that are not the harness's, and
// neither side reaps the other's children. Every path (API × launcher × measure).
import { spawn } from 'node:child_process'
import os from 'node:os'
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { APIS, eachPath, tempDir } from '../helpers.js'
import { baseline, buildFixtureLibrary, nodeChildEnv, PACKAGE, runNodeScript } from './helpers.js'

const settle = () => new Promise(r => setTimeout(r, 100))

t.test('SIGALRM and SIGCHLD listeners installed by user code', async t => {
  let alarms = 0
  let sigchlds = 0
  const onAlarm = () => { alarms++ }
  const onChld = () => { sigchlds++ }
  process.on('SIGALRM', onAlarm)
  process.on('SIGCHLD', onChld)
  t.teardown(() => {
    process.off('SIGALRM', onAlarm)
    process.off('SIGCHLD', onChld)
  })
  const before = baseline()

  await eachPath(t, '', async (t, { run }) => {
    const exit = await run({ file: 'sh', args: ['-c', 'exit 3'], timeout: 10000 })
    t.same([exit.exitCode, exit.signal, exit.timedOut], [3, null, false], 'exit status')
    const killed = await run({ file: 'sh', args: ['-c', 'kill -TERM $$'] })
    t.same([killed.exitCode, killed.signal], [null, 'SIGTERM'], 'death by signal')
    const late = await run({ file: 'sleep', args: ['5'], timeout: 50 })
    t.same([late.timedOut, late.signal, late.diagnostic], [true, 'SIGKILL', 'Child timed out'], 'the deadline still fires')
    const busy = await run({ file: 'sh', args: ['-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'], timeout: 20000 })
    t.ok(busy.exitCode === 0 && busy.rusage.userCPUTime + busy.rusage.systemCPUTime > 0, 'rusage of the child still reported')
  })
  await settle()
  t.equal(alarms, 0, "the listener never saw the harness's alarms")
  t.ok(sigchlds > 0, `the SIGCHLD listener ran (${sigchlds} times) and took nothing from the harness`)

  // An alarm that is not the harness's, during a timed wait, reaches the listener and does not
  // end the wait.
  const r = await APIS[0]![1]({ file: 'sh', args: ['-c', `kill -ALRM ${process.pid}; sleep 0.2; echo finished`], timeout: 10000 })
  t.same([r.timedOut, r.stdout.toString()], [false, 'finished\n'], 'an external SIGALRM during a sync timed wait is chained, not taken as the deadline')
  await settle()
  t.equal(alarms, 1, 'and the listener got it')
  await before.check(t)
})

t.test("Node's child_process and the harness side by side", async t => {
  const onChld = () => {}
  process.on('SIGCHLD', onChld)
  t.teardown(() => { process.off('SIGCHLD', onChld) })
  const before = baseline()
  const nodeChild = (code: number) => new Promise<number | null>(resolve => {
    spawn('sh', ['-c', `sleep 0.05; exit ${code}`], { stdio: 'ignore' }).on('exit', c => resolve(c))
  })
  await eachPath(t, '', async (t, { run }) => {
    const theirs = [nodeChild(7), nodeChild(8), nodeChild(9)]
    const ours = await Promise.all([
      run({ file: 'sh', args: ['-c', 'sleep 0.05; exit 4'], timeout: 10000 }),
      run({ file: 'sh', args: ['-c', 'sleep 0.1; exit 5'] }),
    ])
    t.same(ours.map(r => r.exitCode), [4, 5], "the harness got its children's statuses")
    t.same(await Promise.all(theirs), [7, 8, 9], 'child_process got its own')
  })
  await before.check(t)
})

// A library in the process sets SIGCHLD to SIG_IGN: the kernel reaps every child itself, and wait4
// finds nothing. The result still gives the exit status, which the child's pidfd keeps (Linux
// 6.15's PIDFD_INFO_EXIT), and says its rusage is unavailable rather than reporting zeros. On an
// older kernel the status is gone too, and the result says neither. The children sleep a moment first: on
// the posix_spawn path the pidfd is opened after posix_spawn returns, and a child the kernel has
// reaped by then has lost its status (the next test); the fork path's pidfd comes with the clone.
// One child is started before SIGCHLD is ignored and exits after (the disposition
// changed under a running child); a sync spawn with no pipe and no deadline is the one that would
// otherwise wait without a pidfd.
t.test('SIGCHLD ignored by someone else in the process', async t => {
  const so = buildFixtureLibrary(tempDir(t), 'ignore-sigchld')
  type Row = [launcher: string, api: string, exitCode: number | null, signal: string | null, spawnError: string | null, rusageSource: string, rusageNaN: boolean]
  const rows = runNodeScript<Row[]>(`
    const { spawnChild, spawnChildSync, startChild } = require(${PACKAGE})
    ;(async () => {
      const rows = []
      const row = (launcher, api, r) => rows.push([launcher, api, r.exitCode, r.signal, r.spawnError && r.spawnError.code, r.rusageSource, Number.isNaN(r.rusage.userCPUTime)])
      // Started while SIGCHLD is still handled as usual; ignored before it exits (it waits for a
      // line that is written only once the disposition has changed).
      const running = startChild({ file: 'sh', args: ['-c', 'read line; exit 7'], stdin: 'pipe' })
      try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}) } catch {}  // no addon: its constructor ran
      running.stdin.end('go\\n')
      row('auto', 'async, ignored while running', await running.result)
      const quiet = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' }
      for (const launcher of ['auto', 'posix_spawn']) {
        row(launcher, 'sync', spawnChildSync({ file: 'sh', args: ['-c', 'sleep 0.05; exit 3'], launcher }))
        // No pipe and no deadline: the one sync spawn that would otherwise take no pidfd.
        row(launcher, 'sync, no pipe', spawnChildSync({ file: 'sh', args: ['-c', 'sleep 0.05; exit 6'], launcher, ...quiet }))
        row(launcher, 'sync, timeout', spawnChildSync({ file: 'sh', args: ['-c', 'sleep 0.05; exit 4'], launcher, timeout: 30000 }))
        row(launcher, 'async', await spawnChild({ file: 'sh', args: ['-c', 'sleep 0.05; exit 5'], launcher }))
        row(launcher, 'async, killed', await spawnChild({ file: 'sh', args: ['-c', 'sleep 0.05; kill -TERM $$'], launcher }))
      }
      console.log(JSON.stringify(rows))
    })()
  `)
  const kept = kernelKeepsStatus()
  if (!kept) t.comment(`kernel ${os.release()} predates PIDFD_INFO_EXIT (6.15): the status is lost, and the result must say so`)
  const expected: Record<string, [number | null, string | null]> = {
    sync: [3, null], 'sync, no pipe': [6, null], 'sync, timeout': [4, null], async: [5, null], 'async, killed': [null, 'SIGTERM'], 'async, ignored while running': [7, null],
  }
  t.equal(rows.length, 11, 'every case ran')
  for (const [launcher, api, exitCode, signal, spawnError, rusageSource, rusageNaN] of rows) {
    const label = `${launcher}, ${api}`
    t.equal(spawnError, null, `${label}: no spawn error`)
    t.same([exitCode, signal], kept ? expected[api] : [null, null], `${label}: the exit status ${kept ? 'from the pidfd' : 'is not made up'}`)
    t.same([rusageSource, rusageNaN], ['unavailable', true], `${label}: no rusage passed off as the child's`)
  }
})

// The launcher a result names is the one its launch took, or, for a launch that never got that far
// (a { path } target that could not be opened), the one it would have taken: with SIGCHLD ignored,
// 'auto' takes the fork path wherever a pidfd is wanted (the test above), the failed open too.
t.test("SIGCHLD ignored: a { path } open that failed names the launcher 'auto' would have taken", async t => {
  const dir = tempDir(t)
  const so = buildFixtureLibrary(dir, 'ignore-sigchld')
  const missing = path.join(dir, 'no-such-dir', 'out')
  type Row = [spawnError: string | null, launcher: string]
  const out = runNodeScript<{ before: Row[], after: Row[] }>(`
    const { spawnChild, spawnChildSync } = require(${PACKAGE})
    ;(async () => {
      // killOnExit off: nothing else asks for the fork path, so 'auto' takes posix_spawn.
      const spec = { file: 'true', stdin: 'ignore', stdout: { path: ${JSON.stringify(missing)} }, stderr: 'ignore', killOnExit: false }
      const runs = async () => [spawnChildSync(spec), await spawnChild(spec), spawnChildSync({ ...spec, stdout: 'ignore' }), await spawnChild({ ...spec, stdout: 'ignore' })]
        .map(r => [r.spawnError && r.spawnError.code, r.launcher])
      const before = await runs()
      try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}) } catch {}  // no addon: its constructor ran
      const after = await runs()
      console.log(JSON.stringify({ before, after }))
    })()
  `)
  t.same(out.before, [['ENOENT', 'posix_spawn'], ['ENOENT', 'posix_spawn'], [null, 'posix_spawn'], [null, 'posix_spawn']],
    "SIGCHLD handled: 'auto' takes posix_spawn, and a failed open says so")
  t.same(out.after, [['ENOENT', 'fork'], ['ENOENT', 'fork'], [null, 'fork'], [null, 'fork']],
    "SIGCHLD ignored: 'auto' takes the fork path, and a failed open names it too (sync and async)")
})

// For a node child whose posix_spawn children are gone before their pidfds are opened: the library
// whose constructor ignores SIGCHLD (to dlopen), and the environment that preloads the shim, which
// logs each child it saw gone to `log`.
function lateChildren(t: Test): { ignore: string, env: Record<string, string>, log: string } {
  const dir = tempDir(t)
  const ignore = buildFixtureLibrary(dir, 'ignore-sigchld')
  const late = buildFixtureLibrary(dir, 'late-pidfd-open', ['-ldl'])
  const log = path.join(dir, 'gone.log')
  const env = nodeChildEnv()
  env.LD_PRELOAD = env.LD_PRELOAD ? `${env.LD_PRELOAD}:${late}` : late
  env.LATE_PIDFD_OPEN_LOG = log
  return { ignore, env, log }
}

// With SIGCHLD ignored, a posix_spawn child that exits at once can be reaped by the kernel before
// the launcher opens its pidfd (posix_spawn gives a pid, not a pidfd). A preloaded shim
// (test/fixtures/late-pidfd-open.c) holds pidfd_open back until that has happened, every time. The
// program ran, so this is no spawn error: the result has no status (lost with the child), no
// rusage, the output the child wrote, and neither a deadline nor a kill() reaches anyone (the pid
// may be another process's by then). A measured child's status comes from its helper's report.
// 'auto' takes the fork path while SIGCHLD is ignored, even where it would take posix_spawn
// (killOnExit: false): its pidfd comes with the clone, and its status is exact.
t.test('a posix_spawn child the kernel reaped before its pidfd could be opened', t => {
  const { ignore, env, log } = lateChildren(t)
  type Row = [exitCode: number | null, signal: string | null, spawnError: string | null, rusageSource: string, rusageNaN: boolean, stdout: string, timedOut: boolean, launcher: string]
  const out = runNodeScript<{ rows: Record<string, Row>, killed: boolean, streamed: string, pid: boolean }>(`
    const { spawnChild, spawnChildSync, startChild } = require(${PACKAGE})
    ;(async () => {
      try { process.dlopen({ exports: {} }, ${JSON.stringify(ignore)}) } catch {}  // no addon: its constructor ran
      const spec = { file: 'sh', args: ['-c', 'echo out; exit 3'], launcher: 'posix_spawn' }
      const row = r => [r.exitCode, r.signal, r.spawnError && r.spawnError.code, r.rusageSource, Number.isNaN(r.rusage.userCPUTime), String(r.stdout), r.timedOut, r.launcher]
      const rows = {}
      rows.sync = row(spawnChildSync(spec))
      rows['sync, deadline'] = row(spawnChildSync({ ...spec, timeout: 60000 }))
      rows.async = row(await spawnChild(spec))
      rows['async, deadline'] = row(await spawnChild({ ...spec, timeout: 60000 }))
      const child = startChild(spec)
      let streamed = ''
      child.stdout.on('data', d => { streamed += d })
      const pid = child.pid > 0
      const killed = child.kill('SIGKILL')
      rows.started = row(await child.result)
      rows.measured = row(spawnChildSync({ ...spec, measure: true }))
      rows.auto = row(spawnChildSync({ ...spec, launcher: 'auto', killOnExit: false }))
      console.log(JSON.stringify({ rows, killed, streamed, pid }))
    })()
  `, { env })
  const lost: Row = [null, null, null, 'unavailable', true, 'out\n', false, 'posix_spawn']
  t.same(out.rows.sync, lost, 'sync: no spawn error, the status lost and said to be, the output kept')
  t.same(out.rows['sync, deadline'], lost, 'sync with a deadline: the same, at once (no deadline waited out)')
  t.same(out.rows.async, lost, 'async: the same')
  t.same(out.rows['async, deadline'], lost, 'async with a deadline: the same')
  t.same(out.rows.started, lost, 'startChild: the same')
  t.equal(out.streamed, 'out\n', 'startChild: the stream had the output')
  t.ok(out.pid, 'startChild: the pid the child had')
  t.equal(out.killed, false, 'kill() after it was gone reached nobody')
  t.same(out.rows.measured, [3, null, null, 'helper', false, 'out\n', false, 'posix_spawn'], "measured: the status and rusage from the helper's report")
  t.same(out.rows.auto, [kernelKeepsStatus() ? 3 : null, null, null, 'unavailable', true, 'out\n', false, 'fork'],
    "'auto' took the fork path, whose pidfd keeps the status" + (kernelKeepsStatus() ? '' : ' (here: the kernel predates PIDFD_INFO_EXIT)'))
  // Every posix_spawn launch above but the measured one had its pidfd_open find the child gone.
  t.ok(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length >= 5, 'the shim saw each child gone before its pidfd was opened')
  t.end()
})

// The same gone child (its pidfd stood in for by an fd readable from the start) met by the hostile
// paths every other child goes through: a stream listener that throws (an uncaught exception, and
// the result still arrives with the whole output), and a worker terminated while its gone child is
// being settled (nothing crashes; the process's next spawn is as exact as before).
t.test('a child gone before its pidfd, with a throwing listener and a worker terminated mid-flight', t => {
  const { ignore, env, log } = lateChildren(t)
  type Row = [exitCode: number | null, signal: string | null, spawnError: string | null, rusageSource: string, stdout: string]
  const out = runNodeScript<{ throwing: Row, thrown: string[], workerExit: number, workerStarted: number, after: Row }>(`
    const { spawnChild, startChild } = require(${PACKAGE})
    const { Worker } = require('node:worker_threads')
    ;(async () => {
      try { process.dlopen({ exports: {} }, ${JSON.stringify(ignore)}) } catch {}  // no addon: its constructor ran
      const spec = { file: 'sh', args: ['-c', 'echo out; exit 3'], launcher: 'posix_spawn' }
      const row = r => [r.exitCode, r.signal, r.spawnError && r.spawnError.code, r.rusageSource, String(r.stdout)]
      const thrown = []
      process.on('uncaughtException', e => thrown.push(e.message))
      const child = startChild(spec)
      child.stdout.on('data', () => { throw new Error('listener threw') })
      const throwing = row(await child.result)
      // Each worker starts gone children and is terminated as soon as it says they were started:
      // their results are being settled (or about to be) as its environment goes.
      let workerStarted = 0, workerExit = 0
      for (let i = 0; i < 5; i++) {
        const worker = new Worker(\`
          const { spawnChild, startChild } = require(\${JSON.stringify(${PACKAGE})})
          const { parentPort } = require('node:worker_threads')
          const spec = \${JSON.stringify(spec)}
          for (let j = 0; j < 3; j++) spawnChild(spec)
          startChild(spec).stdout.on('data', () => { throw new Error('worker listener threw') })
          parentPort.postMessage('started')
        \`, { eval: true })
        worker.on('error', () => {})
        // Its exit code from 'exit': the worker's own listener may throw, and end it, before
        // terminate() is called, which then resolves to undefined.
        const exited = new Promise(resolve => worker.once('exit', resolve))
        await new Promise(resolve => worker.once('message', () => { workerStarted++; resolve() }))
        await worker.terminate()
        workerExit += await exited
      }
      const after = row(await spawnChild(spec))
      console.log(JSON.stringify({ throwing, thrown, workerExit, workerStarted, after }))
    })()
  `, { env })
  const lost: Row = [null, null, null, 'unavailable', 'out\n']
  t.same(out.throwing, lost, 'a throwing listener: the result still arrives, the status lost and said to be, the whole output kept')
  t.ok(out.thrown.includes('listener threw'), 'the listener\'s throw is an uncaught exception of the process', { thrown: out.thrown })
  t.equal(out.workerStarted, 5, 'every worker started its children before it was terminated')
  t.equal(out.workerExit, 5, 'each worker exited with code 1, as a terminated worker (or one ended by its own uncaught exception) does')
  t.same(out.after, lost, 'the process goes on: its next gone child is reported as exactly')
  // 1 + 5 × 4 + 1 posix_spawn launches, each with its pidfd_open held back until the child was gone
  // (a worker terminated early may not have reached all of its own).
  t.ok(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length >= 7, 'the shim saw the children gone before their pidfds were opened')
  t.end()
})

// Whether this kernel keeps an exit status in the pidfd after the reap (PIDFD_INFO_EXIT, Linux 6.15).
function kernelKeepsStatus(): boolean {
  const [major = 0, minor = 0] = os.release().split('.').map(Number)
  return major > 6 || (major === 6 && minor >= 15)
}

// With SIGCHLD ignored the kernel reaps a child the moment it exits. A fork-path child that failed
// before its exec (ENOENT at exec, a cwd it could not enter) was then reaped by no one here: the
// wait4 found nothing, and the result said exitCode 0 with zero rusage said to be wait4's, a
// program that never ran looking like a success. Now 127 and 126 as always, and no rusage.
t.test('SIGCHLD ignored: a fork-path start that fails is 127 or 126, never 0', t => {
  const { ignore } = lateChildren(t)
  const out = runNodeScript<Record<string, [number | null, string | null, string]>>(`
    const { spawnChild, spawnChildSync } = require(${PACKAGE})
    ;(async () => {
      try { process.dlopen({ exports: {} }, ${JSON.stringify(ignore)}) } catch {}  // no addon: its constructor ran
      const row = r => [r.exitCode, r.spawnError && r.spawnError.stage, r.rusageSource]
      const rows = {}
      for (const launcher of ['fork', 'posix_spawn']) {
        rows['sync exec ' + launcher] = row(spawnChildSync({ file: '/nonexistent/program', launcher }))
        rows['sync chdir ' + launcher] = row(spawnChildSync({ file: 'true', cwd: '/nonexistent/dir', launcher }))
        rows['async exec ' + launcher] = row(await spawnChild({ file: '/nonexistent/program', launcher }))
      }
      // A stage only the fork path's child has (CPUs, ids, a terminal).
      rows['sync affinity'] = row(spawnChildSync({ file: 'true', cpus: [1000], launcher: 'fork' }))
      rows['async affinity'] = row(await spawnChild({ file: 'true', cpus: [1000], launcher: 'fork' }))
      console.log(JSON.stringify(rows))
    })()
  `)
  for (const launcher of ['fork', 'posix_spawn']) {
    t.same(out[`sync exec ${launcher}`], [127, 'exec', 'unavailable'], `sync, exec ENOENT, ${launcher}`)
    t.same(out[`sync chdir ${launcher}`], [126, 'chdir', 'unavailable'], `sync, chdir ENOENT, ${launcher}`)
    t.same(out[`async exec ${launcher}`], [127, 'exec', 'unavailable'], `async, exec ENOENT, ${launcher}`)
  }
  t.same(out['sync affinity'], [126, 'affinity', 'unavailable'], 'sync, a CPU that is not there (fork only)')
  t.same(out['async affinity'], [126, 'affinity', 'unavailable'], 'async, the same')
  t.end()
})
