// The exit statuses of the `tileharness` commands' own failures, in one place: main.ts reports
// with them before a command's module is loaded, and each command returns them. compile's are the
// Program's own statuses, read from its error table (a small module: no CUDA adapter is loaded).
import { PROGRAM_ERRORS } from '../cuda/program/errors.js'

/** coreutils timeout's status for its own failures: a bad option, a command that could not be started. */
export const HARNESS_FAILURE = 125

/** compile: usage errors are configuration errors, the Program's status 2. */
export const CONFIGURATION = PROGRAM_ERRORS.CONFIGURATION_NULL.status

/** compile: the Program's "failed to compile PTX program", status 5. */
export const COMPILE_FAILED = PROGRAM_ERRORS.COMPILE_FAILED.status
