/* floor: the cost of starting and reaping a program with nothing in the way, the floor the
 * performance suite (scripts/bench/run.mjs) measures tileharness against. The suite compiles it
 * with cc at run time.
 *
 *   floor [-s | -a] [-j K] N FILE [ARGS...]
 *
 * Runs FILE N times, one after the other, with posix_spawnp + wait4 (glibc's posix_spawn is
 * clone(CLONE_VM|CLONE_VFORK), the same primitive tileharness uses), stdin, stdout and stderr on
 * /dev/null as tileharness's and child_process's 'ignore' put them. It is started from the
 * benchmark's Node process but runs its loop in its own small image, whatever that parent's RSS.
 *
 * -s replays the system calls of tileharness's posix_spawn path (native/launcher.cc and the sync
 * waiter) instead: every signal reset to SIG_DFL and the mask cleared in the child, fds from 3 up
 * closed, then pidfd_open, poll on the pidfd, wait4, close. The suite reports it beside the plain
 * floor, so that a gap between tileharness and the floor can be told apart: the cost of the
 * harness's system calls, or the cost of making them from inside Node.
 *
 * -a replays the async waiter's instead (native/async.cc): the same launch, then the pidfd added
 * to two epoll sets (the event loop's and the exit clock's), epoll_wait on the first, wait4,
 * close: what the async API asks of the kernel, with nothing done between the launch and the wait.
 *
 * -j K keeps K children running at once instead (a new one started as soon as any is reaped, by
 * wait4 on any child): the throughput floor, the most starts per second the machine gives with K
 * in flight. Its per-run figures are then each child's start to its reaping.
 *
 * Prints one JSON line: {"n":N,"totalNs":..,"medianNs":..,"minNs":..,"failures":..}, where a
 * failure is a spawn error or a run that did not exit 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int async = argc > 1 && strcmp(argv[1], "-a") == 0;
  int harness = async || (argc > 1 && strcmp(argv[1], "-s") == 0);
  argv += harness;
  argc -= harness;
  long inFlight = 1;
  if (argc > 2 && strcmp(argv[1], "-j") == 0) {
    inFlight = atol(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc < 3 || atol(argv[1]) <= 0 || inFlight <= 0) {
    fprintf(stderr, "usage: floor [-s | -a] [-j K] N FILE [ARGS...]\n");
    return 2;
  }
  long n = atol(argv[1]);
  long long *each = malloc(sizeof *each * n);
  if (!each) return 2;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (harness) {
    sigset_t all, none;
    sigfillset(&all);
    /* glibc's two internal signals too, as launcher.cc does (sigaddset refuses them) */
    all.__val[0] |= (1UL << 31) | (1UL << 32);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  }
  int loop = async ? epoll_create1(EPOLL_CLOEXEC) : -1, clock = async ? epoll_create1(EPOLL_CLOEXEC) : -1;
  if (async && (loop < 0 || clock < 0)) return 2;
  long failures = 0;
  long long start = now_ns();
  if (inFlight > 1) {
    /* Slot k runs one child at a time: pids[k], started at began[k]. */
    pid_t *pids = calloc(inFlight, sizeof *pids);
    long long *began = calloc(inFlight, sizeof *began);
    if (!pids || !began) return 2;
    long started = 0, done = 0, running = 0;
    while (done < n) {
      while (running < inFlight && started < n) {
        long k = 0;
        while (pids[k] != 0) k++;
        began[k] = now_ns();
        if (posix_spawnp(&pids[k], argv[2], &actions, &attr, argv + 2, environ) != 0) {
          pids[k] = 0;
          failures++;
          each[done++] = 0;
        } else {
          running++;
        }
        started++;
      }
      if (running == 0) continue;
      int status;
      struct rusage usage;
      pid_t pid = wait4(-1, &status, 0, &usage);
      if (pid < 0) return 2;
      for (long k = 0; k < inFlight; k++) {
        if (pids[k] != pid) continue;
        pids[k] = 0;
        each[done++] = now_ns() - began[k];
        running--;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures++;
      }
    }
    n = done;
  }
  for (long i = 0; inFlight == 1 && i < n; i++) {
    long long t0 = now_ns();
    pid_t pid;
    int status;
    struct rusage usage; /* wait4 as tileharness calls it: the rusage is part of the cost */
    if (posix_spawnp(&pid, argv[2], &actions, &attr, argv + 2, environ) != 0) {
      failures++;
    } else {
      int pidfd = harness ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
      if (pidfd >= 0 && async) {
        struct epoll_event watch = {.events = EPOLLIN, .data.u64 = 1}, once = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 1}, ready;
        if (epoll_ctl(clock, EPOLL_CTL_ADD, pidfd, &once) != 0 || epoll_ctl(loop, EPOLL_CTL_ADD, pidfd, &watch) != 0) return 2;
        while (epoll_wait(loop, &ready, 1, -1) < 1) {}
      } else if (pidfd >= 0) {
        struct pollfd ready = {pidfd, POLLIN, 0};
        while (poll(&ready, 1, -1) < 0) {}
      }
      if (wait4(pid, &status, 0, &usage) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failures++;
      if (pidfd >= 0) close(pidfd);
    }
    each[i] = now_ns() - t0;
  }
  long long total = now_ns() - start;
  qsort(each, n, sizeof *each, by_value);
  long long median = n % 2 ? each[n / 2] : (each[n / 2 - 1] + each[n / 2]) / 2;
  printf("{\"n\":%ld,\"totalNs\":%lld,\"medianNs\":%lld,\"minNs\":%lld,\"failures\":%ld}\n", n, total, median, each[0], failures);
  return 0;
}
