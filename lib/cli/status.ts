// The exit statuses of the `tileharness` commands' own failures, in one place: main.ts reports
// with them before a command's module is loaded, and each command returns them.

/** coreutils timeout's status for its own failures: a bad option, a command that could not be started. */
export const HARNESS_FAILURE = 125

/** compile: usage errors are configuration errors, status 2, as the Program's own. */
export const CONFIGURATION = 2

/** compile: the Program's "failed to compile PTX program". */
export const COMPILE_FAILED = 5
