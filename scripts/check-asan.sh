#!/usr/bin/env bash
# npm run check:asan [-- test files...]
#
# 1. Builds the addon with AddressSanitizer + UBSan (cmake-js, Debug, TILEHARNESS_SANITIZE=ON)
#    into build-asan/, leaving build/Release alone.
# 2. Runs the tap suite (or the files given) against it: TILEHARNESS_ADDON points lib/spawn at
#    build-asan/Release/tileharness.node, and the test processes start with the gcc sanitizer
#    runtime preloaded (scripts/asan-preload.mjs keeps it out of their children).
# 3. Runs valgrind memcheck on the native core and on the addon from Node
#    (scripts/check-valgrind.sh; skip with TILEHARNESS_SKIP_VALGRIND=1).
#
# Passes only when every test passes and there are zero sanitizer reports: no
# "ERROR: AddressSanitizer", no "runtime error:" in the output or in the report files (ASan and
# UBSan write to files under log_path, so a report from any process is found). Before the run, a
# deliberate heap overflow in a sanitized object loaded into node must produce such a report, so
# that "zero reports" cannot come from a pipeline that would not see one.
#
# detect_leaks=0: V8 and Node allocate for the life of the process and never free it at exit, by
# design, so LeakSanitizer would report the runtime itself. Leaks of the harness's own are
# measured where they matter, as fds, children and RSS (test/reliability/soak.test.ts,
# scripts/soak.mjs). Errors are fatal (halt_on_error): the first report fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

libasan=$(gcc -print-file-name=libasan.so)
if [ ! -e "$libasan" ] || [ "$libasan" = libasan.so ]; then
  echo "check:asan: gcc's libasan.so not found (gcc -print-file-name=libasan.so)" >&2
  exit 2
fi
libasan=$(readlink -f "$libasan")

echo "=== sanitized build (build-asan/)"
npx cmake-js build --out build-asan -D --CDTILEHARNESS_SANITIZE=ON >/tmp/tileharness-asan-build.$$ 2>&1 || {
  cat /tmp/tileharness-asan-build.$$; rm -f /tmp/tileharness-asan-build.$$; exit 1; }
rm -f /tmp/tileharness-asan-build.$$
addon=$root/build-asan/Release/tileharness.node
# grep reads to the end (no -q): under pipefail, grep -q quitting at the first match can leave the
# writer with SIGPIPE and fail the pipeline although the match was found.
if ! ldd "$addon" | grep libasan >/dev/null; then
  echo "check:asan: $addon is not linked against libasan" >&2
  exit 1
fi
npx tsc -p tsconfig.json || exit 1

reports=$(mktemp -d /tmp/tileharness-asan-XXXXXX)
chmod 0733 "$reports"  # test children run as nobody (setpriv) write their reports here too
log=$reports/tap.log
trap 'rm -rf "$reports"' EXIT

# The runtime really is in the test processes, and they really load the sanitized addon.
canary=$(env LD_PRELOAD="$libasan" ASAN_OPTIONS=detect_leaks=0 TILEHARNESS_ADDON="$addon" \
  node --import="$root/scripts/asan-preload.mjs" --input-type=module \
  -e "await import('$root/dist/index.js'); const m = (await import('node:fs')).readFileSync('/proc/self/maps', 'utf8'); console.log(m.includes('libasan') && m.includes('$addon') ? 'sanitized' : 'NOT sanitized')")
if [ "$canary" != sanitized ]; then
  echo "check:asan: the test processes would not run the sanitized addon ($canary)" >&2
  exit 1
fi

# The report pipeline sees an error: a heap overflow in a sanitized object's constructor.
mkdir "$reports/canary"
printf '%s\n' '#include <stdlib.h>' 'volatile char sink;' \
  '__attribute__((constructor)) static void overflow(void) { char *p = malloc(8); sink = p[8]; free(p); }' >"$reports/canary/overflow.c"
gcc -shared -fPIC -fsanitize=address -o "$reports/canary/overflow.so" "$reports/canary/overflow.c" || exit 1
env LD_PRELOAD="$libasan" ASAN_OPTIONS="detect_leaks=0:log_path=$reports/canary/asan" \
  node -e "try { process.dlopen({ exports: {} }, '$reports/canary/overflow.so') } catch {}" 2>/dev/null
if ! cat "$reports"/canary/asan.* 2>/dev/null | grep 'ERROR: AddressSanitizer: heap-buffer-overflow' >/dev/null; then
  echo "check:asan: a deliberate heap overflow was not reported: the check would be blind" >&2
  exit 1
fi
rm -rf "$reports/canary"

# quarantine_size_mb: ASan holds freed blocks back (256 MiB by default) to catch use after free;
# the leak test's RSS bound over 10,000 spawns would measure that quarantine, not the harness.
echo "=== tap suite against the sanitized addon"
env \
  LD_PRELOAD="$libasan" \
  ASAN_OPTIONS="detect_leaks=0:quarantine_size_mb=16:halt_on_error=1:abort_on_error=0:allow_user_segv_handler=1:check_initialization_order=1:strict_init_order=1:log_path=$reports/asan" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan" \
  TILEHARNESS_ADDON="$addon" \
  npx tap --timeout=600 --node-arg="--import=$root/scripts/asan-preload.mjs" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

found=0
# The sanitizers' own line shapes ("==PID==ERROR: AddressSanitizer: ...", "file.cc:12:34: runtime
# error: ..."), not any line naming them: the hostile tests' assertions are called "stderr has no
# /runtime error:/", and tap prints every one of them.
if grep -anE '==[0-9]+==ERROR: (Address|Leak)Sanitizer|:[0-9]+:[0-9]+: runtime error:' "$log"; then found=1; fi
for f in "$reports"/asan.* "$reports"/ubsan.*; do
  [ -e "$f" ] || continue
  echo "=== sanitizer report $f"
  cat "$f"
  found=1
done

if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  echo "check:asan: FAILED (tap exit $status, sanitizer reports: $found)"
  exit 1
fi
echo "check:asan: tap passed against $addon with zero sanitizer reports"

if [ "${TILEHARNESS_SKIP_VALGRIND:-0}" != 1 ]; then
  scripts/check-valgrind.sh || exit 1
fi
