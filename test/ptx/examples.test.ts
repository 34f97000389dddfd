// The example kernels: every one, for every target the emitter knows (the six and their
// a/f variants), assembles with the real ptxas into an ELF cubin without a word on stderr.
import t from 'tap'
import {
  EXAMPLE_KERNELS, emitPtx, exampleKernel, examplePtx, gpuNames, printModule, ptxIsaFor, type GpuName,
} from '../../lib/ptx/index.js'
import { assemble, isElf, skipWithoutPtxas } from './ptxas.js'

const required: GpuName[] = ['sm_90', 'sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121']

t.test('each example is a module for the requested target, printed without warnings', async (t) => {
  for (const name of EXAMPLE_KERNELS) {
    for (const gpu of gpuNames()) {
      const module = exampleKernel(name, gpu)
      t.equal(module.target, gpu, `${name} ${gpu}: target`)
      const emitted = emitPtx(module)
      t.same(emitted.warnings, [], `${name} ${gpu}: no directive dropped`)
      t.equal(emitted.version, ptxIsaFor(gpu), `${name} ${gpu}: the target's lowest PTX ISA`)
      t.equal(examplePtx(name, gpu), printModule(module), `${name} ${gpu}: examplePtx prints the module`)
    }
  }
})

t.test('examples carry the directives they are meant to show', async (t) => {
  const rows: [(typeof EXAMPLE_KERNELS)[number], RegExp][] = [
    ['vadd', /\n\.maxntid 256\n/],
    ['saxpy', /\n\.maxntid 256\n\.minnctapersm 4\n\.maxnreg 32\n/],
    ['reduce', /\n\.reqntid 256\n\.minnctapersm 2\n[\s\S]*\t\.pragma "nounroll";/],
    ['cluster', /\n\.reqntid 128\n\.reqnctapercluster 2\n[\s\S]*mapa\.shared::cluster\.u32/],
  ]
  for (const [name, pattern] of rows) t.match(examplePtx(name, 'sm_90'), pattern, name)
})

t.test('bad example requests', async (t) => {
  t.throws(() => exampleKernel('gemm' as 'vadd', 'sm_90'), { name: 'RangeError', code: 'ERR_PTX_UNKNOWN_KERNEL', message: /^name: no example kernel "gemm"/ })
  t.throws(() => exampleKernel(1 as unknown as 'vadd', 'sm_90'), { name: 'TypeError', code: 'ERR_PTX_INVALID_ARG_TYPE', message: /^name: / })
  t.throws(() => exampleKernel('cluster', 'sm_80' as GpuName), { name: 'RangeError', code: 'ERR_PTX_UNKNOWN_TARGET', message: /^gpu: / })
})

t.test('every example assembles for every target', { skip: skipWithoutPtxas }, async (t) => {
  const targets = gpuNames()
  for (const gpu of required) t.ok(targets.includes(gpu), `${gpu} is covered`)
  for (const name of EXAMPLE_KERNELS) {
    for (const gpu of targets) {
      const { result, cubin, stderr } = assemble(examplePtx(name, gpu), gpu)
      t.equal(result.exitCode, 0, `${name} ${gpu}: ptxas exits 0`, { stderr })
      t.equal(stderr, '', `${name} ${gpu}: no warnings`)
      t.ok(isElf(cubin), `${name} ${gpu}: ELF output`)
    }
  }
})
