// When did the child exit? The async waiter learns of an exit when the event loop gets round to
// the pidfd, which may be long after it became readable if JavaScript held the loop. The exit
// clock is one process-wide thread blocked in epoll_wait on every watched pidfd: it stamps the
// moment each one became readable, so durationMs is the child's lifetime, not the loop's delay.
#pragma once

#include <stdint.h>

namespace th {

// The clock thread's name, as /proc/<pid>/task/<tid>/comm shows it (at most 15 characters).
constexpr const char *kExitClockThreadName = "tileharness-clk";

// Starts the clock's thread and its epoll fd, once per process: at the addon's load, so that the
// fd is there from the start rather than appearing at the first async spawn.
void StartExitClock();

// Starts stamping pidfd's readiness. The key for ExitStamp, or 0 when it cannot be watched (the
// thread or epoll could not be had): the caller then uses its own clock.
uint64_t WatchExit(int pidfd);

// The NowNs() time at which the key's pidfd became readable, or 0 when not stamped yet; forgets
// the key either way (the epoll registration goes with the pidfd when it is closed). key 0: 0.
double TakeExitStamp(uint64_t key);

}  // namespace th
