// Waiting for a launched child: feeding its stdin, draining its stdout/stderr while it runs,
// enforcing the timeout, and reaping it with wait4 for its status and rusage.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "helper-report.h"
#include "launcher.h"

namespace th {

// Bytes captured from one pipe. Owns `data` (malloc) until Release().
struct Capture {
  char *data = nullptr;
  size_t len = 0;
  size_t cap = 0;
  size_t limit = SIZE_MAX;  // maxBuffer: bytes past it are read and dropped
  bool truncated = false;
  bool pipeGrown = false;  // the pipe was given a larger buffer (Drain, once the output is large)
  size_t populated = 0;    // data[0, populated) is known to be backed by memory (Drain's populate-ahead)
  ~Capture();
  char *Release();
  // Gives back the spare capacity past len (a grown buffer is up to twice its bytes, the last
  // kPopulateAhead of them already backed by memory) before the bytes are handed over for keeps.
  void Trim();
};

enum class DrainResult { Open, Eof };

// Reads whatever the non-blocking fd has now, up to kDrainBudget bytes (and `maxChunks` reads):
// a writer that keeps up with the reads, `yes` through a capture or past maxBuffer, would hold
// the caller in one call for ever (the event loop: every timer and exit of the process). Open
// when the budget is spent; the caller's poll finds the rest. Eof also covers read errors (the
// pipe is done). `sink`, when given, sees every chunk read, including bytes past the limit; when
// it returns false (its reader wants no more for now: backpressure) reading stops there, the
// rest stays in the pipe, and the result is Open.
typedef bool (*ChunkSink)(void *ctx, const char *data, size_t len);
constexpr size_t kDrainBudget = 4 << 20;  // more than a pipe holds (kLargePipe: 1 MiB)
DrainResult Drain(int fd, Capture &into, ChunkSink sink = nullptr, void *ctx = nullptr, int maxChunks = 1 << 30);

// Writes what the non-blocking stdin pipe takes now; true when the pipe is finished with
// (all written, or the child closed its end).
bool PumpInput(int fd, const char *data, size_t len, size_t &offset);

struct WaitOptions {
  double timeoutMs = 0;        // 0: none
  int killSignal = 9;          // SIGKILL
  double forceKillAfterMs = 0; // 0: no escalation
  double graceMs = 5000;       // reap grace after the kill
  double waitDelayMs = 0;      // after the exit, how long pipes a grandchild holds are read on
  bool group = false;          // signals go to the process group (setsid)
  // Bytes for the child's stdin pipe: the addon's own copy, so nothing JavaScript does to the
  // caller's buffer (detaching it, writing to it from another thread) can reach the child.
  std::string input;
};

struct WaitOutcome {
  bool haveStatus = false;
  int status = 0;
  struct rusage usage {};
  bool timedOut = false;
  bool wouldntDie = false;
  int timerError = 0;  // the timeout could not be armed (errno)
  double exitNs = 0;   // when the exit was seen (CLOCK_MONOTONIC); 0: not seen
  // measure: the target's own lifetime as the helper clocked it (fork to reap); 0: not reported.
  // A measured run's durationMs is this, not the helper's life, which adds its exec and exit.
  double targetWallNs = 0;
  bool waitDelayExpired = false;
  RusageSource rusageSource = RusageSource::Wait4;
  Capture out, err;
};

// The escalation after a deadline, shared by the sync waiter (SIGALRM timer) and the async one
// (uv timer). At the deadline killSignal is sent; then, if it was gentler than SIGKILL and
// forceKillAfterMs is set, SIGKILL after that delay; then graceMs for the reap, after which the
// child is one that wouldn't die.
enum class Escalation { Running, Killed, ForceKilled };
struct NextExpiry {
  bool wouldntDie;
  double delayMs;  // until the next expiry
  int signal;      // what the next expiry sends (0: nothing)
};
NextExpiry AfterExpiry(Escalation &phase, const WaitOptions &opts);

// A child still there when its grace is over is one that "wouldn't die" unless it has been sent
// SIGKILL (by the deadline, its escalation, or kill()) and it is not stuck (launcher.h,
// DiesWhenScheduled; kStuckSteps below): one only waiting
// for a CPU to die on (or gone since the exit was looked for: a measured target its helper reaped
// as /proc was read) is waited for on, in steps of kDyingStepMs, for at most kDyingMaxMs more.
// (A child left alive by a gentler killSignal, with no forceKillAfterDelay, did not die of what it
// was sent: it is one that wouldn't die, at once.) A grace shorter than the kernel's taking
// a SIGKILLed child down had the sync waiter call 39 of 40 `sleep`s killed with graceTimeout 0
// ones that wouldn't die.
constexpr double kDyingStepMs = 1;
constexpr double kDyingMaxMs = 1000;
// A child seen in an uninterruptible sleep this many steps in a row is stuck. /proc shows a
// killable sleep ('D' too: an exec reading its program, a page fault) as it shows a stuck one,
// and a SIGKILL ends a killable one at once: one look at a measured target still in its exec
// called it one that wouldn't die (1 in 10 runs of 10, with both CPUs busy).
constexpr int kStuckSteps = 20;

// The wait past the grace for a child that has been sent SIGKILL. `untilNs` is 0 until the grace
// first ends, then kDyingMaxMs from that moment (a bound in time, whatever each step's timer
// rounds to).
struct DyingWait {
  double untilNs = 0;
  int stuckSteps = 0;
};
// Whether to wait another step: the child has exited since it was looked for (taken at the next
// step), or it is dying, within the bound.
bool WaitOnDying(DyingWait &wait, const ChildRef &child);

// measure: waits for the helper's STARTED report (the helper's exec, its fork and the target's
// exec: most of a millisecond, bounded by kHelperStartMs) and opens a pidfd for the target, which every signal goes
// to from then on. The child's own deadline is not applied here: it acts on the target once it
// exists, with killSignal and the escalation, exactly as on an unmeasured child. False when there
// is no target, the helper reaped: child.stage says why (fork: the helper could not fork it;
// spawn: the helper died without a word, or did not report within the bound).
constexpr double kHelperStartMs = 10000;
bool AwaitHelperStart(Launched &child);

// The two halves of AwaitHelperStart, for a wait that does not block (the async waiter watches
// the report fd on its loop). ReadHelperReport reads one whole report; false at EOF, on an error
// or a record that is not one. AdoptHelperStart acts on the first report (null: none could be
// read; rc says why, as PollReadableUntil's: 0 none came in time, else the helper died without
// one): true when the target runs; else the helper is killed and reaped, child.stage and
// child.err say why, and with closeFds the launch's fds are closed (the async waiter closes its
// own, with the handles that watch them).
bool ReadHelperReport(int fd, th_helper_report &report);
bool AdoptHelperStart(Launched &child, int rc, const th_helper_report *report, bool closeFds);

// The ref signals go to: the target when measured, else the child itself; a measured child's
// helper, not as a group, until its target is reported (the async waiter's start).
ChildRef SignalTarget(const Launched &child, bool group);

// measure: the target has exited, and what is waited for now is its helper's report and exit. A
// helper that was stopped (SIGSTOP from the target, `kill -STOP $PPID`, or anyone) would make
// that wait endless, deadline or not: it is sent SIGCONT, through its pidfd. Nothing otherwise.
void ResumeHelper(const Launched &child);

// measure: replaces the helper's own status and rusage with the target's, from the helper's
// final report; an exec or setup failure it reports becomes the launch's failure. Without a
// report (the helper itself was killed) the rusage is marked unavailable. Closes child.reportR
// and the target's pidfd.
void ApplyHelperReport(Launched &child, WaitOutcome &outcome);

// The end of every wait, sync or async: the child is reaped with wait4 for its status and rusage,
// and a measured child's own figures replace the helper's. With block false (the event loop, which
// must not wait in wait4), false when the child cannot be reaped yet (TryReap's NotYet: another
// process traces it), and nothing is taken: ask again later.
bool ReapExited(Launched &child, WaitOutcome &outcome, bool block = true);

// Runs the wait loop on the calling thread. Takes over (and closes) child's fds. `timer`, when
// the wait has a deadline, was created (and armed for it) by the caller on this thread.
class AlarmTimer;
void WaitSync(Launched &child, const WaitOptions &opts, AlarmTimer *timer, WaitOutcome &outcome);

// Reaps wait4(pid) for a child that wouldn't die in time, on a background thread, once it
// finally exits, so no zombie is left. Takes ownership of pidfd.
void HandToReaper(pid_t pid, int pidfd);

}  // namespace th
