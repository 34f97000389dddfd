// The exit clock (exit-clock.h). Registrations are one-shot and keyed by a number never reused,
// so an event for a pidfd whose child is already done (or whose fd was handed to the reaper)
// finds no key and is dropped: nothing here ever points into a child's memory.
#include "exit-clock.h"

#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <mutex>
#include <thread>
#include <unordered_map>

#include "clock.h"

namespace th {
namespace {

struct ExitClock {
  std::mutex mutex;
  std::unordered_map<uint64_t, double> stamps;  // key -> stamp (0: not yet)
  uint64_t nextKey = 0;
  int epoll = -1;

  void Run() {
    struct epoll_event events[64];
    for (;;) {
      int n = epoll_wait(epoll, events, 64, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      double now = NowNs();
      std::lock_guard<std::mutex> lock(mutex);
      for (int i = 0; i < n; i++) {
        auto it = stamps.find(events[i].data.u64);
        if (it != stamps.end() && it->second == 0) it->second = now;
      }
    }
  }
};

// Started once (StartExitClock, at the addon's load), never stopped: a thread blocked in epoll_wait costs nothing, and
// the process may exit at any moment without joining it.
ExitClock *Clock() {
  static ExitClock *clock = [] {
    ExitClock *c = new ExitClock();
    c->epoll = epoll_create1(EPOLL_CLOEXEC);
    if (c->epoll < 0) return c;
    try {
      std::thread thread([c] { c->Run(); });
      // Named by its creator, so the name is there as soon as the thread is: named by itself, a
      // thread not yet scheduled (a loaded machine) showed its creator's name to ps -L and /proc.
      pthread_setname_np(thread.native_handle(), kExitClockThreadName);
      thread.detach();
    } catch (...) {
      close(c->epoll);
      c->epoll = -1;
    }
    return c;
  }();
  return clock;
}

}  // namespace

void StartExitClock() { Clock(); }

uint64_t WatchExit(int pidfd) {
  ExitClock *clock = Clock();
  if (clock->epoll < 0 || pidfd < 0) return 0;
  uint64_t key;
  {
    std::lock_guard<std::mutex> lock(clock->mutex);
    key = ++clock->nextKey;
    clock->stamps.emplace(key, 0);
  }
  struct epoll_event event = {};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.u64 = key;
  if (epoll_ctl(clock->epoll, EPOLL_CTL_ADD, pidfd, &event) != 0) {
    std::lock_guard<std::mutex> lock(clock->mutex);
    clock->stamps.erase(key);
    return 0;
  }
  return key;
}

double TakeExitStamp(uint64_t key) {
  if (key == 0) return 0;
  ExitClock *clock = Clock();
  std::lock_guard<std::mutex> lock(clock->mutex);
  auto it = clock->stamps.find(key);
  if (it == clock->stamps.end()) return 0;
  double stamp = it->second;
  clock->stamps.erase(it);
  return stamp;
}

}  // namespace th
