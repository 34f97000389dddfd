#!/bin/sh
# Builds the measuring helper, native/exec-helper.c, as a static executable: both build systems
# (binding.gyp's action, CMakeLists.txt's custom command) call this, so there is one recipe.
#
#   sh scripts/build-helper.sh OUTPUT SOURCE
#
# The helper is exec'd once for every `measure: true` child, so its start-up is on every measured
# child's path. musl's start-up is a few system calls. A static glibc program's start-up runs
# glibc's CPU feature and cache probing first (dozens of CPUID instructions, and on a virtual
# machine each one traps to the hypervisor: about 0.6 ms of CPU per start where this was measured).
# So musl-gcc is used when it is installed (Debian: musl-tools), else the system's cc with glibc;
# the helper behaves the same either way. TILEHARNESS_HELPER_CC names another compiler.
set -u
out=$1
src=$2
flags="-O2 -Wall -Wextra -static"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

build() {  # build CC: compiles into $tmp, then moves it into place
  # shellcheck disable=SC2086 # $flags is a word list
  "$1" $flags -o "$tmp" "$src" && mv -f "$tmp" "$out"
}

if [ -n "${TILEHARNESS_HELPER_CC:-}" ]; then
  build "$TILEHARNESS_HELPER_CC" || exit 1
elif command -v musl-gcc >/dev/null 2>&1; then
  build musl-gcc || {
    echo "build-helper: musl-gcc failed; building the helper with cc and glibc instead" >&2
    build cc || exit 1
  }
else
  build cc || exit 1
fi
