// tileharness: an exact POSIX subprocess harness for Node.js.
export * from './spawn/index.js'
