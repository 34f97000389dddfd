// Options as Node users write them (child_process and fs): null for "not given", file: URLs for
// paths, any ArrayBufferView as input, and signal names as glibc and Node spell them, with a
// death reported by Node's name for the signal. Every path runs each row.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { eachPath, tempDir } from '../helpers.js'

t.test('null is "not given"', t => eachPath(t, '', async (t, { run }) => {
  const r = await run({
    file: 'sh', args: ['-c', 'echo "$0 ok"'], argv0: null, env: null, cwd: null, stdin: null, input: null, stdout: null,
    stderr: null, timeout: null, killSignal: null, forceKillAfterDelay: null, graceTimeout: null, waitDelay: null,
    setsid: null, rlimits: null, maxBuffer: null, killOnExit: null, uid: null, gid: null, groups: null, umask: null,
    processGroup: null, cpus: null,
  })
  t.same({ exitCode: r.exitCode, out: r.stdout.toString(), spawnError: r.spawnError }, { exitCode: 0, out: 'sh ok\n', spawnError: null }, 'every default applies')
}))

t.test('file and cwd as file: URLs', t => eachPath(t, '', async (t, { run }) => {
  const dir = tempDir(t)
  const r = await run({ file: pathToFileURL('/bin/sh'), args: ['-c', 'pwd'], cwd: pathToFileURL(dir) })
  t.same({ exitCode: r.exitCode, out: r.stdout.toString() }, { exitCode: 0, out: `${fs.realpathSync(dir)}\n` }, 'the URL paths are the paths')
}))

t.test('input as any ArrayBufferView: its bytes, as they are in memory', t => eachPath(t, '', async (t, { run }) => {
  const backing = new Uint8Array([0, 1, 104, 105, 10, 2, 3]).buffer
  for (const [name, view] of [
    ['DataView with an offset', new DataView(backing, 2, 3)],
    ['Int8Array with an offset', new Int8Array(backing, 2, 3)],
    ['Uint16Array', new Uint16Array([0x6968, 0x0a21])],
    ['Float64Array', new Float64Array([1.5])],
  ] as const) {
    const r = await run({ file: 'od', args: ['-An', '-tx1'], input: view })
    const expected = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('hex').replace(/(..)/g, ' $1')
    t.equal(r.stdout.toString().replace(/\s+/g, ' ').trim(), expected.trim(), name)
  }
}))

t.test("signal names: glibc's and Node's aliases accepted, a death reported by Node's name", t => eachPath(t, '', async (t, { run }) => {
  for (const killSignal of ['SIGIO', 'SIGPOLL', 'IO', 'SIGIOT', 'SIGABRT', 'SIGCLD', 'SIGCHLD']) {
    t.equal((await run({ file: 'true', killSignal })).exitCode, 0, `killSignal '${killSignal}' is accepted`)
  }
  for (const number of [6, 29]) {
    const ours = await run({ file: 'sh', args: ['-c', `kill -${number} $$`] })
    const node = spawnSync('sh', ['-c', `kill -${number} $$`])
    t.equal(ours.signal, node.signal, `signal ${number}: ${node.signal}, as child_process reports it`)
  }
}))
