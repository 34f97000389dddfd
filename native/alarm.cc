#include "alarm.h"

#include "clock.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>

namespace th {

AlarmTimer::AlarmTimer() {
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alrm, &savedMask_);
  maskSaved_ = true;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGALRM;
  sev.sigev_value.sival_ptr = this;
  sev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer_) < 0) {
    // EAGAIN: no signal could be queued for this process (RLIMIT_SIGPENDING, here 0, or the
    // kernel's memory). The deadline is then poll's timeout alone (the second guard below):
    // the same deadline, kept without a signal, rather than a spawn refused for it.
    pollable_ = false;
    return;
  }
  haveTimer_ = true;
}

AlarmTimer::~AlarmTimer() {
  if (haveTimer_) {
    timer_delete(timer_);
    // An expiry that fired but was never read is still pending on this thread: take it, or it
    // would be delivered to whatever SIGALRM disposition is in place once the mask is restored
    // (with no listener, the default kills the process). Every one of ours is taken, not only
    // those counted: one that fired between a check of Fired() and the timer_delete would be
    // missed, and kernels before 6.13 deliver it after the timer is gone (later ones drop it).
    while (ReadOne() == Read::Ours) {
    }
  }
  if (sigfd_ >= 0) close(sigfd_);
  if (maskSaved_) pthread_sigmask(SIG_SETMASK, &savedMask_, nullptr);
}

int AlarmTimer::fd() {
  if (!pollable_) return -1;
  if (sigfd_ < 0) {
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigfd_ = signalfd(-1, &alrm, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd_ < 0) {
      pollable_ = false;
      return -1;
    }
  }
  return sigfd_;
}

bool AlarmTimer::Arm(double ms) {
  // A previous expiry that fired and was not taken stays pending until read (the destructor
  // takes every one of ours).
  if (ms < 0) ms = 0;
  double whole = std::floor(ms / 1000.0);
  struct itimerspec spec;
  memset(&spec, 0, sizeof spec);
  spec.it_value.tv_sec = static_cast<time_t>(whole);
  spec.it_value.tv_nsec = static_cast<long>((ms - whole * 1000.0) * 1e6);
  if (spec.it_value.tv_nsec > 999999999) spec.it_value.tv_nsec = 999999999;
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;  // 0 disarms
  if (haveTimer_ && timer_settime(timer_, 0, &spec, nullptr) < 0) return false;
  // Taken after arming, so the timer's expiry is never later than this.
  deadlineNs_ = NowNs() + ms * 1e6;
  armed_ = true;
  return true;
}

int AlarmTimer::PollTimeoutMs() const {
  // Up to a millisecond past the deadline: the signal normally comes first; this only decides
  // when it cannot (SIGALRM's disposition set to SIG_IGN flushes it, or the signalfd set aside).
  return armed_ ? PollTimeoutUntil(deadlineNs_) : -1;
}

bool AlarmTimer::Fired() const {
  struct itimerspec left;
  if (!haveTimer_ || timer_gettime(timer_, &left) < 0) return NowNs() >= deadlineNs_;
  // A one-shot timer is disarmed by its expiry, which is also when its signal is queued.
  return left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0;
}

// Reads one pending SIGALRM. This thread's own pending signals are dequeued before the process's,
// so while an expiry of ours is pending, that is what is read.
AlarmTimer::Read AlarmTimer::ReadOne() {
  if (!haveTimer_) return Read::Nothing;  // no alarm of ours can be pending
  if (sigfd_ < 0) {
    // Never polled (or none could be opened): take a pending alarm of this thread directly.
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    siginfo_t si;
    struct timespec zero = {0, 0};
    if (sigtimedwait(&alrm, &si, &zero) != SIGALRM) return Read::Nothing;
    if (si.si_code == SI_TIMER && si.si_value.sival_ptr == this) return Read::Ours;
    kill(getpid(), SIGALRM);
    pollable_ = false;
    return Read::Foreign;
  }
  struct signalfd_siginfo info;
  ssize_t n;
  do {
    n = read(sigfd_, &info, sizeof info);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof info)) return Read::Nothing;
  if (info.ssi_code == SI_TIMER && info.ssi_ptr == reinterpret_cast<uint64_t>(this)) return Read::Ours;
  // Someone else's alarm (kill -ALRM, alarm(2)) that the kernel let us read: send it on to the
  // process, where a thread that does not block SIGALRM takes it, and poll the signalfd no more in
  // this wait, so the same alarm cannot come back to us in a loop.
  kill(getpid(), SIGALRM);
  pollable_ = false;
  return Read::Foreign;
}

bool AlarmTimer::TakeExpiry() {
  if (!armed_) return false;
  if (Fired()) {
    armed_ = false;
    ReadOne();  // not ours when flushed by SIG_IGN, or a foreign one came first: left for the destructor
    return true;
  }
  if (NowNs() >= deadlineNs_) {  // the second guard (timer_gettime failing)
    armed_ = false;
    return true;
  }
  // Readable before our expiry: a process-directed SIGALRM is pending where we can see it. It is
  // not ours to take; stop polling the signalfd, the timeout guards the deadline.
  pollable_ = false;
  return false;
}

}  // namespace th
