/* tileharness-exec: the measuring helper behind `measure: true`.
 *
 * Why it exists: on Linux a process's ru_maxrss never drops below the RSS of the image that
 * exec'd it (exec records the old mm's high-water mark in signal->maxrss). A child spawned from a
 * 2 GiB Node process, even by posix_spawn's vfork, therefore reports 2 GiB. So the harness
 * starts this small static program instead, and it forks the target from its own small image:
 * the target's process is new (maxrss starts at zero) and its pre-exec image is this helper's.
 * The helper waits for the target and reports the target's own status and rusage on fd 3.
 *
 *   tileharness-exec [-s] [-r RESOURCE:SOFT:HARD]... [-p PARENT] -- FILE ARGV0 [ARGS...]
 *
 * The target is the same child the harness would have started itself:
 *   -s    the target starts a new session (it is the group leader the harness's group kills reach;
 *         the helper stays outside, so a group SIGKILL never takes the reporter with it);
 *   -r    a resource limit set in the target before exec (soft/hard -1: unlimited), never on the
 *         helper, so a small RLIMIT_NOFILE or RLIMIT_NPROC cannot starve the helper's own setup;
 *   -p    killOnExit: the helper dies with PARENT, the harness's process (PR_SET_PDEATHSIG on
 *         itself), and so the target with it. posix_spawn cannot set a death signal, and the
 *         harness starts the helper by posix_spawn, so without this a SIGKILLed harness left the
 *         helper waiting and the target running, reparented to init;
 *   FILE  looked up on this process's PATH by execvp's rules (native/exec-search.h).
 * As soon as the target exists the helper reports its pid (STARTED): from then on the harness
 * signals the target directly, SIGKILL and SIGSTOP included. Signals that reach the helper itself
 * are forwarded; the target dies with the helper (PR_SET_PDEATHSIG). Reports: helper-report.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec-search.h"
#include "helper-report.h"

#define MAX_LIMITS 32
#define STAGE_SETSID 5
#define STAGE_RLIMIT 6

static volatile pid_t target = 0;

static void forward(int sig) {
  if (target > 0) kill(target, sig);
}

/* The target's side: its exec, by execvp's rules. Returns the errno to report. */
static int exec_target(const char *file, char **argv) {
  if (strchr(file, '/')) {
    execv(file, argv);
    return errno;
  }
  const char *path = getenv("PATH");
  const char *cursor = path ? path : TH_DEFAULT_PATH;
  char buf[PATH_MAX];
  int saw_eacces = 0, last = ENOENT;
  for (;;) {
    int r = th_next_candidate(&cursor, file, buf, sizeof buf);
    if (r == 0) break;
    int err;
    if (r < 0) {
      err = ENAMETOOLONG;
    } else {
      execv(buf, argv);
      err = errno;
    }
    if (!th_exec_error_continues_search(err)) return err;
    if (err == EACCES) saw_eacces = 1;
    last = err;
  }
  return saw_eacces ? EACCES : last;
}

static void send_report(struct th_helper_report *r) {
  r->magic = TH_REPORT_MAGIC;
  ssize_t n;
  do {
    n = write(TH_REPORT_FD, r, sizeof *r);
  } while (n < 0 && errno == EINTR);
}

static int parse_limit(const char *s, int *resource, struct rlimit *lim) {
  char *end;
  long res = strtol(s, &end, 10);
  if (*end != ':') return 0;
  long long soft = strtoll(end + 1, &end, 10);
  if (*end != ':') return 0;
  long long hard = strtoll(end + 1, &end, 10);
  if (*end != '\0') return 0;
  *resource = (int)res;
  lim->rlim_cur = soft < 0 ? RLIM_INFINITY : (rlim_t)soft;
  lim->rlim_max = hard < 0 ? RLIM_INFINITY : (rlim_t)hard;
  return 1;
}

