// A standalone driver for the addon's native core (native/launcher.cc, waiter.cc, alarm.cc: no
// N-API), for valgrind memcheck: scripts/check-valgrind.sh builds it with the sources and runs
// it under memcheck with --leak-check=full.
//
// Why a driver of its own: valgrind 3.19 does not know pidfd_open (syscall 434) or
// pidfd_send_signal (424) and fails them with ENOSYS, so under valgrind every launch that needs
// a pidfd stops at "couldn't track the child". Here the children are forked by the driver and
// WaitSync gets a stand-in for the pidfd: the read end of a pipe whose write end only the child
// holds, which polls readable (POLLHUP) when the child exits, as a pidfd does. Signals go to the
// child's process group (kill(-pid)), which valgrind does support. That way the whole wait loop
// runs under memcheck: input pumping, draining and capture growth, maxBuffer truncation, EPIPE,
// the SIGALRM timer with escalation, the "wouldn't die" hand-over to the reaper thread, a foreign
// SIGALRM during a timed wait, and the measuring helper's report; plus Launch() itself on both paths (which stops at
// the pidfd under valgrind, and is waited for normally without it).
//
// Prints one line per check and "native-driver: N checks passed"; exits 1 on a failed check.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "alarm.h"
#include "helper-report.h"
#include "launcher.h"
#include "waiter.h"

using namespace th;

