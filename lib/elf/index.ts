// tileharness/elf: the host object packagers (a cubin, and optionally its SASS text, wrapped in a
// relocatable object a host linker takes: ELF, and COFF for Windows) and the cubin reader.
export * from './constants.js'
export * from './errors.js'
export * from './package.js'
export * from './gnu-property.js'
export * from './coff.js'
export * from './cubin.js'
export * from './bytes.js'
export * from './fatbin.js'
