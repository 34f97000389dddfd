#include "launch-queue.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace th {
namespace {

struct LaunchQueue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::pair<void (*)(void *), void *>> jobs;
  int threads = 0;  // started so far
  int idle = 0;     // of them, waiting for a job

  void Run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      idle++;
      ready.wait(lock, [this] { return !jobs.empty(); });
      idle--;
      auto job = jobs.front();
      jobs.pop_front();
      lock.unlock();
      job.first(job.second);
      lock.lock();
    }
  }
};

LaunchQueue &Queue() {
  static LaunchQueue *queue = new LaunchQueue();  // never destroyed: its threads outlive static teardown
  return *queue;
}

// As many threads as CPUs, at least 2: one launch stuck on a slow exec (a binary on a hung mount)
// does not hold up the others, and more than one per CPU would only queue in the kernel.
int MaxThreads() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(std::min(8L, std::max(2L, cpus)));
}

}  // namespace

bool QueueLaunch(void (*work)(void *), void *arg) {
  LaunchQueue &q = Queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  // A thread is added when none is free to take this job, up to the limit.
  if (q.idle <= static_cast<int>(q.jobs.size()) && q.threads < MaxThreads()) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // the launch threads take no signals
    try {
      std::thread([&q] { q.Run(); }).detach();
      q.threads++;
    } catch (const std::system_error &) {
      // No new thread: the existing ones take the job, or, with none, the caller launches.
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (q.threads == 0) return false;
  }
  q.jobs.emplace_back(work, arg);
  q.ready.notify_one();
  return true;
}

}  // namespace th
