// Fuzzing the addon's own boundary: the spec normalize.ts hands to native.spawnSync and
// native.spawnAsync, with one to three fields set to values of the right JS type that normalize
// never produces (the async call once crashed the process on a spec that asked for no pidfd, and
// the sync one leaked pipes when it blocked in wait4 without closing them). The addon
// must still either refuse the spec with a TypeError (ERR_INVALID_ARG_TYPE, naming the field)
// or run it to a result; never crash, hang, leak an fd or leave a child behind.
//
// Safety: every program is `true` (or the measuring helper running it); paths are in a private
// temp directory, which is also the test's cwd.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { native, rawNumbers, specNumbers, type NativeSpec } from '../../lib/spawn/native.js'
import { normalizeSpec } from '../../lib/spawn/normalize.js'
import type { ChildSpec } from '../../lib/index.js'
import { childPids, eventually, openFds, startReaper, tempDir } from '../helpers.js'
import { fuzz } from './budget.js'

const work = tempDir(t, 'tileharness-fuzz-native-')
const home = process.cwd()
process.chdir(work)
t.teardown(() => process.chdir(home))

const BASES: ChildSpec[] = [
  { file: 'true', stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', launcher: 'posix_spawn' },
  { file: 'true', stdout: 'pipe', stderr: 'pipe', input: 'x', launcher: 'posix_spawn' },
  { file: 'true', stdout: 'pipe', launcher: 'fork', timeout: 2000 },
  { file: 'true', stdout: 'pipe', measure: true, timeout: 2000 },
  { file: 'true', stdout: { path: 'out' }, setsid: true, rlimits: { core: 0 } },
]

const number = fc.constantFrom(0, -1, -2, 3, 65, 1023, 1024, 2 ** 31, 2 ** 32 + 3, 1e300, -1e300, NaN, Infinity, 0.5)
const bool = fc.boolean()
/** Per field, values of the type the addon expects that normalize would not produce. */
const MUTATIONS: Record<string, fc.Arbitrary<unknown>> = {
  timeout: number, killSignal: number, forceKillAfterDelay: number, graceTimeout: number, waitDelay: number,
  maxBuffer: number, uid: fc.constantFrom(-1, 65534, 2 ** 32 + 1, NaN), gid: fc.constantFrom(-1, 65534, 2 ** 32 + 1, NaN),
  umask: number, processGroup: fc.constantFrom(-1, 0, 1, 2 ** 31, NaN), launcher: number, reportFd: number,
  setsid: bool, deathSignal: bool, measure: bool, group: bool, controllingTerminal: bool,
  fds: fc.constantFrom([[3, 100000]], [[3, -1]], [[1023, 0]], [[3, 0], [3, 1]], [[4, 0], [3, 1]], [[0, 0]], [[1024, 0]], [[3, 1.5]]),
  cpus: fc.constantFrom([100000], [-1], [0, 0], [1.5], []),
  groups: fc.constantFrom([4294967295], [], [-1], null),
  rlimits: fc.constantFrom([[9999, 1, 1]], [[-1, 1, 1]], [[7, -5, 1e300]], [[7, 1]], [[7, 1, 1, 1]]),
  argv: fc.constantFrom([], [''], ['true', 'a\u00e9\u{1F600}']),
  env: fc.constantFrom(['noequals'], [], ['='], null),
  cwd: fc.constantFrom('/nonexistent', '', '.', null),
  file: fc.constantFrom('', 'true', '/nonexistent/th-fuzz', '.'),
  terminal: fc.constantFrom([80, 24], [0, 0], [65536, 1], null),
  stdio: fc.constantFrom(
    [{ kind: 3, fd: 100000 }, { kind: 1 }, { kind: 1 }], [{ kind: 3, fd: -1 }, { kind: 1 }, { kind: 1 }],
    [{ kind: 6 }, { kind: 6 }, { kind: 6 }], [{ kind: 5 }, { kind: 6 }, { kind: 5 }], [{ kind: 4, path: '' }, { kind: 1 }, { kind: 1 }],
    [{ kind: 2 }, { kind: 2 }, { kind: 2 }], [{ kind: 7 }, { kind: 7 }, { kind: 7 }], [{ kind: 99 }, { kind: 1 }, { kind: 1 }],
    [{ kind: 4, path: 'sub/missing' }, { kind: 4, path: 'out', append: true }, { kind: 1 }]),
}

const mutated = fc.record({
  base: fc.nat({ max: BASES.length - 1 }),
  changes: fc.uniqueArray(fc.constantFrom(...Object.keys(MUTATIONS)), { minLength: 1, maxLength: 3 })
    .chain(keys => fc.tuple(...keys.map(key => MUTATIONS[key]!.map(value => [key, value] as const)))),
})

/** What a call may end in: a refusal naming the native spec, or a result (its numbers). */
function refused(err: unknown): boolean {
  return err instanceof TypeError && (err as NodeJS.ErrnoException).code === 'ERR_INVALID_ARG_TYPE' && /^native spec: /.test(err.message)
}

function specOf(g: { base: number; changes: ReadonlyArray<readonly [string, unknown]> }, api: 'sync' | 'async'): NativeSpec {
  const spec = { ...normalizeSpec(BASES[g.base]!, api).native } as Record<string, unknown>
  for (const [key, value] of g.changes) spec[key] = value
  return spec as unknown as NativeSpec
}

// The reaper is started before the baseline: a spec with a negative graceTimeout and a deadline
// that comes before `true` has exited hands a child to it (seed -1258882152 on Node 22 did).
await startReaper()
const fdsBefore = openFds()
const childrenBefore = childPids()

t.test('native.spawnSync: a refusal or a result', async t => {
  await fuzz(t, 'native.spawnSync', fc.asyncProperty(mutated, async g => {
    const numbers = rawNumbers()
    try {
      const spec = specOf(g, 'sync')
      native.spawnSync(spec, specNumbers(spec), null, numbers)
    } catch (err) {
      if (!refused(err)) throw err
      return
    }
    if (!(numbers[0]! >= 0)) throw new Error(`no result: pid slot ${numbers[0]}`)
  }), 150)
})

t.test('native.spawnAsync: a refusal or a result, and the callback comes', async t => {
  await fuzz(t, 'native.spawnAsync', fc.asyncProperty(mutated, async g => {
    let outcome
    const done = new Promise<Float64Array>(resolve => {
      try {
        const spec = specOf(g, 'async')
        outcome = native.spawnAsync(spec, specNumbers(spec), null, numbers => resolve(numbers), null, null, null)
      } catch (err) {
        if (!refused(err)) throw err
        outcome = null
      }
    })
    if (outcome === null) return
    if ('numbers' in outcome!) return
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('no result within 10 s')), 10000) })
    try {
      await Promise.race([done, late])
    } finally {
      clearTimeout(timer)
    }
  }), 150)
})

t.test('nothing left behind', async t => {
  t.ok(await eventually(() => JSON.stringify(childPids()) === JSON.stringify(childrenBefore)), 'no children left behind')
  t.ok(await eventually(() => JSON.stringify(openFds()) === JSON.stringify(fdsBefore)), 'no fds left behind')
  t.same(openFds(), fdsBefore)
  t.same(fs.readdirSync(work).filter(name => !['out', 'sub'].includes(name)).map(name => path.join(work, name)), [], 'only the redirect target in the temp dir')
})
