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
