#include "alarm.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <mutex>

namespace th {

namespace {

constexpr int kMaxSlots = 256;  // concurrent timed waits (one per waiting thread)
std::atomic<AlarmSlot *> g_slots[kMaxSlots];

// The handler that was in place before ours, for alarms that are not ours. Two copies so the
// handler never reads one that is being rewritten.
struct sigaction g_previous[2];
std::atomic<int> g_previousIndex{0};

std::mutex g_installMutex;
int g_activeTimers = 0;  // guarded by g_installMutex

void ChainToPrevious(int sig, siginfo_t *info, void *context) {
  const struct sigaction &prev = g_previous[g_previousIndex.load(std::memory_order_acquire)];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler == SIG_IGN) return;
  if (prev.sa_handler == SIG_DFL) {
    // SIGALRM's default action ends the process: restore it and let the pending signal do so
    // once this handler returns and the signal is unblocked.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGALRM, &dfl, nullptr);
    raise(SIGALRM);
    return;
  }
  prev.sa_handler(sig);
}

void OnAlarm(int sig, siginfo_t *info, void *context) {
  int savedErrno = errno;
  if (info && info->si_code == SI_TIMER) {
    void *target = info->si_value.sival_ptr;
    for (int i = 0; target && i < kMaxSlots; i++) {
      if (g_slots[i].load(std::memory_order_acquire) == target) {
        AlarmSlot *slot = static_cast<AlarmSlot *>(target);
        slot->expiries = slot->expiries + 1;
        int next = slot->nextSignal;
        if (next) SignalChild(*slot, next);
        errno = savedErrno;
        return;
      }
    }
  }
  ChainToPrevious(sig, info, context);
  errno = savedErrno;
}

bool IsOurs(const struct sigaction &sa) {
  return (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == OnAlarm;
}

// Installs OnAlarm unless it is already the handler. Called with g_installMutex held, whenever a
// timer is created: if someone replaced our handler since (Node does, on process.on('SIGALRM')),
// theirs becomes the one we chain to.
void EnsureInstalled() {
  struct sigaction current;
  sigaction(SIGALRM, nullptr, &current);
  if (IsOurs(current)) return;
  int spare = 1 - g_previousIndex.load(std::memory_order_relaxed);
  g_previous[spare] = current;
  g_previousIndex.store(spare, std::memory_order_release);
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = OnAlarm;
  ours.sa_flags = SA_SIGINFO;  // no SA_RESTART: the waiting call must return EINTR
  sigemptyset(&ours.sa_mask);
  sigaction(SIGALRM, &ours, nullptr);
}

// Puts back the previous handler when the last timed wait ends, unless someone else has replaced
// ours meanwhile (then theirs stays).
void RestoreIfLast() {
  if (--g_activeTimers > 0) return;
  struct sigaction current;
  sigaction(SIGALRM, nullptr, &current);
  if (IsOurs(current)) sigaction(SIGALRM, &g_previous[g_previousIndex.load()], nullptr);
}

}  // namespace

void SignalChild(const AlarmSlot &slot, int sig) {
  if (slot.group) {
    kill(-slot.pid, sig);
  } else if (slot.pidfd >= 0) {
    // Through the pidfd: even if the child were already reaped, this can't reach a reused pid.
    syscall(SYS_pidfd_send_signal, slot.pidfd, sig, nullptr, 0);
  } else {
    kill(slot.pid, sig);
  }
}

AlarmTimer::AlarmTimer(AlarmSlot *slot) : slot_(slot) {
  for (int i = 0; i < kMaxSlots && !registered_; i++) {
    AlarmSlot *expected = nullptr;
    if (g_slots[i].compare_exchange_strong(expected, slot)) registered_ = true;
  }
  if (!registered_) {
    err_ = EAGAIN;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(g_installMutex);
    g_activeTimers++;
    EnsureInstalled();
  }
  // SIGALRM must reach this thread while it waits, whatever mask the thread had.
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alrm, &savedMask_);

  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGALRM;
  sev.sigev_value.sival_ptr = slot;
  sev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer_) < 0) {
    err_ = errno;
    return;
  }
  ok_ = true;
}

AlarmTimer::~AlarmTimer() {
  if (ok_) timer_delete(timer_);
  if (!registered_) return;
  // A pending expiry for this thread was delivered when timer_delete returned, so the slot can go.
  for (int i = 0; i < kMaxSlots; i++) {
    AlarmSlot *expected = slot_;
    if (g_slots[i].compare_exchange_strong(expected, nullptr)) break;
  }
  pthread_sigmask(SIG_SETMASK, &savedMask_, nullptr);
  std::lock_guard<std::mutex> lock(g_installMutex);
  RestoreIfLast();
}

bool AlarmTimer::Arm(double ms, int sig) {
  slot_->nextSignal = sig;
  if (ms < 0) ms = 0;
  double whole = std::floor(ms / 1000.0);
  struct itimerspec spec;
  memset(&spec, 0, sizeof spec);
  spec.it_value.tv_sec = static_cast<time_t>(whole);
  spec.it_value.tv_nsec = static_cast<long>((ms - whole * 1000.0) * 1e6);
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;  // 0 disarms
  return timer_settime(timer_, 0, &spec, nullptr) == 0;
}

void AlarmTimer::Disarm() {
  if (!ok_) return;
  struct itimerspec zero;
  memset(&zero, 0, sizeof zero);
  timer_settime(timer_, 0, &zero, nullptr);
}

}  // namespace th
