// Fault: user code has its own SIGALRM and SIGCHLD handlers (process.on), and spawns with Node's
// child_process at the same time. The harness's results stay exact (its deadlines, its statuses,
// its rusage), the user's SIGALRM listener sees only the alarms that are not the harness's, and
// neither side reaps the other's children. Every path (API × launcher × measure).
import { spawn } from 'node:child_process'
import t from 'tap'
import { APIS, eachPath } from '../helpers.js'
import { baseline } from './helpers.js'

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
