#include "interrupt.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace th {

namespace {

// The value the harness's signals carry (si_value), with SI_QUEUE and this process's pid.
constexpr int kValue = 0x74685f69;

// The registered threads, by kernel thread id: the handler finds the thread it runs on here (no
// thread_local: a dlopen'ed library's TLS may be allocated on first use, and not in a handler).
struct Slot {
  std::atomic<pid_t> tid{0};
  std::atomic<unsigned> taken{0};
};
constexpr int kSlots = 128;
Slot slots[kSlots];

// What was installed before ours, kept for the signals that are not the harness's. Written before
// our handler is installed, read only by it afterwards.
struct sigaction previous;
std::mutex installMutex;
enum class Install { NotYet, Done, Failed };
Install installState = Install::NotYet;

bool Ours(const siginfo_t *info) {
  return info != nullptr && info->si_code == SI_QUEUE && info->si_pid == getpid() && info->si_value.sival_int == kValue;
}

// A signal that is not the harness's, handled as it would have been without us.
void Forward(int sig, siginfo_t *info, void *context) {
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler == SIG_DFL) {
    // A real-time signal's default ends the process. The signal is blocked while this handler
    // runs, so sent again now it is delivered as the handler returns, to the default.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(sig, &fallback, nullptr);
    raise(sig);
    return;
  }
  previous.sa_handler(sig);
}

// Async-signal-safe: atomics, getpid, gettid, and for other signals whatever the handler before
// ours does.
void OnSignal(int sig, siginfo_t *info, void *context) {
  int savedErrno = errno;
  if (Ours(info)) {
    // Counted for the thread it was sent to, if that one is still registered; a late one (the
    // call had returned and the thread let go of its slot) interrupts nothing and is dropped.
    pid_t self = gettid();
    for (Slot &slot : slots) {
      if (slot.tid.load(std::memory_order_acquire) == self) {
        slot.taken.fetch_add(1, std::memory_order_release);
        break;
      }
    }
  } else {
    Forward(sig, info, context);
  }
  errno = savedErrno;
}

bool IsOurs(const struct sigaction &action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == OnSignal;
}

// Installs the handler the first time a signal is to be sent; true while it is the one installed.
bool Ready() {
  int sig = InterruptSignal();
  std::lock_guard<std::mutex> lock(installMutex);
  if (installState == Install::NotYet) {
    installState = Install::Failed;
    struct sigaction before;
    if (sigaction(sig, nullptr, &before) == 0) {
      previous = before;
      struct sigaction ours;
      memset(&ours, 0, sizeof ours);
      ours.sa_sigaction = OnSignal;
      ours.sa_flags = SA_SIGINFO | SA_ONSTACK;  // no SA_RESTART: interrupting is the point
      sigemptyset(&ours.sa_mask);
      struct sigaction replaced;
      if (sigaction(sig, &ours, &replaced) == 0) {
        // Changed between the two calls by another thread: chain to what was really there.
        if (!IsOurs(replaced)) previous = replaced;
        installState = Install::Done;
      }
    }
  }
  if (installState != Install::Done) return false;
  // Someone may have installed a handler of their own over ours since: then a signal sent would
  // be theirs to handle, not an interrupt.
  struct sigaction now;
  return sigaction(sig, nullptr, &now) == 0 && IsOurs(now);
}

}  // namespace

int InterruptSignal() { return SIGRTMAX - 1; }

InterruptibleThread::InterruptibleThread() : thread_(pthread_self()) {
  pid_t self = gettid();
  for (int i = 0; i < kSlots; i++) {
    pid_t free = 0;
    if (slots[i].tid.compare_exchange_strong(free, self, std::memory_order_acq_rel)) {
      // No signal is sent to this thread before its constructor has returned.
      slots[i].taken.store(0, std::memory_order_release);
      slot_ = i;
      break;
    }
  }
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, InterruptSignal());
  pthread_sigmask(SIG_UNBLOCK, &interrupt, nullptr);
}

InterruptibleThread::~InterruptibleThread() {
  if (slot_ >= 0) slots[slot_].tid.store(0, std::memory_order_release);
}

unsigned InterruptibleThread::Taken() const {
  return slot_ >= 0 ? slots[slot_].taken.load(std::memory_order_acquire) : 0;
}

bool InterruptibleThread::Interrupt() const {
  if (!Ready()) return false;
  union sigval value;
  value.sival_int = kValue;
  return pthread_sigqueue(thread_, InterruptSignal(), value) == 0;
}

}  // namespace th
