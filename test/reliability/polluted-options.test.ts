// Nested options and arrays under polluted prototypes, and views that lie about their memory: a
// hostile round had an inherited `path` redirect a child's output into a file, an inherited `soft`
// give it RLIMIT_NOFILE 1, Array.prototype[0] inject an argument, a Map of rlimits set none, and
// a Buffer whose own byteLength lied type bytes from outside it (Buffer's pool) into a terminal.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { tempDir } from '../helpers.js'
import { PACKAGE, runNodeScript } from './helpers.js'

t.test('options inherited from a polluted Object.prototype or Array.prototype are never read', async t => {
  const dir = tempDir(t)
  const polluted = path.join(dir, 'polluted.txt')
  const rows = runNodeScript<Record<string, string>>(`
    const { spawnChildSync } = require(${PACKAGE})
    const outcome = (spec) => {
      try {
        const r = spawnChildSync(spec)
        return 'ran: ' + (r.spawnError ? r.spawnError.stage + ' ' + r.spawnError.code : 'exit ' + r.exitCode) + ' ' + JSON.stringify(r.stdout.toString())
      } catch (e) { return 'refused: ' + e.code + ' ' + e.message }
    }
    Object.prototype.path = ${JSON.stringify(polluted)}
    Object.prototype.append = true
    Object.prototype.columns = 7
    Object.prototype.soft = 1
    Array.prototype[0] = '--injected'
    const rows = {
      'stdout: {}': outcome({ file: 'echo', args: ['leaked'], stdout: {} }),
      'terminal: { rows: 5 }': outcome({ file: 'sh', args: ['-c', 'stty size'], terminal: { rows: 5 } }),
      'rlimits.nofile: { hard: 100 }': outcome({ file: 'sh', args: ['-c', 'ulimit -Sn'], rlimits: { nofile: { hard: 100 } } }),
      // eslint-disable-next-line no-sparse-arrays
      'args: [, x]': outcome({ file: 'echo', args: [, 'x'] }),
    }
    delete Object.prototype.path; delete Object.prototype.append; delete Object.prototype.columns; delete Object.prototype.soft
    Array.prototype[0] = 0
    // eslint-disable-next-line no-sparse-arrays
    rows['cpus: [,]'] = outcome({ file: 'true', cpus: [,] })
    // eslint-disable-next-line no-sparse-arrays
    rows['groups: [,]'] = outcome({ file: 'true', groups: [,] })
    delete Array.prototype[0]
    console.log(JSON.stringify(rows))
  `)
  t.match(rows['stdout: {}'], /^refused: ERR_INVALID_ARG_TYPE stdout\.path must be a string/, 'stdout: {} is refused for its missing path, not written to the inherited one')
  t.notOk(fs.existsSync(polluted), 'nothing was written to the inherited path')
  t.match(rows['terminal: { rows: 5 }'], /^refused: ERR_INVALID_ARG_TYPE terminal\.columns/, 'terminal without its own columns is refused')
  t.match(rows['rlimits.nofile: { hard: 100 }'], /^refused: ERR_INVALID_ARG_TYPE rlimits\.nofile\.soft/, 'an rlimit without its own soft is refused')
  t.match(rows['args: [, x]'], /^refused: ERR_INVALID_ARG_TYPE args\[0\] must be a string/, 'a hole in args is refused, not Array.prototype[0]')
  t.match(rows['cpus: [,]'], /^refused: ERR_INVALID_ARG_TYPE cpus\[0\]/, 'a hole in cpus is refused')
  t.match(rows['groups: [,]'], /^refused: ERR_INVALID_ARG_TYPE groups\[0\]/, 'a hole in groups is refused')
})

t.test('rlimits as a Map, or with an unknown key, is refused', async t => {
  t.throws(() => spawnChildSync({ file: 'true', rlimits: new Map([['nofile', 10]]) as never }), { code: 'ERR_INVALID_ARG_TYPE', field: 'rlimits' }, 'a Map would have been no limits at all')
  t.throws(() => spawnChildSync({ file: 'true', rlimits: { nofile: { soft: 10, hard: 10, bogus: 1 } as never } }), { code: 'ERR_INVALID_ARG_VALUE', field: 'rlimits.nofile.bogus' }, 'an unknown key of a limit')
})

t.test("input is the view's own memory, whatever its accessors say", async t => {
  class Lying extends Float32Array {
    override get byteLength(): number { return 0 }
  }
  const floats = new Lying(new Uint8Array([8, 9, 10, 11, 12, 13, 14, 15]).buffer)
  t.equal(spawnChildSync({ file: 'od', args: ['-An', '-tx1'], input: floats }).stdout.toString().trim(), '08 09 0a 0b 0c 0d 0e 0f', 'a subclass whose byteLength says 0: its 8 bytes')
  const view = new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 2)
  Object.defineProperty(view, 'buffer', { value: new ArrayBuffer(0) })
  t.equal(spawnChildSync({ file: 'od', args: ['-An', '-tx1'], input: view }).stdout.toString().trim(), '03 04', "a DataView with an own lying buffer: its own bytes")
  // A small Buffer lives in Buffer's shared pool, beside other Buffers' bytes.
  const secret = Buffer.from('SECRET-IN-POOL')
  const input = Buffer.from('hi\n')
  Object.defineProperty(input, 'byteOffset', { value: secret.byteOffset })
  Object.defineProperty(input, 'byteLength', { value: 64 })
  const r = spawnChildSync({ file: 'cat', terminal: true, input, timeout: 60000 })
  t.notMatch(r.stdout.toString(), /SECRET/, 'a terminal input whose own byteOffset and byteLength lie: none of the pool typed')
  t.match(r.stdout.toString(), /hi/, 'its own bytes were')
  void secret
})

t.test('a BigInt option is refused with a typed error naming it', async t => {
  for (const field of ['stdin', 'stdout', 'stderr', 'launcher']) {
    t.throws(() => spawnChildSync({ file: 'true', [field]: 1n } as never), { code: 'ERR_INVALID_ARG_VALUE', field, message: /received bigint 1/ }, field)
  }
})
