/* floor: the cost of starting and reaping a program with nothing in the way, the floor the
 * performance suite (scripts/bench/run.mjs) measures tileharness against. The suite compiles it
 * with cc at run time.
 *
 *   floor [-s | -a | -A | -c] [-j K | -w W] N FILE [ARGS...]
 *
 * Runs FILE N times, one after the other, with posix_spawnp + wait4 (glibc's posix_spawn is
 * clone(CLONE_VM|CLONE_VFORK), the same primitive tileharness uses), stdin, stdout and stderr on
 * /dev/null as tileharness's and child_process's 'ignore' put them. It is started from the
 * benchmark's Node process but runs its loop in its own small image, whatever that parent's RSS.
 *
 * -w W runs FILE W times first, untimed, the same way (one at a time): a process's first spawns
 * are slower than its later ones, and what the suite compares the floor with runs in a Node
 * process that has spawned for a while. Measured on a 2-vCPU PVM guest (posix_spawn + waitpid of
 * /bin/true, six fresh processes, the median per stretch): spawns 0-4 3.1 ms, 5-19 2.7 ms, 20-49
 * 2.3 ms, 50-299 2.1-2.3 ms; a 300 ms busy loop before the first spawn changed nothing, so it is
 * the spawns that warm the process, not the time it has run.
 *
 * -s replays the system calls of tileharness's default launch and sync wait instead: the fork
 * path (floor-launch.h's floor_fork: native/launcher.cc's clone and the child's sequence, with its
 * death signal), then wait4, as the sync waiter blocks when it has no pipe and no deadline to
 * watch. The suite reports it beside the plain floor, so that a gap between tileharness and the
 * floor can be told apart: the cost of the harness's system calls, or the cost of making them
 * from inside Node.
 *
 * -a replays the async waiter's instead (native/async.cc): the same launch, its pidfd made by the
 * clone, then added to two epoll sets (the event loop's and the exit clock's), epoll_wait on the
 * first, wait4, close: what the async API asks of the kernel, with nothing done between the
 * launch and the wait.
 *
 * -A is -a with the exit clock's thread as well (native/exit-clock.cc): a second thread blocked in
 * epoll_wait on the clock's set, which wakes at each exit and stamps the time under a lock, and
 * the stamp taken under that lock once the child is reaped. -A against -a is what the second
 * waiter costs, apart from anything Node adds.
 *
 * -c captures instead: FILE's stdout is a pipe, and everything it writes is read into memory the
 * way the harness's Drain (native/waiter.cc) keeps it: a buffer doubled by realloc, the pipe grown
 * to 1 MiB once 1 MiB has come, the buffer backed 256 KiB ahead of the reads with
 * MADV_POPULATE_WRITE; then freed. Against the plain floor of `FILE | cat > /dev/null` it shows
 * what keeping the bytes costs the kernel (fresh pages, zeroed), apart from anything the addon or
 * Node adds. It runs one child at a time (no -j).
 *
 * -j K keeps K children running at once instead (a new one started as soon as any is reaped, by
 * wait4 on any child): the throughput floor, the most starts per second the machine gives with K
 * in flight. Its per-run figures are then each child's start to its reaping. With -a, each child
 * is waited for as the async waiter waits: its pidfd in both epoll sets, the next exit taken from
 * epoll_wait on the loop's, that child reaped by wait4 and its pidfd closed.
 *
 * Prints one JSON line: {"n":N,"totalNs":..,"medianNs":..,"minNs":..,"failures":..,"kept":..,"cpuNs":..},
 * where a failure is a spawn error or a run that did not exit 0, kept is the bytes the last run's
 * capture read (-c; -1 without it), and cpuNs is this program's own CPU per run, user and system,
 * every thread, from the first run to the last (its children's not included).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floor-launch.h"

extern char **environ;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* -A: the exit clock's thread and its stamps, one per key (the slot an event carries). */
static pthread_mutex_t stamp_lock = PTHREAD_MUTEX_INITIALIZER;
static long long *stamps;
static unsigned long long stamp_slots;

static void *clock_thread(void *arg) {
  int set = *(int *)arg;
  struct epoll_event events[64];
  for (;;) {
    int n = epoll_wait(set, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return NULL;
    }
    long long now = now_ns();
    pthread_mutex_lock(&stamp_lock);
    for (int i = 0; i < n; i++)
      if (events[i].data.u64 < stamp_slots && stamps[events[i].data.u64] == 0) stamps[events[i].data.u64] = now;
    pthread_mutex_unlock(&stamp_lock);
  }
}

