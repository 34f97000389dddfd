# The failing assertions of one step's log, for the summary .ci/run prints just before its closing
# line (whoever reads only the end of CI's output still sees what failed, not only how many):
# every tap "not ok" line, the failing assertion and each test around it, without its timing,
# once each, after the step's label.   awk -v step=LABEL -f .ci/failures.awk LOG
/^[ \t]*not ok / {
  line = $0
  sub(/^[ \t]+/, "", line)
  sub(/ # time=[0-9.]+m?s$/, "", line)
  if (!(line in seen)) {
    seen[line] = 1
    print "[" step "] " line
  }
}
