// tileharness/elf: the host ELF packager (a cubin, and optionally its SASS text, wrapped in a
// relocatable object a host linker takes) and the cubin reader.
export * from './constants.js'
export * from './errors.js'
export * from './package.js'
export * from './gnu-property.js'
export * from './cubin.js'
export * from './bytes.js'
