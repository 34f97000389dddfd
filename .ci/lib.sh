# The counting shared by .ci/run (sourced; test/build/ci.test.ts drives it with fake steps):
# passed and failed, each step's log, and what failed, printed just before the closing line.
ci_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
passed=0
failed=0
log=$(mktemp)
failures=$(mktemp)  # what failed, by step (failures.awk), printed before the closing line
temps=("$log" "$failures")  # removed at exit; .ci/run adds its own
trap 'rm -rf "${temps[@]}"' EXIT

# The closing line, after what failed: the end of this output is all some readers keep.
finish() {
  if [ -s "$failures" ]; then
    echo "=== what failed, by step (the first 60 of $(wc -l <"$failures") lines; each is in the output above)"
    head -n 60 "$failures"
  fi
  echo "$passed passed, $failed failed"
}

count() {  # count LABEL [STATUS]: adds up tap's closing "# { total: N, pass: N, fail: N }" line(s) in $log
  local p f
  p=$(grep -aE '^# \{ total:' "$log" | tail -1 | sed -nE 's/.*pass: ([0-9]+).*/\1/p')
  f=$(grep -aE '^# \{ total:' "$log" | tail -1 | sed -nE 's/.*fail: ([0-9]+).*/\1/p')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  keep_failures "$1" "${2:-0}"
}

# keep_failures LABEL STATUS [COMMAND...]: $log's "not ok" lines, then a non-zero status, into $failures.
keep_failures() {
  local label=$1 status=$2
  shift 2
  awk -v step="$label" -f "$ci_dir/failures.awk" "$log" >>"$failures"
  [ "$status" -eq 0 ] || echo "[$label] exit status $status${*:+: $*}" >>"$failures"
}

step() {  # step NAME CMD...: runs, counts a failure when it exits non-zero
  local name=$1 status
  echo "=== $name"
  shift
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    echo "=== FAILED: $*"
    failed=$((failed + 1))
    keep_failures "$name" "$status" "$@"
    return 1
  fi
}
