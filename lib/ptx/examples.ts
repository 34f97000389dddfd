// A small library of real kernels built with the emitter. Each one assembles with ptxas 13.0 for every
// target in PTX_ISA_BY_TARGET (test/ptx/examples.test.ts), and together they use every kind of
// statement and most performance directives, so they double as the emitter's end-to-end check.
import {
  addr, comment, f32, globalPtr, ins, label, local, param, pragma, regs, when,
} from './build.js'
import { ptxRangeError, ptxTypeError } from './errors.js'
import { printModule, type PrintOptions } from './print.js'
import { checkGpuName, type GpuName } from './targets.js'
import type { LaunchBounds, PtxModule, PtxParam, Statement } from './types.js'

export const EXAMPLE_KERNELS = ['vadd', 'saxpy', 'reduce', 'cluster'] as const
export type ExampleKernelName = (typeof EXAMPLE_KERNELS)[number]

/** Threads per CTA of `reduce`; its shared array has one slot per thread. */
export const REDUCE_BLOCK = 256
/** Threads per CTA and CTAs per cluster of `cluster`. */
export const CLUSTER_BLOCK = 128
export const CLUSTER_SIZE = 2

/** The module of example kernel `name` for `gpu` (its `.version` left to ptxIsaFor). */
export function exampleKernel(name: ExampleKernelName, gpu: GpuName): PtxModule {
  const target = checkGpuName(gpu, 'gpu')
  if (typeof name !== 'string') throw ptxTypeError('name', `one of ${EXAMPLE_KERNELS.join(', ')}`, name)
  switch (name) {
    case 'vadd': return vadd(target)
    case 'saxpy': return saxpy(target)
    case 'reduce': return reduce(target)
    case 'cluster': return cluster(target)
    default:
      throw ptxRangeError('ERR_PTX_UNKNOWN_KERNEL', 'name',
        `no example kernel ${JSON.stringify(name)}; known: ${EXAMPLE_KERNELS.join(', ')}`)
  }
}

/** The PTX text of example kernel `name` for `gpu`. */
export function examplePtx(name: ExampleKernelName, gpu: GpuName, options?: PrintOptions): string {
  return printModule(exampleKernel(name, gpu), options)
}

/**
 * The idioms the kernels share, as nvcc writes them: each is a few statements spread into a body.
 */

/** index = %ctaid.x * %ntid.x + %tid.x, through three scratch registers (the CUDA global index). */
function globalThreadIndex(index: string, [ctaid, ntid, tid]: [string, string, string], note?: string): Statement[] {
  return [
    ins('mov.u32', ctaid, '%ctaid.x'),
    ins('mov.u32', ntid, '%ntid.x'),
    ins('mov.u32', tid, '%tid.x'),
    ...(note === undefined ? [] : [comment(note)]),
    ins('mad.lo.s32', index, ctaid, ntid, tid),
  ]
}

/** Branch to `done` when index >= n (the bounds check of a one-thread-per-element kernel). */
function exitUnless(pred: string, index: string, n: string, done: string): Statement[] {
  return [ins('setp.ge.u32', pred, index, n), when(pred, ins('bra', done))]
}

/** Global pointers from .param: every ld.param.u64 first, then every cvta.to.global.u64. */
function globalPointers(pointers: Array<{ param: string; generic: string; global: string }>): Statement[] {
  return [
    ...pointers.map(p => ins('ld.param.u64', p.generic, addr(p.param))),
    ...pointers.map(p => ins('cvta.to.global.u64', p.global, p.generic)),
  ]
}

/** Byte offset index * size (mul.wide.u32), then the element address of each base array. */
function elementAddresses(offset: string, index: string, size: number, addresses: Array<[address: string, base: string]>): Statement[] {
  return [ins('mul.wide.u32', offset, index, size), ...addresses.map(([address, base]) => ins('add.s64', address, base, offset))]
}

/** A module of one visible .entry kernel. */
function entryKernel(target: GpuName, name: string, params: PtxParam[], launchBounds: LaunchBounds, body: Statement[]): PtxModule {
  return { target, functions: [{ kind: 'entry', name, linkage: 'visible', params, launchBounds, body }] }
}

