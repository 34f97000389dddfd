// SIGALRM timeouts for the waiting thread, after the harness contract's "wait4 interrupted by
// SIGALRM" (docs: README, Semantics, Timeouts).
//
// The contract arms alarm(seconds) and lets SIGALRM interrupt the wait. Node is multi-threaded and
// its JavaScript can install and remove SIGALRM listeners at any moment, from any thread, so a
// process-wide alarm with a handler of our own is at the mercy of whoever touches SIGALRM's
// disposition next: remove a listener on the main thread and the alarm kills the process ("Alarm
// clock"); add one and the user's listener receives the harness's alarm while the deadline is lost.
//
// So the alarm never meets a handler at all. For the length of one timed wait the waiting thread
// blocks SIGALRM and arms a POSIX timer that sends SIGALRM to that thread only (SIGEV_THREAD_ID),
// with millisecond precision. A blocked, thread-directed signal stays pending on that thread,
// whatever the disposition, and a signalfd makes it readable: the wait (poll) is interrupted by it
// and the waiter collects it. The only dispositions that can still interfere are SIG_IGN (the
// kernel drops an ignored signal when it is sent), and a process-directed SIGALRM someone else sent
// (it may be made readable on our signalfd): for both, poll's own timeout, computed from the same
// deadline, is the second guard, so a deadline holds whatever any thread does to SIGALRM.
#pragma once

#include <signal.h>
#include <time.h>

namespace th {

class AlarmTimer {
 public:
  // Blocks SIGALRM in the calling thread and creates a timer aimed at this thread. Where no timer
  // can be created, the deadline is kept by poll's timeout alone (PollTimeoutMs,
  // TakeExpiry), as when the alarm is flushed by SIG_IGN.
  AlarmTimer();
  // Deletes the timer, takes its alarm if one is still pending, restores the thread's mask.
  ~AlarmTimer();
  AlarmTimer(const AlarmTimer &) = delete;
  AlarmTimer &operator=(const AlarmTimer &) = delete;

  // Arms a one-shot expiry `ms` from now (replacing any armed one).
  bool Arm(double ms);
  // The fd to poll (POLLIN: an alarm is pending for this thread), or -1 when there is none to
  // poll: it could not be opened (no fd free: the timeout guards the deadline alone), or a foreign
  // SIGALRM is pending where we would see it (polling would spin). Opened on first use, so a
  // timed spawn needs no fd before the launch has had its own.
  int fd();
  // poll's timeout for the armed expiry (rounded up to the millisecond), -1 when none is armed.
  int PollTimeoutMs() const;
  // After poll returned: true once per expiry of the armed deadline, whether its SIGALRM was read
  // from the signalfd or the clock says the deadline has passed (the second guard).
  bool TakeExpiry();

 private:
  enum class Read { Ours, Foreign, Nothing };
  Read ReadOne();
  bool Fired() const;
  int sigfd_ = -1;
  timer_t timer_{};
  bool haveTimer_ = false, pollable_ = true, armed_ = false;
  double deadlineNs_ = 0;  // of the armed expiry
  sigset_t savedMask_{};
  bool maskSaved_ = false;
};

}  // namespace th
