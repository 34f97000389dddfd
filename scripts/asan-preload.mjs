// Loaded with --import into every test process of `npm run check:asan` (scripts/check-asan.sh),
// and from there into every node process those tests start.
//
// The sanitizer runtime has to be in the process before the sanitized addon is loaded, so the
// test processes start with LD_PRELOAD=libasan.so. Their children must not inherit it: a `sh` or
// `sleep` with the ASan runtime in it is not the child the tests describe (ASan sets RLIMIT_CORE
// to 0, takes over SIGSEGV, inflates maxRSS and reserves terabytes of address space), so the
// runtime stops here and the tests see ordinary children.
//
// A node process started by a test (the CLI tests, say) then has TILEHARNESS_ADDON in its
// environment but no sanitizer runtime, and could not load the sanitized addon: it drops
// TILEHARNESS_ADDON and loads the regular build, as a user's process would.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

const runtimeLoaded = /\blibasan\.so/.test(fs.readFileSync('/proc/self/maps', 'utf8'))
if (runtimeLoaded && process.env.LD_PRELOAD) {
  // Kept under another name for tests that start a node child on purpose and want the sanitized
  // addon in it as well (test/reliability/helpers.ts, nodeChildEnv).
  process.env.TILEHARNESS_ASAN_PRELOAD = process.env.LD_PRELOAD
  delete process.env.LD_PRELOAD
} else if (!runtimeLoaded) {
  delete process.env.TILEHARNESS_ADDON
}

// Node descendants that inherit this environment run this file too.
const self = `--import=${fileURLToPath(import.meta.url)}`
const options = process.env.NODE_OPTIONS ?? ''
if (!options.includes(self)) process.env.NODE_OPTIONS = options ? `${options} ${self}` : self
