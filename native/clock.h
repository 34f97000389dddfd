// The one clock of the native code (CLOCK_MONOTONIC, in nanoseconds as a double, which is exact
// for centuries of uptime) and the one way to wait for an fd until a time on it.
#pragma once

#include <errno.h>
#include <poll.h>
#include <time.h>

#include <cmath>

namespace th {

inline double NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// poll's timeout until deadlineNs: whole milliseconds rounded up (never early), 0 once it has
// passed, -1 for no deadline (0), at most about 24 days.
inline int PollTimeoutUntil(double deadlineNs) {
  if (deadlineNs <= 0) return -1;
  double left = (deadlineNs - NowNs()) / 1e6;
  if (left <= 0) return 0;
  return left > 2e9 ? 2000000000 : static_cast<int>(std::ceil(left));
}

// poll(2) on a set of fds. The kernel refuses a set of more fds than RLIMIT_NOFILE (EINVAL), a
// limit another thread or process (prlimit) can lower below a waiter's handful of fds while it
// waits; the same answer is then pieced together from one-fd polls: every fd looked at without
// waiting, then the first one waited on for at most kSetSliceMs, so that nothing ready waits
// longer than a slice to be seen. -1 (errno) where even a one-fd poll fails (RLIMIT_NOFILE 0), or
// on EINTR as poll itself.
constexpr int kSetSliceMs = 10;
inline int PollSet(struct pollfd *fds, nfds_t n, int timeoutMs) {
  int rc = poll(fds, n, timeoutMs);
  if (rc >= 0 || errno != EINVAL || n <= 1) return rc;
  double until = timeoutMs > 0 ? NowNs() + timeoutMs * 1e6 : 0;
  for (;;) {
    int ready = 0;
    for (nfds_t i = 0; i < n; i++) {
      int one = poll(&fds[i], 1, 0);
      if (one < 0) return -1;
      ready += one;
    }
    if (ready > 0 || timeoutMs == 0) return ready;
    int slice = kSetSliceMs;
    if (timeoutMs > 0) {
      int left = PollTimeoutUntil(until);
      if (left == 0) return 0;
      if (left < slice) slice = left;
    }
    if (poll(&fds[0], 1, slice) < 0) return -1;
  }
}

// Waits until fd is readable or deadlineNs (0: none) comes. 1: readable; 0: the deadline came;
// -1: poll failed (errno).
inline int PollReadableUntil(int fd, double deadlineNs) {
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    int rc = poll(&p, 1, PollTimeoutUntil(deadlineNs));
    if (rc > 0) return 1;
    if (rc == 0) {
      if (deadlineNs > 0 && NowNs() >= deadlineNs) return 0;
      continue;  // rounded down by the kernel's clock: not yet
    }
    if (errno != EINTR) return -1;
  }
}

}  // namespace th