namespace {

int checks = 0;
int failed = 0;

void Check(bool ok, const std::string &what) {
  checks++;
  if (!ok) failed++;
  std::printf("%s - %s\n", ok ? "ok" : "not ok", what.c_str());
}

// As spawnSync waits (native/sync.cc): the deadline's SIGALRM timer armed on this thread first.
void Wait(Launched &l, const WaitOptions &o, WaitOutcome &w) {
  if (o.timeoutMs > 0) {
    AlarmTimer timer;
    timer.Arm(o.timeoutMs);
    WaitSync(l, o, &timer, w);
  } else {
    WaitSync(l, o, nullptr, w);
  }
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Forks a child in a process group of its own that runs `sh -c script` with pipes on 0-2. The
// Launched carries the parent's pipe ends and, as its pidfd, the stand-in described above. (The
// child execs at once: a forked copy of this process would be leak-checked by valgrind when it
// exits, and report the reaper thread's memory, which only exists in the parent.)
Launched Start(const char *script) {
  int in[2], out[2], err[2], dead[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(dead, O_CLOEXEC)) {
    std::perror("pipe2");
    std::exit(2);
  }
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    fcntl(dead[1], F_SETFD, 0);  // held by the child (and whatever it starts) until it exits
    signal(SIGPIPE, SIG_DFL);    // ignored here, as in Node; the harness's children start clean too
    execl("/bin/sh", "sh", "-c", script, static_cast<char *>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before a kill
  for (int fd : {in[0], out[1], err[1], dead[1]}) close(fd);
  Launched l;
  l.pid = pid;
  l.pidfd = dead[0];
  l.stdinW = in[1];
  l.stdoutR = out[0];
  l.stderrR = err[0];
  SetNonBlocking(l.stdinW);
  SetNonBlocking(l.stdoutR);
  SetNonBlocking(l.stderrR);
  return l;
}

WaitOptions GroupOptions() {
  WaitOptions o;
  o.group = true;  // kill(-pid): valgrind has no pidfd_send_signal
  return o;
}

int StatusCode(const WaitOutcome &w) { return w.haveStatus && WIFEXITED(w.status) ? WEXITSTATUS(w.status) : -1; }
int StatusSignal(const WaitOutcome &w) { return w.haveStatus && WIFSIGNALED(w.status) ? WTERMSIG(w.status) : 0; }

void BigInputAndOutput() {
  const size_t kOut = 3 << 20, kErr = 100 << 10, kIn = (1 << 20) + 13;
  // Reads all its input before it writes (so the pump runs while nothing drains), then 3 MiB of a
  // pattern to stdout, the input's size and 100 KiB to stderr.
  Launched l = Start("n=$(wc -c); yes abcdefg | head -c 3145728; printf '%s\n' $n >&2; head -c 102400 /dev/zero >&2; exit 7");
  std::vector<char> input(kIn, 'i');
  WaitOptions o = GroupOptions();
  o.input.assign(input.begin(), input.end());
  WaitOutcome w;
  Wait(l, o, w);
  std::string count = std::to_string(kIn) + "\n";
  Check(StatusCode(w) == 7 && w.err.len == count.size() + kErr && std::string(w.err.data, count.size()) == count,
        "1 MiB of input pumped, all of it read by the child; 100 KiB of stderr captured (exit " + std::to_string(StatusCode(w)) +
            ", stderr " + std::to_string(w.err.len) + " bytes: " + std::string(w.err.data ? w.err.data : "", std::min<size_t>(w.err.len, 12)) + ")");
  bool same = w.out.len == kOut;
  for (size_t i = 0; same && i < kOut; i++) same = w.out.data[i] == "abcdefg\n"[i % 8];
  Check(same && !w.out.truncated && !w.err.truncated, "3 MiB of stdout captured byte for byte");
}

void Truncation() {
  Launched l = Start("head -c 1048576 /dev/zero");
  WaitOutcome w;
  w.out.limit = 1000;
  Wait(l, GroupOptions(), w);
  Check(StatusCode(w) == 0 && w.out.len == 1000 && w.out.truncated, "maxBuffer: 1000 bytes kept, the rest read and dropped");
}

void StdinClosedEarly() {
  Launched l = Start("exec <&-; sleep 0.1; exit 7");
  std::vector<char> input(4 << 20, 'i');
  WaitOptions o = GroupOptions();
  o.input.assign(input.begin(), input.end());
  WaitOutcome w;
  Wait(l, o, w);
  Check(StatusCode(w) == 7, "the child closes stdin with 4 MiB still to write: EPIPE, the wait goes on");
}

void Deadline() {
  Launched l = Start("exec sleep 100");
  WaitOptions o = GroupOptions();
  o.timeoutMs = 50;
  WaitOutcome w;
  Wait(l, o, w);
  Check(w.timedOut && StatusSignal(w) == SIGKILL, "deadline: SIGKILL at 50 ms, reaped");
}

void KillEscalation() {
  Launched l = Start("trap '' TERM; exec sleep 100");
  usleep(200 * 1000);  // let it ignore SIGTERM first
  WaitOptions o = GroupOptions();
  o.timeoutMs = 50;
  o.killSignal = SIGTERM;
  o.forceKillAfterMs = 50;
  WaitOutcome w;
  Wait(l, o, w);
  Check(w.timedOut && !w.wouldntDie && StatusSignal(w) == SIGKILL, "SIGTERM ignored: SIGKILL after forceKillAfterDelay");
}

void WouldntDie() {
  Launched l = Start("trap '' TERM; exec sleep 100");
  usleep(200 * 1000);
  pid_t pid = l.pid;
  WaitOptions o = GroupOptions();
  o.timeoutMs = 50;
  o.killSignal = SIGTERM;
  o.graceMs = 50;
  WaitOutcome w;
  Wait(l, o, w);
  Check(w.timedOut && w.wouldntDie && !w.haveStatus, "no escalation: wouldn't die after graceTimeout");
  // The reaper thread reaps it once the SIGKILL lands; then the pid is no child of ours.
  bool reaped = false;
  for (int i = 0; i < 500 && !reaped; i++) {
    usleep(10 * 1000);
    reaped = waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD;
  }
  Check(reaped, "the reaper thread reaped it: no zombie");
}

volatile sig_atomic_t g_userAlarms = 0;
void UserAlarm(int) { g_userAlarms = g_userAlarms + 1; }

void AlarmChaining() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = UserAlarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  Launched l = Start("kill -ALRM $PPID; sleep 0.2; exit 3");
  WaitOptions o = GroupOptions();
  o.timeoutMs = 10000;
  WaitOutcome w;
  Wait(l, o, w);
  Check(StatusCode(w) == 3 && !w.timedOut, "an external SIGALRM during a timed wait does not end it (exit " +
        std::to_string(StatusCode(w)) + ", signal " + std::to_string(StatusSignal(w)) + (w.timedOut ? ", timed out)" : ")"));
  Check(g_userAlarms == 1, "and reaches the handler installed before");
  struct sigaction now;
  sigaction(SIGALRM, nullptr, &now);
  Check(now.sa_handler == UserAlarm, "that handler is never replaced");
  signal(SIGALRM, SIG_DFL);
}

// native/helper-report.h: the helper's report, as waiter.cc reads it.
using HelperReport = th_helper_report;

void HelperReports() {
  struct Case {
    const char *what;
    size_t bytes;
    uint32_t magic;
    int32_t kind;
    bool status;
  };
  for (const Case &c : {Case{"a full report: the target's status", sizeof(HelperReport), TH_REPORT_MAGIC, 1, true},
                        Case{"an exec failure report: exit 127, stage exec", sizeof(HelperReport), TH_REPORT_MAGIC, 2, true},
                        Case{"a cut-off report is ignored", 10, TH_REPORT_MAGIC, 1, false},
                        Case{"a report with the wrong magic is ignored", sizeof(HelperReport), 0x12345678u, 1, false}}) {
    int p[2];
    if (pipe2(p, O_CLOEXEC)) std::exit(2);
    HelperReport r;
    memset(&r, 0, sizeof r);
    r.magic = c.magic;
    r.kind = c.kind;
    r.status = 5 << 8;
    r.err = ENOENT;
    if (write(p[1], &r, c.bytes) != static_cast<ssize_t>(c.bytes)) std::exit(2);  // fits in an empty pipe
    close(p[1]);
    Launched l;
    l.reportR = p[0];
    WaitOutcome w;
    ApplyHelperReport(l, w);
    bool ok = l.reportR == -1 && w.haveStatus == c.status;
    if (c.status && c.kind == 1) ok = ok && StatusCode(w) == 5;
    if (c.status && c.kind == 2) ok = ok && StatusCode(w) == 127 && l.stage == Stage::Exec && l.err == ENOENT;
    Check(ok, c.what);
  }
}

// Launch() itself, both paths. Under valgrind it stops at pidfd_open (ENOSYS), kills and reaps
// the child: stage Spawn. Without valgrind the child is waited for.
void Launches() {
  for (LauncherChoice choice : {LauncherChoice::PosixSpawn, LauncherChoice::Fork}) {
    const char *name = choice == LauncherChoice::Fork ? "fork" : "posix_spawn";
    LaunchSpec spec;
    spec.file = "sh";
    spec.argv = {"sh", "-c", "echo out; echo err >&2; exit 4"};
    spec.io[0].kind = StdioKind::Ignore;
    spec.io[1].kind = StdioKind::Pipe;
    spec.io[2].kind = StdioKind::Pipe;
    spec.launcher = choice;
    // (Not rlimits: valgrind keeps fds of its own above the soft RLIMIT_NOFILE and refuses to lower it.)
    if (choice == LauncherChoice::Fork) spec.setsid = true;
    Launched l = Launch(spec);
    if (l.stage == Stage::Spawn) {
      Check(l.err == ENOSYS && l.reaped && l.pidfd == -1 && l.stdoutR == -1, std::string(name) + ": no pidfd (valgrind): killed, reaped, fds closed");
    } else {
      WaitOutcome w;
      Wait(l, WaitOptions(), w);
      Check(l.stage == Stage::None && StatusCode(w) == 4 && std::string(w.out.data, w.out.len) == "out\n" &&
                std::string(w.err.data, w.err.len) == "err\n",
            std::string(name) + ": launched, drained and reaped (stage " + StageName(l.stage) + " errno " + std::to_string(l.err) +
                ", exit " + std::to_string(StatusCode(w)) + ", signal " + std::to_string(StatusSignal(w)) + ")");
    }
    LaunchSpec missing;
    missing.file = "/nonexistent/th-driver";
    missing.argv = {"x"};
    missing.launcher = choice;
    missing.wantPidfd = false;
    Launched m = Launch(missing);
    // Both paths report exec errors through memory the child shares with its parent (glibc's
    // posix_spawn, and the fork path's ChildFail), which valgrind's fork-style vfork does not
    // share: there the failure shows as the child's exit 127 instead.
    bool exact = m.stage == Stage::Exec && m.err == ENOENT;
    bool viaStatus = false;
    if (m.stage == Stage::None) {
      WaitOutcome w;
      Wait(m, WaitOptions(), w);
      viaStatus = StatusCode(w) == 127;
    }
    Check(exact || viaStatus, std::string(name) + ": a missing program is exec ENOENT");
  }
}

// A measured target that exits, and is reaped by its helper, before the parent has opened its
// pidfd (a quick program and a parent slow to get there, as under ASan): the target is known to
// have exited, and nothing is sent to its pid, which may be another process's by now.
void MeasuredTargetReapedFirst(const char *helper) {
  if (helper == nullptr) {
    std::printf("# skip: a target reaped before its pidfd is opened (no helper path given)\n");
    return;
  }
  LaunchSpec spec;
  spec.file = helper;
  spec.argv = {helper, "--", "true", "true"};
  spec.measure = true;
  spec.wantPidfd = false;  // valgrind has no pidfd_open; the helper's exit is waited for below
  for (auto &io : spec.io) io.kind = StdioKind::Ignore;
  Launched l = Launch(spec);
  siginfo_t info;
  // The helper has reaped the target and reported both STARTED and RAN, and exited (not reaped).
  bool exited = l.stage == Stage::None && waitid(P_PID, l.pid, &info, WEXITED | WNOWAIT) == 0;
  bool started = exited && AwaitHelperStart(l);
  int openErr = errno;
  if (!started && l.stage == Stage::Spawn && l.err != ETIMEDOUT && l.err != EPROTO) {
    // pidfd_open itself failed (valgrind has none: ENOSYS): the start is refused, the helper ended
    // (waiter.cc, AdoptHelperStart), so there is no target to ask about.
    std::printf("# skip: a target reaped before its pidfd is opened (pidfd_open: %s)\n", strerror(l.err));
    return;
  }
  if (started && l.targetPidfd < 0 && openErr != ESRCH) {
    std::printf("# skip: a target reaped before its pidfd is opened (pidfd_open: %s)\n", strerror(openErr));
  } else {
    ChildRef ref = SignalTarget(l, false);
    Check(started && l.targetGone && ref.exited && HasExited(ref), "a measured target reaped before its pidfd is opened: known to have exited");
  }
  WaitOutcome w;
  if (l.stage == Stage::None) ReapExited(l, w);
  Check(w.haveStatus && StatusCode(w) == 0, "and its status is the helper's report of it (exit 0)");
  CloseFd(l.reportR);
  CloseFd(l.targetPidfd);
}

}  // namespace

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);  // as Node has it
  BigInputAndOutput();
  Truncation();
  StdinClosedEarly();
  Deadline();
  KillEscalation();
  WouldntDie();
  AlarmChaining();
  HelperReports();
  Launches();
  MeasuredTargetReapedFirst(argc > 1 ? argv[1] : nullptr);
  std::printf("native-driver: %d checks, %d failed\n", checks, failed);
  return failed ? 1 : 0;
}
