// tileiras's process nesting (docs/toolchain-contract.md, "Driving the driver"): an orchestrator
// (`tileharness run`, as nvcc would be) starts the driver (`tileharness compile`), which starts
// the real ptxas. Three properties hold through both levels:
//   (a) cancellation: a timeout on the orchestrator, with and without --setsid, leaves no ptxas
//       running and nothing on disk (the PTX too big for argv went into a memfd);
//   (b) the environment: a variable set at the top reaches ptxas unchanged;
//   (c) errors: ptxas's diagnostic arrives at the top verbatim, with the driver's status 5.
//
// How the test sees ptxas without timing anything: `ptxas` on the compile's PATH is a stand-in
// script that opens a FIFO (fd 9), writes its pid there, and execs the real ptxas, which inherits
// fd 9 and holds it until it dies. So the FIFO's reader sees the pid when ptxas starts and EOF
// when the last holder, ptxas, is gone: both are events. The big module keeps ptxas 13.0 busy
// for many minutes, far longer than any test, so the orchestrator's deadline lands while ptxas
// runs whenever ptxas has started by then; when it has not (a slow machine), the row runs again
// with a deadline twice as long.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, startChild } from '../../lib/index.js'
import { runPtxas } from '../../lib/cuda/index.js'
import { CLI_MAIN as MAIN, processState, tempDir } from '../helpers.js'
import { PTXAS, bigPtx, kernelPtx, skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

/** How long a ptxas that should already be dead is waited for before the row fails. */
const OUTLIVED_MS = 60_000

/**
 * A module ptxas 13.0 takes many minutes over (a long chain of dependent FMAs at -O3), and larger
 * than one argv string, so it goes to ptxas by the non-argv route.
 */
function slowPtx(): string {
  const n = 20000
  const lines = ['.version 8.8', '.target sm_100', '.address_size 64', '.visible .entry slow(.param .u64 out)', '{',
    ` .reg .f32 %f<${n + 2}>;`, ' .reg .b64 %rd<2>;', ' ld.param.u64 %rd1, [out];', ' mov.f32 %f0, 0f3F800000;', ' mov.f32 %f1, 0f3F800000;']
  for (let i = 2; i < n + 2; i++) lines.push(` fma.rn.f32 %f${i}, %f${i - 1}, %f${i - 2}, %f${i >> 1};`)
  lines.push(` st.global.f32 [%rd1], %f${n + 1};`, ' ret;', '}', '')
  return lines.join('\n')
}

/** A `ptxas` stand-in in dir/bin: reports to the FIFO $TH_PTXAS_WATCH, records $PTXAS_KNOBS_DEFAULTS, execs the real one. */
function ptxasStandIn(dir: string): string {
  const bin = path.join(dir, 'bin')
  fs.mkdirSync(bin)
  fs.writeFileSync(path.join(bin, 'ptxas'), [
    '#!/bin/sh',
    'if [ -n "$TH_PTXAS_WATCH" ]; then exec 9>"$TH_PTXAS_WATCH"; echo $$ >&9; fi',
    'if [ -n "$TH_PTXAS_SEEN" ]; then printf %s "$PTXAS_KNOBS_DEFAULTS" > "$TH_PTXAS_SEEN"; fi',
    `exec '${PTXAS}' "$@"`,
    '',
  ].join('\n'), { mode: 0o755 })
  return bin
}

/**
 * Watches the FIFO: `started` resolves with ptxas's pid when it writes it, `gone` when every
 * writer has closed it (ptxas has died). `release()` unblocks a reader whose writer never came.
 */
function watchPtxas(fifo: string) {
  let onPid: (pid: number) => void
  let onGone: () => void
  const started = new Promise<number>((resolve) => { onPid = resolve })
  const gone = new Promise<void>((resolve) => { onGone = resolve })
  let text = ''
  // A blocking open, on the threadpool: it completes when a writer (the stand-in) opens the FIFO.
  fs.open(fifo, 'r', (error, fd) => {
    if (error) throw error
    const socket = new net.Socket({ fd, readable: true, writable: false })
    socket.on('data', (chunk) => {
      text += chunk.toString()
      if (text.includes('\n')) onPid(Number(text.trim()))
    })
    socket.on('end', () => { socket.destroy(); onGone() })
  })
  return {
    started,
    gone,
    release() {
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
      } catch {
        // ENXIO: no reader is waiting any more.
      }
    },
  }
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout
  return Promise.race([promise, new Promise<'timed out'>((resolve) => { timer = setTimeout(() => resolve('timed out'), ms) })])
    .finally(() => clearTimeout(timer))
}

