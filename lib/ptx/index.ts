// tileharness/ptx: a typed model of a PTX module, launch-bound normalization, a printer, the one
// table of PTX ISA versions per target, and a small library of example kernels.
export * from './types.js'
export * from './errors.js'
export * from './targets.js'
export * from './build.js'
export * from './launch-bounds.js'
export * from './print.js'
export * from './examples.js'