/** c[i] = a[i] + b[i] for i < n. */
function vadd(target: GpuName): PtxModule {
  return entryKernel(target, 'vadd', [globalPtr('vadd_a', 4), globalPtr('vadd_b', 4), globalPtr('vadd_c', 4), param('vadd_n', 'u32')], { maxntid: 256 }, [
    regs('pred', '%p', 2), regs('b32', '%r', 6), regs('f32', '%f', 4), regs('b64', '%rd', 11),
    ins('ld.param.u32', '%r1', addr('vadd_n')),
    ...globalThreadIndex('%r5', ['%r2', '%r3', '%r4'], 'i = blockIdx.x * blockDim.x + threadIdx.x'),
    ...exitUnless('%p1', '%r5', '%r1', '$L__vadd_done'),
    ...globalPointers([
      { param: 'vadd_a', generic: '%rd1', global: '%rd4' },
      { param: 'vadd_b', generic: '%rd2', global: '%rd5' },
      { param: 'vadd_c', generic: '%rd3', global: '%rd6' },
    ]),
    ...elementAddresses('%rd7', '%r5', 4, [['%rd8', '%rd4'], ['%rd9', '%rd5'], ['%rd10', '%rd6']]),
    ins('ld.global.f32', '%f1', addr('%rd8')),
    ins('ld.global.f32', '%f2', addr('%rd9')),
    ins('add.f32', '%f3', '%f1', '%f2'),
    ins('st.global.f32', addr('%rd10'), '%f3'),
    label('$L__vadd_done'),
    ins('ret'),
  ])
}

/** y[i] = a * x[i] + y[i] for i < n, with a fused multiply-add. */
function saxpy(target: GpuName): PtxModule {
  return entryKernel(target, 'saxpy', [param('saxpy_n', 'u32'), param('saxpy_a', 'f32'), globalPtr('saxpy_x', 4), globalPtr('saxpy_y', 4)], { maxntid: 256, minnctapersm: 4, maxnreg: 32 }, [
    regs('pred', '%p', 2), regs('b32', '%r', 6), regs('f32', '%f', 5), regs('b64', '%rd', 8),
    ins('ld.param.u32', '%r1', addr('saxpy_n')),
    ...globalThreadIndex('%r5', ['%r2', '%r3', '%r4']),
    ...exitUnless('%p1', '%r5', '%r1', '$L__saxpy_done'),
    ins('ld.param.f32', '%f1', addr('saxpy_a')),
    ...globalPointers([
      { param: 'saxpy_x', generic: '%rd1', global: '%rd3' },
      { param: 'saxpy_y', generic: '%rd2', global: '%rd4' },
    ]),
    ...elementAddresses('%rd5', '%r5', 4, [['%rd6', '%rd3'], ['%rd7', '%rd4']]),
    ins('ld.global.f32', '%f2', addr('%rd6')),
    ins('ld.global.f32', '%f3', addr('%rd7')),
    ins('fma.rn.f32', '%f4', '%f1', '%f2', '%f3'),
    ins('st.global.f32', addr('%rd7'), '%f4'),
    label('$L__saxpy_done'),
    ins('ret'),
  ])
}

/**
 * out[blockIdx.x] = sum of the elements of `in` this CTA visits in a grid-stride loop, reduced
 * through shared memory by a tree of bar.sync steps. The CTA shape is required (.reqntid) because
 * the shared array has exactly one slot per thread.
 */