t.test('(a) a timeout on the orchestrator leaves no ptxas and no file, with and without --setsid', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const bin = ptxasStandIn(dir)
  fs.writeFileSync(path.join(dir, 'big.ptx'), slowPtx())
  t.ok(fs.statSync(path.join(dir, 'big.ptx')).size > 128 * 1024, 'the module does not fit in one argv string')
  for (const setsid of [false, true]) {
    const name = setsid ? 'with --setsid' : 'without --setsid'
    let outcome: { exitCode: number | null; stderr: string; pid: number; tmp: string; cwd: string } | null = null
    for (let deadline = 2000; outcome === null && deadline <= 64_000; deadline *= 2) {
      const cwd = fs.mkdtempSync(path.join(dir, 'run-'))
      const tmp = path.join(cwd, 'tmp')
      fs.mkdirSync(tmp)
      const fifo = path.join(cwd, 'watch')
      t.equal(spawnChildSync({ file: 'mkfifo', args: [fifo] }).exitCode, 0)
      const watch = watchPtxas(fifo)
      const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: tmp, TH_PTXAS_WATCH: fifo }
      const orchestrator = startChild({
        file: process.execPath,
        args: [MAIN, 'run', '--timeout', `${deadline}ms`, ...(setsid ? ['--setsid'] : []), '--', process.execPath, MAIN, 'compile', path.join(dir, 'big.ptx')],
        cwd, env, stdout: 'pipe', stderr: 'pipe',
      })
      const r = await orchestrator.result
      const pid = await within(watch.started, 0)
      if (pid === 'timed out') {
        // The deadline came before ptxas started: nothing to learn from this run.
        watch.release()
        t.comment(`${name}: ptxas had not started within ${deadline} ms; again with a longer deadline`)
        continue
      }
      t.teardown(() => { if (processState(pid) === 'alive') process.kill(pid, 'SIGKILL') })
      const gone = await within(watch.gone, OUTLIVED_MS)
      // EOF means ptxas is exiting: only its exit closes fd 9 (its /proc state may still say
      // running for a moment, while the kernel tears it down).
      t.not(gone, 'timed out', `${name}: ptxas (pid ${pid}) did not outlive the compile it was started by`)
      outcome = { exitCode: r.exitCode, stderr: r.stderr.toString(), pid, tmp, cwd }
    }
    if (outcome === null) {
      t.fail(`${name}: ptxas never started before the deadline, even at 64 s`)
      continue
    }
    t.equal(outcome.exitCode, 124, `${name}: the orchestrator says its child timed out`)
    t.match(outcome.stderr, 'tileharness run: Child timed out', `${name}: the orchestrator's diagnostic`)
    t.same(fs.readdirSync(outcome.tmp), [], `${name}: nothing left in the compile's TMPDIR (the PTX was in a memfd)`)
    t.same(fs.readdirSync(outcome.cwd).filter((f) => f !== 'tmp' && f !== 'watch'), [], `${name}: no output file`)
  }
})

t.test('(b) a variable set at the top reaches ptxas unchanged', skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const bin = ptxasStandIn(dir)
  fs.writeFileSync(path.join(dir, 'kernel.ptx'), kernelPtx('sm_100'))
  const seen = path.join(dir, 'seen')
  const value = `-knob A=1 "quoted value" 'single' $HOME \\ end`
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, TH_PTXAS_SEEN: seen, PTXAS_KNOBS_DEFAULTS: value }
  const r = spawnChildSync({
    file: process.execPath, args: [MAIN, 'run', '--', process.execPath, MAIN, 'compile', 'kernel.ptx'], cwd: dir, env, timeout: 120000,
  })
  t.equal(r.exitCode, 0, r.stderr.toString())
  t.equal(fs.readFileSync(seen, 'utf8'), value, 'PTXAS_KNOBS_DEFAULTS as the orchestrator set it')
  t.ok(fs.existsSync(path.join(dir, 'kernel.o')), 'and the compile went on to write its object')
})

t.test("(c) ptxas's diagnostic arrives at the top verbatim, with the driver's status 5", skipWithoutPtxas, async (t) => {
  const dir = tempDir(t)
  const rows: Array<[string, string]> = [
    ['a small module (by argv)', kernelPtx('sm_100').replace('ret;', 'bogus.instruction;\n  ret;')],
    ['a big module (by memfd)', bigPtx(140 * 1024).replace('ret;', 'ret')],
  ]
  for (const [name, ptx] of rows) {
    fs.writeFileSync(path.join(dir, 'broken.ptx'), ptx)
    // The input named as the user named it (lib/cuda/ptxas-input-name.ts), on either route.
    const direct = runPtxas(ptx, { gpuName: 'sm_100', inputName: 'broken.ptx' })
    t.equal(direct.status, 'failed', `${name}: ptxas rejects it`)
    t.not(direct.diagnostics, '', `${name}: with a message`)
    const r = spawnChildSync({
      file: process.execPath, args: [MAIN, 'run', '--', process.execPath, MAIN, 'compile', 'broken.ptx'], cwd: dir, timeout: 120000,
    })
    t.equal(r.exitCode, 5, `${name}: the orchestrator exits with the driver's status 5`)
    t.equal(r.stderr.toString(), direct.diagnostics +
      'tileharness compile: failed to compile PTX program\n' +
      'tileharness compile: ptxas exited with status 255\n', `${name}: ptxas's words first, byte for byte, then the driver's`)
    t.notOk(fs.existsSync(path.join(dir, 'broken.o')), `${name}: no output file`)
  }
})
