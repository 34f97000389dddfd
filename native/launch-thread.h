// Launches off the event loop. A launch on the loop's own thread holds the loop until the child
// has exec'd (the fork path's CLONE_VFORK, posix_spawn's the same): ~90 µs on an idle machine,
// several times that when the CPUs are busy with other children, and the loop runs no timer,
// reads no pipe and reaps no child meanwhile. With other children in flight, async.cc hands the
// launch to the process's launcher threads instead, and the loop goes on while the child starts.
#pragma once

#include <sched.h>
#include <stdint.h>

#include <vector>

#include "launcher.h"

namespace th {

// The launcher thread's name, as /proc/<pid>/task/<tid>/comm shows it (at most 15 characters).
constexpr const char *kLauncherThreadName = "tileharness-lch";

// What a child inherits from the thread that creates it rather than from the process, and what
// is changed for one thread alone by the usual means: its nice value (os.setPriority(0, n), and
// renice -p, change the calling thread's or the main thread's only), scheduling policy and
// priority (chrt -p), CPUs (taskset -p) and I/O priority (ionice -p). A launcher thread launches
// only for a caller whose traits are its own; otherwise the launch is made on the caller's thread
// after all. (Capabilities, no_new_privs and a seccomp filter are per thread too, but set on one
// thread alone only by native code; they are not compared, at 1-2 µs a system call each.)
struct ThreadTraits {
  uint32_t policy = 0;
  uint64_t schedFlags = 0;
  int32_t nice = 0;
  uint32_t priority = 0;
  cpu_set_t cpus;
  int ioPriority = 0;
  bool read = false;  // every one of them could be read

  bool operator==(const ThreadTraits &other) const;
};

// The calling thread's traits.
ThreadTraits CurrentThreadTraits();

// One launch for a launcher thread. Its spec is read there, and must not change or go until the
// job is back; the rest is the launcher thread's until done(job) is called, on that thread.
struct LaunchJob {
  const LaunchSpec *spec = nullptr;
  ThreadTraits caller;  // the caller's thread's, at the call
  // Copies of the caller's fds the spec names, closed by the launcher thread once the child has
  // its own (they count against the fd limit only while a launch waits or runs).
  std::vector<int> *closeAfter = nullptr;
  Launched result;
  bool declined = false;  // the launcher thread's traits are not the caller's: nothing was done
  // The spec's cwd is the caller's working directory, given by the caller's thread (no cwd was
  // asked for): a launch that failed at it is handed back as not done (retryHere), for the loop
  // to make without it, as it would have been made there.
  bool pinnedCwd = false;
  bool retryHere = false;
  double startNs = 0, endNs = 0;  // NowNs() just before and after the launch
  uint64_t exitKey = 0;  // the exit clock's key for result.pidfd (exit-clock.h), 0: none
  void (*done)(LaunchJob *job) = nullptr;
  void *context = nullptr;
};

// Queues the job for a launcher thread. The threads, one per CPU up to 4, are started on first
// use and never stopped: the children a thread launched have it as the parent their death signal
// watches; the caller has asked LaunchersLike first. False when no thread can be had, or when
// the job holds copies of fds and 4 per thread such already wait (a queue
// of them would take the fd table a launch on the loop fits in): the caller launches itself.
bool LaunchOffLoop(LaunchJob *job);

// How many launcher threads there are (or will be): one per CPU this process may use, up to 4.
size_t LaunchConcurrency();

// Whether the launcher threads have these traits (or are not made yet, and would): a launch whose
// caller's do not is made by the caller, at once.
bool LaunchersLike(const ThreadTraits &caller);

// The process is exiting (an atexit handler): no queued launch starts from now on, and those under
// way are waited for, at most waitMs, so that the children they make are there to be killed.
void HoldLaunchesForExit(double waitMs);

}  // namespace th
