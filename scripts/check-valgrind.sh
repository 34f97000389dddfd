#!/usr/bin/env bash
# Valgrind memcheck of the native code (run by scripts/check-asan.sh; alone: scripts/check-valgrind.sh).
#
# 1. scripts/valgrind/native-driver.cc, built with native/launcher.cc, waiter.cc and alarm.cc:
#    the wait loop end to end (pumping, draining, capture growth, truncation, EPIPE, deadlines,
#    escalation, the "wouldn't die" reaper thread, a foreign SIGALRM, the helper's report) and
#    Launch() on both paths, with --leak-check=full: zero errors, nothing definitely or
#    indirectly lost. It is checked without valgrind first.
# 2. scripts/valgrind/addon-smoke.mjs: the addon from Node, every option, sync and async, against
#    build/Release (the regular build). V8's conservative stack scan is suppressed
#    (scripts/valgrind/node.supp); leaks are not checked in Node, which keeps its heap to the end.
#
# Valgrind 3.19 does not know pidfd_open or pidfd_send_signal (ENOSYS): under it, launches that
# need a pidfd stop at "couldn't track the child", and its vfork is a fork, so a failed exec, which
# both launch paths report through memory the child shares with its parent, shows as exit 127.
# The driver stands a pipe in for the pidfd; see its header.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
  echo "check:valgrind: valgrind is not installed" >&2
  exit 2
fi
work=$(mktemp -d /tmp/tileharness-valgrind-XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "=== valgrind: native driver"
g++ -std=c++17 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE -Wall -Wextra -Wno-missing-field-initializers -Inative \
  scripts/valgrind/native-driver.cc native/waiter.cc native/alarm.cc native/launcher.cc -lpthread -o "$work/native-driver" || exit 1
helper=build/Release/tileharness-exec
"$work/native-driver" "$helper" >"$work/plain.txt" || { cat "$work/plain.txt"; echo "check:valgrind: the driver fails without valgrind"; exit 1; }
valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
  --show-leak-kinds=definite,indirect --track-origins=yes --child-silent-after-fork=yes --num-callers=30 \
  "$work/native-driver" "$helper" 2>&1 | tee "$work/driver.txt"
driver=${PIPESTATUS[0]}

echo "=== valgrind: the addon from Node (scripts/valgrind/addon-smoke.mjs)"
npx tsc -p tsconfig.json || exit 1
valgrind -q --tool=memcheck --error-exitcode=99 --smc-check=all-non-file --leak-check=no --child-silent-after-fork=yes \
  --suppressions=scripts/valgrind/node.supp --num-callers=30 node scripts/valgrind/addon-smoke.mjs 2>&1 |
  grep -vE 'unhandled amd64-linux syscall: 43[44]|You may be able to write|README_MISSING_SYSCALL|Nevertheless we consider|it at http://valgrind.org' |
  tee "$work/addon.txt"
addon=${PIPESTATUS[0]}

if [ "$driver" -ne 0 ] || [ "$addon" -ne 0 ] || grep -q '^==[0-9]*== ' "$work/driver.txt" "$work/addon.txt"; then
  echo "check:valgrind: FAILED (driver exit $driver, addon exit $addon; memcheck reports above)"
  exit 1
fi
echo "check:valgrind: zero memcheck errors, no definite or indirect leaks in the driver"
