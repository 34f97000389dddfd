// Launches off the event loop. A launch on the loop's own thread holds the loop until the child
// has exec'd (the fork path's CLONE_VFORK, posix_spawn's the same): ~90 µs on an idle machine,
// several times that when the CPUs are busy with other children, and the loop runs no timer,
// reads no pipe and reaps no child meanwhile. With other children in flight, async.cc hands the
// launch to the process's launcher threads instead, and the loop goes on while the child starts.
#pragma once

#include <stdint.h>

#include "launcher.h"

namespace th {

// The launcher thread's name, as /proc/<pid>/task/<tid>/comm shows it (at most 15 characters).
constexpr const char *kLauncherThreadName = "tileharness-lch";

// One launch for the launcher thread. Its spec is read there, and must not change or go until the
// job is back; the rest is the launcher thread's until done(job) is called, on that thread.
struct LaunchJob {
  const LaunchSpec *spec = nullptr;
  Launched result;
  uint64_t exitKey = 0;  // the exit clock's key for result.pidfd (exit-clock.h), 0: none
  void (*done)(LaunchJob *job) = nullptr;
  void *context = nullptr;
};

// Queues the job for a launcher thread. The threads, one per CPU up to 4, are started on first
// use and never stopped: the children a thread launched have it as the parent their death signal
// watches. False when no thread can be had: the caller launches itself.
bool LaunchOffLoop(LaunchJob *job);

// The process is exiting (an atexit handler): no queued launch starts from now on, and those under
// way are waited for, at most waitMs, so that the children they make are there to be killed.
void HoldLaunchesForExit(double waitMs);

}  // namespace th
