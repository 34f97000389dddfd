// The launcher thread (launch-thread.h). It lives for the rest of the process once started: a
// fork-path child's PR_SET_PDEATHSIG fires when the thread that created it ends, not the process,
// so a thread that stopped would kill its children. Its state is never destroyed, since the
// process may exit at any moment while it launches.
#include "launch-thread.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "clock.h"
#include "exit-clock.h"

namespace th {
namespace {

// sched_getattr's structure (SCHED_ATTR_SIZE_VER1): glibc 2.36 has no wrapper.
struct SchedAttr {
  uint32_t size;
  uint32_t policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
  uint32_t utilMin, utilMax;
};

// How many launches holding copies of fds may wait for a thread, per thread. Others hold nothing
// while they wait (the pipes are made by the launch), and wait however many there are.
constexpr size_t kHoldingFdsPerThread = 4;

struct Launcher {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<LaunchJob *> queue;
  bool running = false;
  // The threads' traits as they were made: the creating thread's, which they inherit.
  ThreadTraits traits;
  size_t threads = 0;
  size_t holdingFds = 0;  // queued jobs with copies of fds to close (LaunchJob::closeAfter)
  bool exiting = false;  // HoldLaunchesForExit: nothing more is launched
  int inProgress = 0;
  std::condition_variable idle;

  void Run() {
    for (;;) {
      LaunchJob *job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return !exiting && !queue.empty(); });
        job = queue.front();
        queue.pop_front();
        if (!job->closeAfter->empty()) holdingFds--;
        inProgress++;
      }
      if (CurrentThreadTraits() == job->caller) {
        job->startNs = NowNs();
        job->result = Launch(*job->spec);
        job->endNs = NowNs();
        if (job->pinnedCwd && job->result.stage == Stage::Chdir) {
          // Fork path: the child failed at the pinned cwd and has been reaped; posix_spawn path:
          // no child. Either way nothing runs, and the fds the loop's launch needs are kept.
          job->retryHere = true;
          job->done(job);
          std::lock_guard<std::mutex> lock(mutex);
          if (--inProgress == 0) idle.notify_all();
          continue;
        }
        for (int &fd : *job->closeAfter) CloseFd(fd);
        job->closeAfter->clear();
        // Stamped from here, not once the loop has taken the child: it may exit before then.
        if (job->result.stage == Stage::None && !job->spec->measure) job->exitKey = WatchExit(job->result.pidfd);
      } else {
        job->declined = true;
      }
      job->done(job);
      std::lock_guard<std::mutex> lock(mutex);
      if (--inProgress == 0) idle.notify_all();
    }
  }
};

// As many launcher threads as this process may use CPUs, up to 4. A launch is mostly a wait: the
// launcher thread is suspended until its child has exec'd (CLONE_VFORK), and with one thread the
// children start one after another however many CPUs are idle meanwhile.
unsigned LauncherCount() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  return static_cast<unsigned>(std::min(std::max(n, 1), 4));
}

Launcher *TheLauncher() {
  static Launcher *launcher = new Launcher();
  return launcher;
}

}  // namespace

size_t LaunchConcurrency() {
  static const size_t count = LauncherCount();
  return count;
}

bool ThreadTraits::operator==(const ThreadTraits &o) const {
  return read && o.read && policy == o.policy && schedFlags == o.schedFlags && nice == o.nice && priority == o.priority &&
         CPU_EQUAL(&cpus, &o.cpus) && ioPriority == o.ioPriority;
}

// Three system calls, ~0.6 µs in all.
ThreadTraits CurrentThreadTraits() {
  ThreadTraits t;
  CPU_ZERO(&t.cpus);
  SchedAttr attr{};
  bool ok = syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0;
  t.policy = attr.policy;
  t.schedFlags = attr.flags;
  t.nice = attr.nice;
  t.priority = attr.priority;
  ok = ok && sched_getaffinity(0, sizeof t.cpus, &t.cpus) == 0;
  t.ioPriority = static_cast<int>(syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0));
  t.read = ok && t.ioPriority >= 0;
  return t;
}

bool LaunchersLike(const ThreadTraits &caller) {
  Launcher *launcher = TheLauncher();
  std::lock_guard<std::mutex> lock(launcher->mutex);
  return !launcher->running || caller == launcher->traits;
}

void HoldLaunchesForExit(double waitMs) {
  Launcher *launcher = TheLauncher();
  std::unique_lock<std::mutex> lock(launcher->mutex);
  launcher->exiting = true;
  launcher->idle.wait_for(lock, std::chrono::duration<double, std::milli>(waitMs),
                          [launcher] { return launcher->inProgress == 0; });
}

bool LaunchOffLoop(LaunchJob *job) {
  Launcher *launcher = TheLauncher();
  std::lock_guard<std::mutex> lock(launcher->mutex);
  if (launcher->exiting) return false;
  if (!launcher->running) {
    launcher->traits = job->caller;
    // Every signal blocked on the thread from its start: a process-directed signal is never
    // handled there, and Launch sets each child's own mask.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (size_t i = 0; i < LaunchConcurrency(); i++) {
      try {
        std::thread thread([launcher] { launcher->Run(); });
        pthread_setname_np(thread.native_handle(), kLauncherThreadName);  // by its creator (exit-clock.cc)
        thread.detach();
        launcher->running = true;
        launcher->threads++;
      } catch (...) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!launcher->running) return false;
  }
  bool holds = !job->closeAfter->empty();
  if (holds && launcher->holdingFds >= kHoldingFdsPerThread * launcher->threads) return false;
  try {
    launcher->queue.push_back(job);
  } catch (...) {
    return false;
  }
  if (holds) launcher->holdingFds++;
  launcher->wake.notify_one();
  return true;
}

}  // namespace th
