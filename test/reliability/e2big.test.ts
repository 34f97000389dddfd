// Fault: an argv (or environment) too big for exec. One string longer than MAX_ARG_STRLEN
// (128 KiB), or more than ARG_MAX in all: exec fails with E2BIG, reported as an exec failure on
// every path (API × launcher × measure), with the PATH walk stopping there (E2BIG is not "try the
// next directory").
import t from 'tap'
import type { ChildSpec } from '../../lib/index.js'
import { eachPath } from '../helpers.js'
import { baseline } from './helpers.js'

const oneHuge = 'x'.repeat(200 * 1024)
const many = Array.from({ length: 64 }, () => 'y'.repeat(64 * 1024)) // 4 MiB in all

const rows: Array<[string, Partial<ChildSpec>]> = [
  ['one argument past MAX_ARG_STRLEN', { args: [oneHuge] }],
  ['4 MiB of arguments', { args: many }],
  ['argv0 past MAX_ARG_STRLEN', { argv0: oneHuge }],
  ['an environment value past MAX_ARG_STRLEN', { env: { PATH: process.env.PATH, BIG: oneHuge } }],
]

t.test('E2BIG is an exec failure', t => eachPath(t, '', async (t, { run }) => {
  const before = baseline()
  for (const [name, extra] of rows) for (const file of ['/bin/true', 'true']) {
    const r = await run({ file, timeout: 10000, ...extra })
    t.same(
      { exitCode: r.exitCode, signal: r.signal, stage: r.spawnError?.stage, code: r.spawnError?.code, diagnostic: r.diagnostic, timedOut: r.timedOut },
      { exitCode: 126, signal: null, stage: 'exec', code: 'E2BIG', diagnostic: 'Program could not be executed', timedOut: false },
      `${file}: ${name}`,
    )
  }
  // Just under the limits works.
  const r = await run({ file: 'sh', args: ['-c', 'echo ${#1}', 'sh', 'z'.repeat(128 * 1024 - 1)] })
  t.equal(r.stdout.toString(), `${128 * 1024 - 1}\n`, 'an argument of MAX_ARG_STRLEN - 1 bytes gets through')
  await before.check(t)
}))
