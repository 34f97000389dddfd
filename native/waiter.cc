#include "waiter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "alarm.h"
#include "clock.h"
#include "helper-report.h"
#include "launcher.h"

namespace th {

Capture::~Capture() { free(data); }

char *Capture::Release() {
  char *d = data;
  data = nullptr;
  len = cap = populated = 0;
  return d;
}

void Capture::Trim() {
  if (!data || cap - len < 4096) return;
  // A shrinking realloc stays in place (glibc: mremap for a mapped chunk, a split for a heap one).
  if (char *shrunk = static_cast<char *>(realloc(data, len ? len : 1))) {
    data = shrunk;
    cap = len ? len : 1;
    populated = std::min(populated, cap);
  }
}

// A child that has written this much through a capture pipe gets a pipe of kLargePipe bytes: with
// the default 64 KiB it stops at every 64 KiB until this process has read them, and the wake-ups
// cost more than the copy (a 1 GiB capture: 1.18 s with 64 KiB, 0.80 s with 1 MiB, in C). Only
// then, because a larger pipe counts against the user's pipe budget (pipe-user-pages-soft), which
// a hundred small children must not use up. Failure (the budget, an old kernel) is harmless.
constexpr size_t kLargeOutput = 1 << 20;
constexpr int kLargePipe = 1 << 20;

// Past kLargeOutput the buffer is also backed by memory just ahead of the reads, with
// MADV_POPULATE_WRITE (Linux 5.14), kPopulateAhead at most and half of that at a time, instead of a
// page fault inside read() for every 4 KiB page; a read goes no further than the backed window. A short window is the point: the pages are zeroed
// just before the pipe's bytes are copied over them, while they are still in the cache. A 1 GiB
// capture in C (scripts/bench/floor.c -c), six in a row, where `head | cat > /dev/null` took
// 435-520 ms: no populate 845-1255 ms; 8 MiB ahead 688-791; 1 MiB 520-530; 256 KiB 479-527;
// 64 KiB 545-636. Huge pages (MADV_HUGEPAGE) were tried too and not kept: on a VM that hands freed
// memory back to its host they cost 3 s per fresh GiB. An older kernel refuses the advice
// (EINVAL), and the reads fault the pages in as before.
constexpr size_t kPopulateAhead = 256 << 10;
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void PopulateAhead(Capture &into) {
  // Called with cap > len. Tops the window up once half of it is read; always when none is left
  // (the first time, or after a realloc that moved the buffer), so a read always has room.
  size_t want = std::min(into.cap, into.len + kPopulateAhead);
  if (into.populated > into.len && (into.populated >= want || want - into.populated < kPopulateAhead / 2)) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t base = reinterpret_cast<uintptr_t>(into.data);
  uintptr_t from = (base + std::max(into.populated, into.len) + page - 1) & ~(page - 1);
  uintptr_t to = (base + want) & ~(page - 1);
  if (to > from) madvise(reinterpret_cast<void *>(from), to - from, MADV_POPULATE_WRITE);
  into.populated = want;
}

DrainResult Drain(int fd, Capture &into, ChunkSink sink, void *ctx, int maxChunks) {
  size_t taken = 0;
  int chunks = 0;
  // After each read: whether the call's budget is spent.
  auto spent = [&](ssize_t n) {
    taken += static_cast<size_t>(n);
    return taken >= kDrainBudget || ++chunks >= maxChunks;
  };
  for (;;) {
    if (!into.pipeGrown && into.len >= kLargeOutput) {
      into.pipeGrown = true;
      fcntl(fd, F_SETPIPE_SZ, kLargePipe);
    }
    if (into.len < into.limit) {
      if (into.cap == into.len) {
        size_t want = std::max<size_t>(4096, into.cap * 2);
        if (into.limit != SIZE_MAX) want = std::min(want, into.limit);
        char *grown = static_cast<char *>(realloc(into.data, want));
        if (!grown) {
          // No memory for more (RLIMIT_AS, an overcommit refusal): the capture ends here as at
          // maxBuffer, the rest read and dropped, and the result says truncated. Closing the pipe
          // instead had killed the child with SIGPIPE and claimed the output whole.
          into.limit = into.len;
          continue;
        }
        // A realloc that copied left the backed tail behind: only the bytes read are known to be.
        if (grown != into.data) into.populated = into.len;
        into.data = grown;
        into.cap = want;
      }
      size_t room = into.cap - into.len;
      if (into.pipeGrown) {
        PopulateAhead(into);
        room = std::min(room, into.populated - into.len);  // into the backed window only
      }
      ssize_t n = read(fd, into.data + into.len, room);
      if (n > 0) {
        into.len += static_cast<size_t>(n);
        if (sink && !sink(ctx, into.data + into.len - n, static_cast<size_t>(n))) return DrainResult::Open;
        if (spent(n)) return DrainResult::Open;
        continue;
      }
      if (n == 0) return DrainResult::Eof;
      if (errno == EINTR) continue;
      return errno == EAGAIN ? DrainResult::Open : DrainResult::Eof;
    }
    // Past maxBuffer: keep the pipe flowing so the child never blocks, and say so.
    char scratch[16384];
    ssize_t n = read(fd, scratch, sizeof scratch);
    if (n > 0) {
      into.truncated = true;
      if (sink && !sink(ctx, scratch, static_cast<size_t>(n))) return DrainResult::Open;
      if (spent(n)) return DrainResult::Open;
      continue;
    }
    if (n == 0) return DrainResult::Eof;
    if (errno == EINTR) continue;
    return errno == EAGAIN ? DrainResult::Open : DrainResult::Eof;
  }
}

bool PumpInput(int fd, const char *data, size_t len, size_t &offset) {
  while (offset < len) {
    ssize_t n = write(fd, data + offset, std::min<size_t>(len - offset, 1 << 20));
    if (n > 0) {
      offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return false;
    return true;  // EPIPE: the child closed its stdin; the rest is not wanted
  }
  return true;
}

bool ReadHelperReport(int fd, th_helper_report &report) {
  ssize_t got;
  do {
    got = read(fd, &report, sizeof report);
  } while (got < 0 && errno == EINTR);
  return got == static_cast<ssize_t>(sizeof report) && report.magic == TH_REPORT_MAGIC;
}

namespace {

// Every parent-side fd of a launch that ended before the wait.
void CloseLaunched(Launched &child) {
  CloseFd(child.reportR);
  CloseFd(child.targetSlot);
  CloseFd(child.pidfd);
  CloseFd(child.stdinW);
  CloseFd(child.stdoutR);
  CloseFd(child.stderrR);
}

// A start refused: the helper (killed first when `kill`) reaped, and the launch failed at `stage`
// with `err`, no pid. False, for AdoptHelperStart to return.
bool RefuseStart(Launched &child, bool kill, Stage stage, int err, bool closeFds) {
  if (kill) ::kill(child.pid, SIGKILL);
  int status;
  struct rusage usage;
  Reap(child.pid, status, usage);
  child.pid = 0;
  child.targetPid = 0;
  child.stage = stage;
  child.err = err;
  if (closeFds) CloseLaunched(child);
  return false;
}

}  // namespace

bool AdoptHelperStart(Launched &child, int rc, const th_helper_report *report, bool closeFds) {
  CloseFd(child.targetSlot);  // the place held for the target's pidfd, taken by it below
  // No start: the helper is gone without one, or stuck. It is not left running (its target, if
  // any, dies with it: PR_SET_PDEATHSIG).
  if (!report) return RefuseStart(child, true, Stage::Spawn, rc == 0 ? ETIMEDOUT : EPROTO, closeFds);
  if (report->kind == TH_REPORT_STARTED) {
    child.targetPid = report->pid;
    child.targetPidfd = static_cast<int>(syscall(SYS_pidfd_open, report->pid, 0));
    int openErr = child.targetPidfd < 0 ? errno : 0;
    // ESRCH: the target has exited and the helper has reaped it already (a quick program, a
    // parent slow to get here); its RAN report follows.
    // A target whose exec or setup failed (err) is exiting, and never ran: as gone (its
    // EXEC_FAILED or SETUP_FAILED report follows), so no signal is sent to it and kill(0) is false.
    child.targetGone = openErr == ESRCH || report->err != 0;
    if (openErr != 0 && openErr != ESRCH) {
      // No pidfd (ENOMEM, ENFILE; EMFILE only where another thread took the place held for it
      // between its close and this open): the target could be signalled only by its pid, which
      // is another process's once the helper has reaped it and the pid is reused. As a launch
      // whose own pidfd could not be had (launcher.cc): ended now, and said, rather than kept
      // with signals that may reach a stranger. The target dies with its helper (PR_SET_PDEATHSIG,
      // which a set-user-ID target has lost at its exec: that one is left running, untracked).
      return RefuseStart(child, true, Stage::Spawn, openErr, closeFds);
    }
    // Or the pid is another process's by now: the target was reaped and its pid reused before
    // this report was taken (a loop held up, a pid space that wraps quickly). A pidfd is only the
    // target's if its process is the helper's child; another's would take this child's signals.
    if (child.targetPidfd >= 0) {
      pid_t parent = PidfdParent(child.targetPidfd, report->pid);
      if (parent >= 0 && parent != child.pid) {
        CloseFd(child.targetPidfd);
        child.targetGone = true;
      }
    }
    return true;
  }
  // The helper could not create the target (FORK_FAILED): as a launch whose fork failed.
  bool forkFailed = report->kind == TH_REPORT_FORK_FAILED;
  return RefuseStart(child, false, forkFailed ? Stage::Fork : Stage::Spawn, forkFailed ? report->err : EPROTO, closeFds);
}

bool AwaitHelperStart(Launched &child) {
  th_helper_report report;
  int rc = PollReadableUntil(child.reportR, NowNs() + kHelperStartMs * 1e6);
  bool read = rc == 1 && ReadHelperReport(child.reportR, report);
  return AdoptHelperStart(child, rc, read ? &report : nullptr, true);
}

void ResumeHelper(const Launched &child) {
  if (child.targetPid > 0 && child.pidfd >= 0) syscall(SYS_pidfd_send_signal, child.pidfd, SIGCONT, nullptr, 0);
}

ChildRef SignalTarget(const Launched &child, bool group) {
  if (child.targetPid > 0) return ChildRef{child.targetPid, child.targetPidfd, group, child.targetGone};
  // A measured child whose target is not reported yet: the helper itself, never as a group (the
  // target makes that). Killing it kills the target too (PR_SET_PDEATHSIG).
  return ChildRef{child.pid, child.pidfd, group && child.reportR < 0};
}

void ApplyHelperReport(Launched &child, WaitOutcome &outcome) {
  if (child.reportR < 0) return;
  th_helper_report report;
  bool have = ReadHelperReport(child.reportR, report);
  CloseFd(child.reportR);
  CloseFd(child.targetPidfd);
  CloseFd(child.targetSlot);
  if (!have || report.kind == TH_REPORT_STARTED) {
    // The helper was killed before it could report (by someone else: the harness signals the
    // target): the status is the helper's, and no rusage is the target's. The pid is still the
    // target's, as the handle's pid was, once there was one.
    outcome.rusageSource = RusageSource::Unavailable;
    if (child.targetPid > 0) child.pid = child.targetPid;
    return;
  }
  outcome.rusageSource = RusageSource::Helper;
  th_report_rusage_to(&outcome.usage, &report.usage);
  if (child.targetPid > 0) child.pid = child.targetPid;
  if (report.kind == TH_REPORT_RAN) {
    outcome.status = report.status;
    outcome.haveStatus = true;
    outcome.targetWallNs = static_cast<double>(report.wall_ns);
    return;
  }
  // The target never ran the program: reported as the unmeasured launch reports it, with the
  // same stage and errno, and the same pid rule (posix_spawn: 0; the fork path: the child's).
  // The helper numbers its setup stages by hand (exec-helper.c's STAGE_*): held to TH_STAGES here.
  static_assert(static_cast<int>(Stage::Setsid) == 5 && static_cast<int>(Stage::Rlimit) == 6 &&
                    static_cast<int>(Stage::Setgroups) == 11 && static_cast<int>(Stage::Setgid) == 12 &&
                    static_cast<int>(Stage::Setuid) == 13 && static_cast<int>(Stage::Setpgid) == 14 &&
                    static_cast<int>(Stage::Affinity) == 15 && static_cast<int>(Stage::Terminal) == 16,
                "native/exec-helper.c's STAGE_* numbers");
  Stage stage = report.kind == TH_REPORT_EXEC_FAILED ? Stage::Exec : static_cast<Stage>(report.stage);
  child.stage = stage;
  child.err = report.err;
  child.detail = report.detail;
  if (!child.usedFork) child.pid = 0;
  outcome.status = W_EXITCODE(ExitCodeForSpawnFailure(stage, report.err), 0);
  outcome.haveStatus = true;
}

bool WaitOnDying(DyingWait &wait, const ChildRef &child) {
  double now = NowNs();
  if (wait.untilNs == 0) wait.untilNs = now + kDyingMaxMs * 1e6;
  if (now >= wait.untilNs) return false;
  if (HasExited(child) || DiesWhenScheduled(child)) {
    wait.stuckSteps = 0;
    return true;
  }
  return ++wait.stuckSteps < kStuckSteps;
}

NextExpiry AfterExpiry(Escalation &phase, const WaitOptions &opts) {
  if (phase == Escalation::Running && opts.killSignal != SIGKILL && opts.forceKillAfterMs > 0) {
    phase = Escalation::Killed;
    return {false, opts.forceKillAfterMs, SIGKILL};
  }
  if (phase != Escalation::ForceKilled) {
    phase = Escalation::ForceKilled;
    return {false, opts.graceMs, 0};
  }
  return {true, 0, 0};
}

bool ReapExited(Launched &child, WaitOutcome &outcome, bool block) {
  if (child.gone) {
    // Reaped before it could be watched (Launched::gone): a measured child's helper may still
    // have reported its target's status; otherwise the result says neither.
    outcome.rusageSource = RusageSource::Unavailable;
    ApplyHelperReport(child, outcome);
    return true;
  }
  if (block) {
    outcome.haveStatus = Reap(child.pid, outcome.status, outcome.usage);
  } else {
    ReapResult r = TryReap(child.pid, outcome.status, outcome.usage);
    if (r == ReapResult::NotYet) return false;
    outcome.haveStatus = r == ReapResult::Reaped;
  }
  if (!outcome.haveStatus) {
    // Nothing to reap: the child is gone already, reaped by the kernel (this process ignores
    // SIGCHLD) or by another waiter. Its rusage went with it; its status the pidfd still tells,
    // where the kernel keeps it. Without either the result says neither, never zeros.
    outcome.rusageSource = RusageSource::Unavailable;
    outcome.haveStatus = PidfdExitStatus(child.pidfd, outcome.status);
  }
  ApplyHelperReport(child, outcome);
  return true;
}

namespace {

// After the exit: what the child wrote is in its pipes, and a grandchild may still be writing
// to them. Read on until EOF, for at most waitDelay (then the result says the output was cut).
void DrainAfterExit(Launched &child, const WaitOptions &opts, WaitOutcome &outcome) {
  if (child.stdoutR >= 0 && Drain(child.stdoutR, outcome.out) == DrainResult::Eof) CloseFd(child.stdoutR);
  if (child.stderrR >= 0 && Drain(child.stderrR, outcome.err) == DrainResult::Eof) CloseFd(child.stderrR);
  double until = NowNs() + opts.waitDelayMs * 1e6;
  while (child.stdoutR >= 0 || child.stderrR >= 0) {
    int timeout = PollTimeoutUntil(until);
    if (timeout == 0) {
      outcome.waitDelayExpired = true;
      return;
    }
    struct pollfd fds[2];
    int n = 0, outIdx = -1, errIdx = -1;
    if (child.stdoutR >= 0) outIdx = n, fds[n++] = {child.stdoutR, POLLIN, 0};
    if (child.stderrR >= 0) errIdx = n, fds[n++] = {child.stderrR, POLLIN, 0};
    int rc = PollSet(fds, static_cast<nfds_t>(n), timeout);
    if (rc < 0 && errno != EINTR) return;
    if (outIdx >= 0 && fds[outIdx].revents && Drain(child.stdoutR, outcome.out) == DrainResult::Eof) CloseFd(child.stdoutR);
    if (errIdx >= 0 && fds[errIdx].revents && Drain(child.stderrR, outcome.err) == DrainResult::Eof) CloseFd(child.stderrR);
  }
}

}  // namespace

namespace {

// Every fd the launch left this side holds for the child, whichever way the wait ended.
void CloseChildFds(Launched &child) {
  CloseFd(child.stdinW);
  CloseFd(child.stdoutR);
  CloseFd(child.stderrR);
  CloseFd(child.pidfd);
  CloseFd(child.reportR);
  CloseFd(child.targetPidfd);
  CloseFd(child.targetSlot);
}

}  // namespace

void WaitSync(Launched &child, const WaitOptions &opts, AlarmTimer *timer, WaitOutcome &outcome) {
  ChildRef ref = SignalTarget(child, opts.group);
  if (child.stdinW >= 0 && opts.input.empty() && !child.terminal) CloseFd(child.stdinW);
  bool feeding = child.stdinW >= 0 && !opts.input.empty();  // a terminal's master stays open (launcher.h)

  if (child.pidfd < 0) {
    // Nothing to drain and no deadline: block in wait4, as the contract's harness does.
    ReapExited(child, outcome);
    CloseChildFds(child);
    return;
  }

  Escalation phase = Escalation::Running;
  int pendingSignal = timer ? opts.killSignal : 0;  // what the next expiry sends
  DyingWait dying;                                  // past the grace, for a child that is dying
  bool sigkillSent = false;                         // the escalation has sent SIGKILL
  size_t inputOffset = 0;
  bool exited = false;
  // A terminal's master reads EIO once no slave fd is left open, but the master itself is still
  // open here (stdinW, launcher.h) and output can still reach it: the line discipline echoes
  // input typed after that moment. So at the first EIO the master only leaves the poll (it would
  // report POLLHUP for ever), and it is read again, to the end, once the child has exited
  // (DrainAfterExit). Given up at the first EIO, the echo of `input` was there or not by a race.
  bool masterHungUp = false;

  while (!exited) {
    struct pollfd fds[5];
    int n = 0;
    fds[n++] = {child.pidfd, POLLIN, 0};
    int inIdx = -1, outIdx = -1, errIdx = -1, alarmIdx = -1;
    if (feeding) inIdx = n, fds[n++] = {child.stdinW, POLLOUT, 0};
    if (child.stdoutR >= 0 && !masterHungUp) outIdx = n, fds[n++] = {child.stdoutR, POLLIN, 0};
    if (child.stderrR >= 0) errIdx = n, fds[n++] = {child.stderrR, POLLIN, 0};
    if (timer && timer->fd() >= 0) alarmIdx = n, fds[n++] = {timer->fd(), POLLIN, 0};

    // The blocking call the alarm interrupts (the contract's wait4; here poll, because the pipes
    // must be drained while the child runs or a chatty child deadlocks on a full pipe).
    int rc = PollSet(fds, static_cast<nfds_t>(n), timer ? timer->PollTimeoutMs() : -1);
    if (rc < 0 && errno != EINTR) {
      // Cannot wait properly (not even one fd at a time: RLIMIT_NOFILE 0): the child is not left
      // running, and the result says why it was killed, not just that it was.
      child.stage = Stage::Spawn;
      child.err = errno;
      SignalChild(ref, SIGKILL);
      break;
    }
    if (rc > 0) {
      if (inIdx >= 0 && fds[inIdx].revents && PumpInput(child.stdinW, opts.input.data(), opts.input.size(), inputOffset)) {
        feeding = false;
        if (!child.terminal) CloseFd(child.stdinW);
      }
      if (outIdx >= 0 && fds[outIdx].revents && Drain(child.stdoutR, outcome.out) == DrainResult::Eof) {
        if (child.terminal)
          masterHungUp = true;
        else
          CloseFd(child.stdoutR);
      }
      if (errIdx >= 0 && fds[errIdx].revents && Drain(child.stderrR, outcome.err) == DrainResult::Eof)
        CloseFd(child.stderrR);
      if (fds[0].revents) {
        exited = true;
        outcome.exitNs = NowNs();
      }
    }
    if (exited || !timer) continue;
    bool due = rc == 0 || (alarmIdx >= 0 && fds[alarmIdx].revents) || timer->PollTimeoutMs() == 0;
    if (due && timer->TakeExpiry()) {
      // The child exited before the deadline acted: it is reported as exited, not timed out.
      if (HasExited(ref)) {
        ResumeHelper(child);
        exited = true;
        outcome.exitNs = NowNs();
        continue;
      }
      // An expiry: send what it was armed for, then arm the next step of the escalation.
      outcome.timedOut = true;
      if (pendingSignal) SignalChild(ref, pendingSignal);
      if (pendingSignal == SIGKILL) sigkillSent = true;
      NextExpiry next = AfterExpiry(phase, opts);
      if (next.wouldntDie && sigkillSent && WaitOnDying(dying, ref)) {
        pendingSignal = 0;
        timer->Arm(kDyingStepMs);
        continue;
      }
      if (next.wouldntDie) {
        outcome.wouldntDie = true;
        break;
      }
      pendingSignal = next.signal;
      timer->Arm(next.delayMs);
    }
  }

  if (outcome.wouldntDie) {
    outcome.rusageSource = RusageSource::Unavailable;  // not reaped here: no wait4 figures
    SignalChild(ref, SIGKILL);
    HandToReaper(child.pid, child.pidfd);
    if (child.targetPid > 0) child.pid = child.targetPid;  // the result's pid: the target's
    child.pidfd = -1;
  } else {
    DrainAfterExit(child, opts, outcome);
    ReapExited(child, outcome);
  }
  CloseChildFds(child);
}

// ----- the reaper ------------------------------------------------------------------------------

namespace {

struct Reaper {
  std::mutex mutex;
  std::vector<std::pair<pid_t, int>> pending;  // (pid, pidfd)
  int wake[2] = {-1, -1};
  bool started = false;

  // Under the mutex. Whether the thread runs; false when it cannot be started now.
  bool Start() {
    if (wake[0] < 0 && pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0) return false;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // the reaper thread takes no signals
    try {
      std::thread([this] { Run(); }).detach();
      started = true;
    } catch (const std::system_error &) {
      // EAGAIN: std::thread throws where pthread_create fails.
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return started;
  }

  // Under the mutex, without a thread: reap the pending children that have died, keep the rest.
  void ReapDeadPending() {
    for (size_t i = pending.size(); i-- > 0;) {
      if (!Collect(pending[i])) continue;  // still running (in D state, say), or traced: left for a later try
      pending.erase(pending.begin() + static_cast<long>(i));
    }
  }

  void Run() {
    std::vector<std::pair<pid_t, int>> watching;  // still running: their pidfds are polled
    std::vector<std::pair<pid_t, int>> traced;    // exited, not yet ours to reap: asked again
    for (;;) {
      {
        // A child handed over without a pidfd is asked about as a traced one is.
        std::lock_guard<std::mutex> lock(mutex);
        for (auto &w : pending) (w.second >= 0 ? watching : traced).push_back(w);
        pending.clear();
      }
      std::vector<struct pollfd> fds;
      fds.push_back({wake[0], POLLIN, 0});
      for (auto &w : watching) fds.push_back({w.second, POLLIN, 0});
      if (PollSet(fds.data(), fds.size(), traced.empty() ? -1 : 250) < 0) {
        // Not even one fd at a time (RLIMIT_NOFILE 0): asked again a slice later, not in a spin.
        struct timespec slice = {0, kSetSliceMs * 1000000L};
        nanosleep(&slice, nullptr);
        continue;
      }
      if (fds[0].revents) {
        char buf[64];
        while (read(wake[0], buf, sizeof buf) > 0) {
        }
      }
      for (size_t i = fds.size() - 1; i >= 1; i--) {
        if (!fds[i].revents) continue;
        auto w = watching[i - 1];
        watching.erase(watching.begin() + static_cast<long>(i - 1));
        // Exited; but a traced child's zombie may not be ours to reap yet (TryReap): never block
        // the other children's reaping on it.
        if (!Collect(w)) traced.push_back(w);
      }
      for (size_t i = traced.size(); i-- > 0;)
        if (Collect(traced[i])) traced.erase(traced.begin() + static_cast<long>(i));
    }
  }

  // Reaps a child the reaper holds, and lets its pidfd go; false when it cannot be had yet.
  static bool Collect(const std::pair<pid_t, int> &w) {
    int status;
    struct rusage usage;
    if (TryReap(w.first, status, usage) == ReapResult::NotYet) return false;
    if (w.second >= 0) close(w.second);
    return true;
  }
};

Reaper &TheReaper() {
  static Reaper *reaper = new Reaper();  // never destroyed: its thread outlives static teardown
  return *reaper;
}

}  // namespace

void HandToReaper(pid_t pid, int pidfd) {
  Reaper &r = TheReaper();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.pending.emplace_back(pid, pidfd);
  if (!r.started && !r.Start()) {
    // No thread to be had (RLIMIT_NPROC, a cgroup's pids.max, the thread table full): never a
    // crash of the caller's process. What has died is reaped now; the rest stays a zombie
    // until a later hand-over, which tries to start the reaper again and takes the whole list.
    r.ReapDeadPending();
    return;
  }
  char one = 1;
  ssize_t ignored = write(r.wake[1], &one, 1);
  (void)ignored;
}

}  // namespace th
