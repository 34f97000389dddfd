// SIGALRM timeouts for the waiting thread, after the seed's "wait4 interrupted by SIGALRM".
//
// The seed arms alarm(seconds). Node is multi-threaded, so a process-wide alarm would land on
// whichever thread the kernel picks, and its precision is a second. Instead each wait arms a
// POSIX timer with SIGEV_THREAD_ID aimed at the waiting thread, in milliseconds, and the handler
// (installed without SA_RESTART, so the blocking call returns EINTR) does the killing itself:
// there is no window between "the alarm fired" and "the child was signalled" in which an early
// alarm could be lost. Alarms that are not ours (another timer, kill -ALRM, alarm(2)) are
// chained to whatever SIGALRM handler was installed before, such as Node's own for
// process.on('SIGALRM').
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <time.h>

namespace th {

// One timed wait. Lives on the waiting thread's stack; the handler finds it through the
// timer's sigev_value and only acts on slots that are registered.
struct AlarmSlot {
  int pidfd = -1;
  pid_t pid = 0;
  bool group = false;                 // kill the whole process group (setsid)
  volatile sig_atomic_t nextSignal = 0;  // what the next expiry sends (0: nothing, just wake)
  volatile sig_atomic_t expiries = 0;    // how many times the timer has expired
};

class AlarmTimer {
 public:
  // Installs the handler (if this is the first active timer) and creates a timer aimed at the
  // calling thread. ok() is false when the timer could not be created; errno says why.
  explicit AlarmTimer(AlarmSlot *slot);
  ~AlarmTimer();
  bool ok() const { return ok_; }
  int error() const { return err_; }
  // Arms a one-shot expiry `ms` from now that will send `sig` (0: none) to the slot's child.
  bool Arm(double ms, int sig);
  void Disarm();

 private:
  AlarmSlot *slot_;
  timer_t timer_{};
  bool ok_ = false;
  bool registered_ = false;
  int err_ = 0;
  sigset_t savedMask_{};
};

// Sends sig to the slot's child (or its process group). Async-signal-safe.
void SignalChild(const AlarmSlot &slot, int sig);

}  // namespace th
