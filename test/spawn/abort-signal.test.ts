// One AbortSignal shared by many children: one listener on it, never Node's leak warning, every
// child killed by the abort, nothing left on the signal once they are done (lib/abort.ts).
import { getEventListeners } from 'node:events'
import t from 'tap'
import { isAborted, whenAborted } from '../../lib/abort.js'
import { spawnChild, startChild, type ChildResult } from '../../lib/index.js'
import { REPO_ROOT } from '../helpers.js'

const quiet = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' } as const

/** Node's leak warnings while `body` runs, and for a turn of the loop after it (they come on the
 * next tick). Only those: others come whenever they come (Node 26 deprecates the module.register
 * that tap's loader calls, and says so during whichever test runs first). */
async function warningsDuring(t: Tap.Test, body: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = []
  const onWarning = (w: Error): void => { if (w.name === 'MaxListenersExceededWarning') warnings.push(`${w.name}: ${w.message}`) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  await body()
  await new Promise((resolve) => setImmediate(resolve))
  process.off('warning', onWarning)
  return warnings
}

for (const api of ['spawnChild', 'startChild'] as const) {
  t.test(`${api}: 24 children on one signal: one listener, no leak warning, all killed by the abort`, async (t) => {
    const controller = new AbortController()
    const signal = controller.signal
    let results: ChildResult[] = []
    const warnings = await warningsDuring(t, async () => {
      const started = Array.from({ length: 24 }, () => {
        const spec = { ...quiet, file: 'sleep', args: ['100'], signal }
        return api === 'spawnChild' ? spawnChild(spec) : startChild(spec).result
      })
      t.equal(getEventListeners(signal, 'abort').length, 1, 'one listener on the signal for all 24')
      controller.abort()
      results = await Promise.all(started)
    })
    t.same(warnings, [], 'no MaxListenersExceededWarning (a listener each had been 24 on the signal)')
    t.same(results.map((r) => [r.aborted, r.signal]), Array(24).fill([true, 'SIGKILL']), 'each child was killed by the abort, and says so')
    t.equal(getEventListeners(signal, 'abort').length, 0, 'nothing left on the signal')
  })
}

for (const api of ['spawnChild', 'startChild'] as const) {
  t.test(`${api}: an earlier listener that stops the abort event does not keep the children alive`, async (t) => {
    // A shared signal (a daemon's shutdown signal) has listeners of others. One registered first
    // that calls stopImmediatePropagation() kept ours from running: the children ran on.
    const controller = new AbortController()
    let stopped = 0
    controller.signal.addEventListener('abort', (event) => { stopped++; event.stopImmediatePropagation() })
    const started = Array.from({ length: 3 }, () => {
      const spec = { ...quiet, file: 'sleep', args: ['100'], signal: controller.signal }
      return api === 'spawnChild' ? spawnChild(spec) : startChild(spec).result
    })
    let later = 0
    controller.signal.addEventListener('abort', () => { later++ })
    controller.abort()
    const results = await Promise.all(started)
    t.equal(stopped, 1, 'the stopping listener ran')
    t.equal(later, 0, "a later plain listener is still stopped: only ours resists")
    t.same(results.map((r) => [r.aborted, r.signal]), Array(3).fill([true, 'SIGKILL']), 'each child was killed by the abort')
  })
}

t.test('the listener goes when the last child on the signal is done', async (t) => {
  // Node keeps an AbortSignal.timeout() that has an abort listener alive until it fires: a listener
  // left behind would hold every such signal (and what it holds) for its whole timeout.
  const signal = AbortSignal.timeout(3_600_000)
  const first = startChild({ ...quiet, file: 'sleep', args: ['100'], signal })
  const second = spawnChild({ ...quiet, file: 'true', signal })
  t.equal(getEventListeners(signal, 'abort').length, 1, 'one listener while two children run')
  t.equal((await second).exitCode, 0)
  t.equal(getEventListeners(signal, 'abort').length, 1, 'still there while the first runs')
  first.kill()
  t.equal((await first.result).signal, 'SIGKILL')
  t.equal(getEventListeners(signal, 'abort').length, 0, 'gone with the last child')
  // And comes back for the next one.
  const third = startChild({ ...quiet, file: 'sleep', args: ['100'], signal })
  t.equal(getEventListeners(signal, 'abort').length, 1, 'a later child listens again')
  third.kill()
  await third.result
  t.equal(getEventListeners(signal, 'abort').length, 0)
})

t.test("an 'abort' event dispatched by hand is not an abort", async (t) => {
  const controller = new AbortController()
  const child = startChild({ ...quiet, file: 'sleep', args: ['100'], signal: controller.signal })
  controller.signal.dispatchEvent(new Event('abort'))
  t.equal(isAborted(controller.signal), false)
  t.equal(getEventListeners(controller.signal, 'abort').length, 1, 'still listening')
  // Still running: the signal it is sent now is the one it ends by.
  child.kill('SIGTERM')
  const r = await child.result
  t.same([r.aborted, r.signal], [false, 'SIGTERM'], 'not killed by the fake event, not reported aborted')
  t.equal(getEventListeners(controller.signal, 'abort').length, 0)

  const next = startChild({ ...quiet, file: 'sleep', args: ['100'], signal: controller.signal })
  controller.signal.dispatchEvent(new Event('abort'))
  controller.abort()
  const aborted = await next.result
  t.same([aborted.aborted, aborted.signal], [true, 'SIGKILL'], 'the real abort after a fake one still kills')
})

t.test('whenAborted: each registration its own, stopped one by one', async (t) => {
  const controller = new AbortController()
  const calls: string[] = []
  const a = (): void => { calls.push('a') }
  const stopA1 = whenAborted(controller.signal, a)
  whenAborted(controller.signal, a)
  const stopB = whenAborted(controller.signal, () => { calls.push('b') })
  whenAborted(controller.signal, () => { calls.push('c') })
  stopA1()
  stopA1() // twice: still only the one registration
  stopB()
  t.equal(getEventListeners(controller.signal, 'abort').length, 1)
  controller.abort()
  t.same(calls, ['a', 'c'], 'the same callback registered twice and stopped once is called once; a stopped one is not')
  t.equal(getEventListeners(controller.signal, 'abort').length, 0, 'the listener goes with the abort')
  stopB() // after the abort: nothing to stop
  controller.signal.dispatchEvent(new Event('abort'))
  t.same(calls, ['a', 'c'], 'called once only')

  const other = new AbortController()
  const stop = whenAborted(other.signal, () => { calls.push('never') })
  stop()
  t.equal(getEventListeners(other.signal, 'abort').length, 0, 'the last one stopped: the listener goes')
  other.abort()
  t.same(calls, ['a', 'c'])
})

t.test('a callback that throws: the others still run, the first throw is uncaught', async (t) => {
  // In a process of its own: the throw is the listener's, an uncaught exception.
  const code = `
    const { whenAborted } = await import(${JSON.stringify(`${REPO_ROOT}/dist/abort.js`)})
    const controller = new AbortController()
    const ran = []
    process.on('uncaughtException', (err) => { console.log('uncaught ' + err.message + ' after ' + ran.join(',')) })
    whenAborted(controller.signal, () => { ran.push(1); throw new Error('first') })
    whenAborted(controller.signal, () => { ran.push(2); throw new Error('second') })
    whenAborted(controller.signal, () => { ran.push(3) })
    controller.abort()
  `
  const r = await spawnChild({ file: process.execPath, args: ['--input-type=module', '-e', code], timeout: 30000 })
  t.equal(r.stdout.toString(), 'uncaught first after 1,2,3\n', r.stderr.toString())
})
