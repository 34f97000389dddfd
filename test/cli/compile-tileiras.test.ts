// tileiras's worked invocations (docs/toolchain-contract.md, "Driving the driver"), run as an
// orchestrator writes them, with PTX in place of Tile IR bytecode: tileiras's option spellings
// (--gpu-name=, --opt-level=, --host-arch=, --host-os=, --output-file=, --device-debug,
// --lineinfo, --sanitize=), the Program's status as the exit code, the output file there on
// success and absent on failure, and a failure's message verbatim.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { runPtxas } from '../../lib/cuda/index.js'
import { CLI_MAIN as MAIN, tempDir } from '../helpers.js'
import { kernelPtx, skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

const HOST_ARCH = process.arch === 'arm64' ? 'aarch64' : 'x86_64'
const TILE_IR_MAGIC = Buffer.from([0x7f, 0x54, 0x69, 0x6c, 0x65, 0x49, 0x52, 0x00])

interface Row {
  name: string
  env?: Record<string, string>
  argv: string[]
  /** What ptxas is asked for, when the compile succeeds: the object must hold that cubin. */
  ptxas?: { gpuName: string; optLevel: number; ptxasOptions?: string[] }
  status: number
  /** stderr, verbatim, for the failing rows. */
  stderr?: string
}

const ROWS: Row[] = [
  {
    name: 'release build',
    argv: ['--gpu-name=sm_100', '--opt-level=2', `--host-arch=${HOST_ARCH}`, '--host-os=linux', '--output-file=nvcc-12345/kernel.o', 'nvcc-12345/kernel.ptx'],
    ptxas: { gpuName: 'sm_100', optLevel: 2 },
    status: 0,
  },
  {
    name: 'debug build with line info',
    argv: ['--gpu-name=sm_100', '--opt-level=0', '--device-debug', '--lineinfo', `--host-arch=${HOST_ARCH}`, '--host-os=linux', '--output-file=nvcc-67890/kernel.o', 'nvcc-67890/kernel.ptx'],
    ptxas: { gpuName: 'sm_100', optLevel: 0, ptxasOptions: ['--device-debug'] },
    status: 0,
  },
  {
    name: 'debug build mixed with a project-wide -O3',
    argv: ['--gpu-name=sm_100', '--opt-level=3', '--device-debug', '--lineinfo', `--host-arch=${HOST_ARCH}`, '--host-os=linux', '--output-file=nvcc-67890/kernel.o', 'nvcc-67890/kernel.ptx'],
    status: 2,
    stderr: 'tileharness compile: optimized debugging is not supported, change optimization level to 0 or disable full debug info\n' +
      'tileharness compile: deviceDebug with optLevel 3\n',
  },
  {
    name: 'direct integrator invocation, without the knob pair',
    env: { CUDA_ROOT: '/opt/cuda-13.1' },
    argv: ['--gpu-name=sm_103', '--opt-level=3', '--output-file=build/kernel.o', 'src/kernel.ptx'],
    ptxas: { gpuName: 'sm_103', optLevel: 3 },
    status: 0,
  },
  {
    // Both variables set: --knobs-file=<path> is forwarded, and ptxas 13.0 has no such option.
    name: 'direct integrator invocation, as written (MLIR_ENABLE_EVO and PTX_KNOBS_PATH)',
    env: { MLIR_ENABLE_EVO: '1', PTX_KNOBS_PATH: '/etc/myproject/ptxas-knobs.cfg', CUDA_ROOT: '/opt/cuda-13.1' },
    argv: ['--gpu-name=sm_103', '--opt-level=3', '--output-file=build/kernel.o', 'src/kernel.ptx'],
    status: 5,
    stderr: "ptxas fatal   : Unknown option '-knobs-file'\n" +
      'tileharness compile: failed to compile PTX program\n' +
      'tileharness compile: ptxas exited with status 255\n',
  },
  {
    name: 'the sanitize option',
    argv: ['--gpu-name=sm_100', '--opt-level=3', '--sanitize=memcheck', '--output-file=san/kernel.o', 'san/kernel.ptx'],
    ptxas: { gpuName: 'sm_100', optLevel: 3, ptxasOptions: ['--sanitize', 'memcheck'] },
    status: 0,
  },
  {
    // The input tileiras takes is not the one tileharness takes: named, status 3.
    name: 'Tile IR bytecode given',
    argv: ['--gpu-name=sm_100', '--opt-level=2', '--output-file=nvcc-12345/kernel.o', 'nvcc-12345/kernel.tileir'],
    status: 3,
    stderr: 'tileharness compile: input does not correspond to PTX text (it looks like Tile IR bytecode instead)\n' +
      'tileharness compile: it starts with the Tile IR bytecode magic\n',
  },
]

t.test("tileiras's worked invocations, in tileiras's spelling", skipWithoutPtxas, async (t) => {
  for (const row of ROWS) {
    const dir = tempDir(t)
    const input = row.argv[row.argv.length - 1]
    const output = row.argv.find((a) => a.startsWith('--output-file='))!.slice('--output-file='.length)
    const gpuName = row.argv.find((a) => a.startsWith('--gpu-name='))!.slice('--gpu-name='.length)
    fs.mkdirSync(path.join(dir, path.dirname(input)), { recursive: true })
    fs.mkdirSync(path.join(dir, path.dirname(output)), { recursive: true })
    const ptx = kernelPtx(gpuName)
    fs.writeFileSync(path.join(dir, input), input.endsWith('.tileir') ? Buffer.concat([TILE_IR_MAGIC, Buffer.from('payload')]) : ptx)

    const env = { ...process.env, MLIR_ENABLE_EVO: undefined, PTX_KNOBS_PATH: undefined, ...row.env }
    const r = spawnChildSync({ file: process.execPath, args: [MAIN, 'compile', ...row.argv], cwd: dir, env, timeout: 120000 })
    const stderr = r.stderr.toString()
    t.equal(r.exitCode, row.status, `${row.name}: exit status ${row.status} (${stderr})`)
    const written = fs.existsSync(path.join(dir, output))
    if (row.ptxas !== undefined) {
      t.ok(written, `${row.name}: ${output} written`)
      const cubin = runPtxas(ptx, { ...row.ptxas }).cubin!
      t.ok(written && fs.readFileSync(path.join(dir, output)).includes(cubin), `${row.name}: ${output} holds the cubin ptxas makes with those options`)
    } else {
      t.notOk(written, `${row.name}: no ${output}`)
      t.equal(stderr, row.stderr, `${row.name}: the message, verbatim`)
    }
  }
})