function reduce(target: GpuName): PtxModule {
  return entryKernel(target, 'reduce', [globalPtr('reduce_in', 4), globalPtr('reduce_out', 4), param('reduce_n', 'u32')], { reqntid: REDUCE_BLOCK, minnctapersm: 2 }, [
    local({ space: 'shared', name: 'reduce_smem', type: 'f32', align: 4, length: REDUCE_BLOCK }),
    regs('pred', '%p', 5), regs('b32', '%r', 13), regs('f32', '%f', 7), regs('b64', '%rd', 9),
    ins('ld.param.u64', '%rd1', addr('reduce_in')),
    ins('ld.param.u64', '%rd2', addr('reduce_out')),
    ins('ld.param.u32', '%r1', addr('reduce_n')),
    ins('cvta.to.global.u64', '%rd3', '%rd1'),
    ins('cvta.to.global.u64', '%rd4', '%rd2'),
    ins('mov.u32', '%r2', '%tid.x'),
    ins('mov.u32', '%r3', '%ctaid.x'),
    ins('mov.u32', '%r4', '%nctaid.x'),
    ins('mad.lo.s32', '%r5', '%r3', REDUCE_BLOCK, '%r2'),
    ins('mul.lo.s32', '%r6', '%r4', REDUCE_BLOCK),
    ins('mov.f32', '%f1', f32(0)),
    label('$L__reduce_load'),
    // Statement-level nounroll: applies to the loop whose header block holds it.
    pragma('nounroll'),
    ...exitUnless('%p1', '%r5', '%r1', '$L__reduce_loaded'),
    ...elementAddresses('%rd5', '%r5', 4, [['%rd6', '%rd3']]),
    ins('ld.global.f32', '%f2', addr('%rd6')),
    ins('add.f32', '%f1', '%f1', '%f2'),
    ins('add.s32', '%r5', '%r5', '%r6'),
    ins('bra', '$L__reduce_load'),
    label('$L__reduce_loaded'),
    ins('mov.u32', '%r7', 'reduce_smem'),
    ins('shl.b32', '%r8', '%r2', 2),
    ins('add.s32', '%r9', '%r7', '%r8'),
    ins('st.shared.f32', addr('%r9'), '%f1'),
    ins('bar.sync', 0),
    ins('mov.u32', '%r10', REDUCE_BLOCK / 2),
    label('$L__reduce_tree'),
    comment('threads below the stride fold in the upper half; every thread reaches bar.sync'),
    ins('setp.ge.u32', '%p2', '%r2', '%r10'),
    when('%p2', ins('bra', '$L__reduce_skip')),
    ins('shl.b32', '%r11', '%r10', 2),
    ins('add.s32', '%r12', '%r9', '%r11'),
    ins('ld.shared.f32', '%f3', addr('%r12')),
    ins('ld.shared.f32', '%f4', addr('%r9')),
    ins('add.f32', '%f5', '%f4', '%f3'),
    ins('st.shared.f32', addr('%r9'), '%f5'),
    label('$L__reduce_skip'),
    ins('bar.sync', 0),
    ins('shr.u32', '%r10', '%r10', 1),
    ins('setp.ne.u32', '%p3', '%r10', 0),
    when('%p3', ins('bra', '$L__reduce_tree')),
    ins('setp.ne.u32', '%p4', '%r2', 0),
    when('%p4', ins('bra', '$L__reduce_done')),
    ins('ld.shared.f32', '%f6', addr('%r7')),
    ...elementAddresses('%rd7', '%r3', 4, [['%rd8', '%rd4']]),
    ins('st.global.f32', addr('%rd8'), '%f6'),
    label('$L__reduce_done'),
    ins('ret'),
  ])
}

/**
 * Distributed shared memory across a cluster of CLUSTER_SIZE CTAs (sm_90 and up): each CTA publishes
 * its %ctaid.x in its own shared memory, and every thread reads the value of the next CTA in the
 * cluster through mapa + ld.shared::cluster and stores it to out[global thread index].
 */
function cluster(target: GpuName): PtxModule {
  return entryKernel(target, 'cluster_exchange', [globalPtr('cluster_exchange_out', 4)], { reqntid: CLUSTER_BLOCK, reqnctapercluster: CLUSTER_SIZE }, [
    local({ space: 'shared', name: 'cluster_slot', type: 'u32', align: 4 }),
    regs('pred', '%p', 2), regs('b32', '%r', 11), regs('b64', '%rd', 5),
    ...globalPointers([{ param: 'cluster_exchange_out', generic: '%rd1', global: '%rd2' }]),
    ins('mov.u32', '%r1', '%tid.x'),
    ins('mov.u32', '%r2', '%cluster_ctarank'),
    ins('mov.u32', '%r3', '%cluster_nctarank'),
    ins('mov.u32', '%r4', '%ctaid.x'),
    ins('mov.u32', '%r5', 'cluster_slot'),
    ins('setp.ne.u32', '%p1', '%r1', 0),
    when('%p1', ins('bra', '$L__cluster_published')),
    ins('st.shared.u32', addr('%r5'), '%r4'),
    label('$L__cluster_published'),
    comment('every CTA has published before any reads a peer'),
    ins('barrier.cluster.arrive'),
    ins('barrier.cluster.wait'),
    ins('add.s32', '%r6', '%r2', 1),
    ins('rem.u32', '%r7', '%r6', '%r3'),
    ins('mapa.shared::cluster.u32', '%r8', '%r5', '%r7'),
    ins('ld.shared::cluster.u32', '%r9', addr('%r8')),
    ins('mad.lo.s32', '%r10', '%r4', CLUSTER_BLOCK, '%r1'),
    ...elementAddresses('%rd3', '%r10', 4, [['%rd4', '%rd2']]),
    ins('st.global.u32', addr('%rd4'), '%r9'),
    comment('a CTA must not exit while a peer may still read its shared memory'),
    ins('barrier.cluster.arrive'),
    ins('barrier.cluster.wait'),
    ins('ret'),
  ])
}