int main(int argc, char **argv) {
  int want_setsid = 0, nlimits = 0, resources[MAX_LIMITS];
  long parent = 0;
  struct rlimit limits[MAX_LIMITS];
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "-s") == 0) {
      want_setsid = 1;
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc && nlimits < MAX_LIMITS &&
               parse_limit(argv[i + 1], &resources[nlimits], &limits[nlimits])) {
      nlimits++;
      i++;
    } else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc && (parent = strtol(argv[i + 1], NULL, 10)) > 0) {
      i++;
    } else {
      return 125;
    }
  }
  if (i + 2 >= argc) return 125; /* no "--", or no FILE and ARGV0 after it */
  if (parent > 0) {
    /* The parent may have died before the prctl took effect: then we are someone else's child,
     * and nothing is started. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != (pid_t)parent) return 125;
  }
  const char *file = argv[i + 1];
  char **target_argv = argv + i + 2;
  pid_t self = getpid();

  int errpipe[2];
  struct th_helper_report r;
  memset(&r, 0, sizeof r);
  if (pipe2(errpipe, O_CLOEXEC) < 0) {
    r.kind = TH_REPORT_FORK_FAILED;
    r.err = errno;
    send_report(&r);
    return 0;
  }

  /* Signals are blocked across the fork so that a forwarded signal cannot arrive before the
   * handler knows the target's pid; the target unblocks them before exec. */
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);

  struct timespec started;
  clock_gettime(CLOCK_MONOTONIC, &started);
  pid_t pid = fork();
  if (pid < 0) {
    r.kind = TH_REPORT_FORK_FAILED;
    r.err = errno;
    send_report(&r);
    return 0;
  }
  if (pid == 0) {
    /* The target's setup, then its exec. A failure is reported as [stage, errno, detail]. */
    int report[3] = {0, 0, -1};
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) _exit(127);
    close(errpipe[0]);
    close(TH_REPORT_FD); /* the target starts with 0-2 only */
    if (want_setsid && setsid() < 0) {
      report[0] = STAGE_SETSID;
      report[1] = errno;
    }
    for (int k = 0; report[0] == 0 && k < nlimits; k++) {
      if (setrlimit((__rlimit_resource_t)resources[k], &limits[k]) < 0) {
        report[0] = STAGE_RLIMIT;
        report[1] = errno;
        report[2] = resources[k];
      }
    }
    if (report[0] == 0) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      report[1] = exec_target(file, target_argv);
    }
    ssize_t n;
    do {
      n = write(errpipe[1], report, sizeof report);
    } while (n < 0 && errno == EINTR);
    _exit(report[0] == 0 && report[1] == ENOENT ? 127 : 126);
  }
  target = pid;
  close(errpipe[1]);

  r.kind = TH_REPORT_STARTED;
  r.pid = pid;
  send_report(&r);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD) continue;
    sigaction(sig, &sa, NULL);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);

  int report[3] = {0, 0, -1};
  ssize_t got;
  do {
    got = read(errpipe[0], report, sizeof report);
  } while (got < 0 && errno == EINTR);

  memset(&r, 0, sizeof r);
  int status = 0;
  pid_t w;
  do {
    w = wait4(pid, &status, 0, &r.usage);
  } while (w < 0 && errno == EINTR);
  struct timespec reaped;
  clock_gettime(CLOCK_MONOTONIC, &reaped);

  r.pid = pid;
  if (got == (ssize_t)sizeof report) {
    r.kind = report[0] == 0 ? TH_REPORT_EXEC_FAILED : TH_REPORT_SETUP_FAILED;
    r.err = report[1];
    r.stage = report[0];
    r.detail = report[2];
  } else {
    r.kind = TH_REPORT_RAN;
    r.status = status;
    r.wall_ns = (int64_t)(reaped.tv_sec - started.tv_sec) * 1000000000 + (reaped.tv_nsec - started.tv_nsec);
  }
  send_report(&r);
  return 0;
}
