#include "interrupt.h"

#include "launcher.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace th {

namespace {

// The registered threads, by kernel thread id: the handler finds the thread it runs on here (no
// thread_local: a dlopen'ed library's TLS may be allocated on first use, and not in a handler).
struct Slot {
  std::atomic<pid_t> tid{0};
  std::atomic<unsigned> taken{0};
};
constexpr int kSlots = 1024;
Slot slots[kSlots];

// What was installed before ours, kept for the signals that are not the harness's. Written before
// our handler is installed, read only by it afterwards.
struct sigaction previous;
std::mutex installMutex;
enum class Install { NotYet, Done, Failed };
Install installState = Install::NotYet;

// Sent by a thread of this process with tgkill: the kernel lets no other process send SI_TKILL
// with our pid (rt_sigqueueinfo and rt_tgsigqueueinfo refuse it), where SI_QUEUE's pid is the
// sender's to write.
bool FromThisProcess(const siginfo_t *info) {
  return info != nullptr && info->si_code == SI_TKILL && info->si_pid == getpid();
}

bool PreviousIsAHandler() {
  return (previous.sa_flags & SA_SIGINFO) != 0 || (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN);
}

// A signal that is not the harness's, handled as it would have been without us: by the handler
// before ours, with its mask and its one-shot flag, or by the disposition before it.
void Forward(int sig, siginfo_t *info, void *context) {
  if (PreviousIsAHandler()) {
    struct sigaction handler = previous;
    if (handler.sa_flags & SA_RESETHAND) {
      // Once only, then the default, as the kernel would have reset it.
      memset(&previous, 0, sizeof previous);
      previous.sa_handler = SIG_DFL;
      sigemptyset(&previous.sa_mask);
    }
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &handler.sa_mask, &old);
    if (handler.sa_flags & SA_SIGINFO) {
      handler.sa_sigaction(sig, info, context);
    } else {
      handler.sa_handler(sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  // The default: a real-time signal's ends the process. The signal is blocked while this handler
  // runs, so sent again now it is delivered as the handler returns, to the default.
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(sig, &fallback, nullptr);
  raise(sig);
}

// Async-signal-safe: atomics, getpid, gettid, sigaction, pthread_sigmask, raise, and for other
// signals whatever the handler before ours does.
void OnSignal(int sig, siginfo_t *info, void *context) {
  int savedErrno = errno;
  bool counted = false;
  if (FromThisProcess(info)) {
    // Counted for the thread it was sent to, if that one is registered.
    pid_t self = gettid();
    for (Slot &slot : slots) {
      if (slot.tid.load(std::memory_order_acquire) == self) {
        slot.taken.fetch_add(1, std::memory_order_release);
        counted = true;
        break;
      }
    }
  }
  // Every other signal goes on, but for one: a tgkill from within this process to a thread that
  // is not registered, with no earlier handler to take it. That is one of ours come late (its
  // thread has let go of its slot; ~InterruptibleThread makes that all but impossible), and going
  // on would mean the default, which ends the process. No one ends a process by tgkilling one of
  // its own threads with this signal.
  if (!counted && (!FromThisProcess(info) || PreviousIsAHandler())) Forward(sig, info, context);
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

InterruptibleThread::InterruptibleThread() : tid_(gettid()) {
  pid_t self = tid_;
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
  // A signal sent to this thread before its call had returned may still be pending (sent as the
  // call returned, and the thread has not been back from the kernel since): every system call
  // returns through the delivery of the thread's pending signals, so after this one, ours have
  // all been taken, counted, while the thread is still registered. None reaches a thread that
  // has let go of its slot, where it would be no one's (or the handler before ours').
  sched_yield();
  if (slot_ >= 0) slots[slot_].tid.store(0, std::memory_order_release);
}

unsigned InterruptibleThread::Taken() const {
  return slot_ >= 0 ? slots[slot_].taken.load(std::memory_order_acquire) : 0;
}

bool InterruptibleThread::Interrupt() const {
  if (!Ready()) return false;
  return syscall(SYS_tgkill, getpid(), tid_, InterruptSignal()) == 0;
}

InterruptibleThread::Pending InterruptibleThread::SignalPending() const {
  // The thread's own pending set, SigPnd in its status: a line of hex, bit n - 1 for signal n.
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", static_cast<int>(tid_));
  char text[4096];
  if (!ReadProcText(path, text, sizeof text)) return Pending::Unknown;
  const char *line = strstr(text, "\nSigPnd:");
  if (line == nullptr) return Pending::Unknown;
  unsigned long long mask = strtoull(line + 8, nullptr, 16);
  return (mask >> (InterruptSignal() - 1)) & 1 ? Pending::Yes : Pending::No;
}

}  // namespace th