/* The stamp for key, forgotten (as TakeExitStamp does); 0 without the clock. */
static long long take_stamp(unsigned long long key) {
  if (!stamps) return 0;
  pthread_mutex_lock(&stamp_lock);
  long long stamp = stamps[key];
  stamps[key] = 0;
  pthread_mutex_unlock(&stamp_lock);
  return stamp;
}

/* -a, -A: pidfd watched as the async waiter watches it, in the loop's set and, one-shot, the
 * clock's, both events carrying key. 0, or -1 when either registration failed. */
static int watch_exit(int loop, int clock, int pidfd, unsigned long long key) {
  struct epoll_event watch = {.events = EPOLLIN, .data.u64 = key}, once = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = key};
  return epoll_ctl(clock, EPOLL_CTL_ADD, pidfd, &once) != 0 || epoll_ctl(loop, EPOLL_CTL_ADD, pidfd, &watch) != 0 ? -1 : 0;
}

static long long micros(struct timeval t) { return t.tv_sec * 1000000LL + t.tv_usec; }

static int by_value(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* -c: reads fd to its end into a buffer grown and backed as Drain does; the bytes read. */
static long long capture(int fd) {
  const size_t large = 1 << 20, ahead = 256 << 10;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 0, cap = 0, populated = 0;
  char *data = NULL;
  int grown = 0;
  for (;;) {
    if (!grown && len >= large) {
      grown = 1;
      fcntl(fd, F_SETPIPE_SZ, (int)large);
    }
    if (len == cap) {
      size_t want = cap ? cap * 2 : 4096;
      char *more = realloc(data, want);
      if (!more) break;
      if (more != data) populated = len;
      data = more;
      cap = want;
    }
    size_t until = len + ahead < cap ? len + ahead : cap;
    if (grown && (populated <= len || (until > populated && until - populated >= ahead / 2))) {
      size_t from = ((size_t)data + (populated > len ? populated : len) + page - 1) & ~(page - 1);
      size_t to = ((size_t)data + until) & ~(page - 1);
      if (to > from) madvise((void *)from, to - from, MADV_POPULATE_WRITE);
      populated = until;
    }
    size_t room = cap - len;
    if (grown && populated - len < room) room = populated - len;
    ssize_t got = read(fd, data + len, room);
    if (got > 0) {
      len += (size_t)got;
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  free(data);
  return (long long)len;
}

int main(int argc, char **argv) {
  int clocked = argc > 1 && strcmp(argv[1], "-A") == 0;
  int async = clocked || (argc > 1 && strcmp(argv[1], "-a") == 0);
  int keep = argc > 1 && strcmp(argv[1], "-c") == 0;
  int harness = async || (argc > 1 && strcmp(argv[1], "-s") == 0);
  argv += harness || keep;
  argc -= harness || keep;
  long inFlight = 1, warm = 0;
  if (argc > 2 && strcmp(argv[1], "-j") == 0) {
    inFlight = atol(argv[2]);
    argv += 2;
    argc -= 2;
  } else if (argc > 2 && strcmp(argv[1], "-w") == 0) {
    warm = atol(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc < 3 || atol(argv[1]) <= 0 || inFlight <= 0 || warm < 0 || (keep && inFlight > 1)) {
    fprintf(stderr, "usage: floor [-s | -a | -A | -c] [-j K | -w W] N FILE [ARGS...]\n");
    return 2;
  }
  long n = atol(argv[1]);
  long long *each = malloc(sizeof *each * n);
  if (!each) return 2;
  posix_spawn_file_actions_t actions;
  int out[2] = {-1, -1};
  if (keep && pipe2(out, O_CLOEXEC) != 0) return 2;
  floor_actions(&actions, out[1]);
  int loop = async ? epoll_create1(EPOLL_CLOEXEC) : -1, clock = async ? epoll_create1(EPOLL_CLOEXEC) : -1;
  if (async && (loop < 0 || clock < 0)) return 2;
  if (clocked) {
    pthread_t thread;
    stamp_slots = (unsigned long long)(inFlight > 1 ? inFlight : 2);
    stamps = calloc(stamp_slots, sizeof *stamps);
    if (!stamps || pthread_create(&thread, NULL, clock_thread, &clock) != 0) return 2;
  }
  long failures = 0;
  long long kept = -1; /* -c: the bytes the last run wrote */
  struct rusage before; /* cpuNs counts the runs, not this program's start */
  getrusage(RUSAGE_SELF, &before);
  long long start = now_ns();
  if (inFlight > 1) {
    /* Slot k runs one child at a time: pids[k], started at began[k]. */
    pid_t *pids = calloc(inFlight, sizeof *pids);
    int *pidfds = calloc(inFlight, sizeof *pidfds);
    long long *began = calloc(inFlight, sizeof *began);
    if (!pids || !pidfds || !began) return 2;
    long started = 0, done = 0, running = 0;
    while (done < n) {
      while (running < inFlight && started < n) {
        long k = 0;
        while (pids[k] != 0) k++;
        began[k] = now_ns();
        if (harness) {
          pids[k] = floor_fork(argv[2], argv + 2, environ, async ? &pidfds[k] : NULL);
        } else if (posix_spawnp(&pids[k], argv[2], &actions, NULL, argv + 2, environ) != 0) {
          pids[k] = -1;
        }
        if (pids[k] <= 0) {
          pids[k] = 0;
          failures++;
          each[done++] = 0;
        } else {
          running++;
          if (async && watch_exit(loop, clock, pidfds[k], (unsigned long long)k) != 0) return 2;
        }
        started++;
      }
      if (running == 0) continue;
      int status;
      struct rusage usage;
      pid_t pid;
      if (async) {
        struct epoll_event ready;
        while (epoll_wait(loop, &ready, 1, -1) < 1) {}
        long k = (long)ready.data.u64;
        pid = wait4(pids[k], &status, 0, &usage);
        take_stamp((unsigned long long)k);
        close(pidfds[k]);
      } else {
        pid = wait4(-1, &status, 0, &usage);
      }
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
  /* i < 0: the -w runs, after which the clock and the counts start again. */
  for (long i = -warm; inFlight == 1 && i < n; i++) {
    if (i == 0 && warm > 0) {
      failures = 0;
      getrusage(RUSAGE_SELF, &before);
      start = now_ns();
    }
    long long t0 = now_ns();
    pid_t pid;
    int status;
    struct rusage usage; /* wait4 as tileharness calls it: the rusage is part of the cost */
    if (keep) {
      /* a fresh pipe per run, its write end in the child only */
      if (i > -warm && pipe2(out, O_CLOEXEC) != 0) return 2;
      posix_spawn_file_actions_destroy(&actions);
      floor_actions(&actions, out[1]);
    }
    int pidfd = -1;
    if (harness) {
      pid = floor_fork(argv[2], argv + 2, environ, async ? &pidfd : NULL);
    } else if (posix_spawnp(&pid, argv[2], &actions, NULL, argv + 2, environ) != 0) {
      pid = -1;
    }
    if (pid <= 0) {
      failures++;
      if (keep) close(out[0]), close(out[1]);
    } else {
      if (keep) {
        close(out[1]);
        kept = capture(out[0]);
        close(out[0]);
      }
      if (async) {
        struct epoll_event ready;
        if (watch_exit(loop, clock, pidfd, 1) != 0) return 2;
        while (epoll_wait(loop, &ready, 1, -1) < 1) {}
      }
      if (wait4(pid, &status, 0, &usage) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failures++;
      if (async) take_stamp(1);
      if (pidfd >= 0) close(pidfd);
    }
    if (i >= 0) each[i] = now_ns() - t0;
  }
  long long total = now_ns() - start;
  qsort(each, n, sizeof *each, by_value);
  long long median = n % 2 ? each[n / 2] : (each[n / 2 - 1] + each[n / 2]) / 2;
  struct rusage after;
  getrusage(RUSAGE_SELF, &after);
  long long cpuNs = (micros(after.ru_utime) + micros(after.ru_stime) - micros(before.ru_utime) - micros(before.ru_stime)) * 1000 / n;
  printf("{\"n\":%ld,\"totalNs\":%lld,\"medianNs\":%lld,\"minNs\":%lld,\"failures\":%ld,\"kept\":%lld,\"cpuNs\":%lld}\n", n, total, median,
         each[0], failures, kept, cpuNs);
  return 0;
}
