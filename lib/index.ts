// tileharness: an exact POSIX subprocess harness for Node.js.
export * from './spawn/index.js'
// Shell-like word splitting without a shell: for building argv from a command string.
export { splitCommand, quoteForSplit } from './split-command.js'
