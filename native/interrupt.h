// Interrupting a system call that another thread of this process is blocked in: a FIFO's open(2)
// waiting for its other end, which the harness gives up on (native/path-open.h).
//
// Only a signal does that (the call then fails with EINTR), and only one that meets a handler
// installed without SA_RESTART: a blocked, ignored or default signal leaves the call waiting. The
// process's signals belong to Node and the user, so the harness takes one number, SIGRTMAX - 1
// (InterruptSignal), and installs its handler only the first time it needs it. Whatever was
// there before is kept and chained to: a signal the harness did not send (a kill(2) or sigqueue(3)
// from outside, another library's own) goes on to the handler that was installed before, with its
// mask and SA_RESETHAND, or, if that was the default, ends the process as the default would have.
// A signal the harness sent (tgkill to one of its registered threads: si_code SI_TKILL with this
// process's pid, which no other process can send) does nothing but interrupt.
//
// A signal can land just before the thread enters the call, and then interrupts nothing; the
// sender sends again, but only once the last one has been taken (Taken), so no signal piles up
// in the queue of a thread that no signal can wake (an open on a hung mount).
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace th {

// The number the harness takes. A function: SIGRTMAX is a glibc call, not a constant.
int InterruptSignal();

// A thread that may be interrupted. Registered by that thread itself, before its call; taken
// signals are counted from then on. Not copyable; Unregister before the thread ends.
class InterruptibleThread {
 public:
  // On the calling thread: registers it and unblocks the signal for it (every other signal stays
  // as the thread has it). Registration can fail (more than 1,024 at once): then Taken is always
  // 0, and the sender asks SignalPending instead (see path-open.cc).
  InterruptibleThread();
  ~InterruptibleThread();
  InterruptibleThread(const InterruptibleThread &) = delete;
  InterruptibleThread &operator=(const InterruptibleThread &) = delete;

  bool registered() const { return slot_ >= 0; }
  // How many of the harness's signals this thread has taken (each one has run the handler).
  unsigned Taken() const;
  // Sends one signal to this thread. Only while the thread is alive (the caller knows it is: it
  // is still inside the call). False when the handler is not (or no longer) the harness's: the
  // caller then has no way to interrupt, and must not send; or when no signal can be queued
  // (RLIMIT_SIGPENDING reached: EAGAIN).
  bool Interrupt() const;
  // Whether a signal sent is still pending on this thread (its /proc status), for a thread that
  // could not register; Unknown where /proc cannot tell.
  enum class Pending { Yes, No, Unknown };
  Pending SignalPending() const;

 private:
  pid_t tid_;
  int slot_ = -1;
};

}  // namespace th
