/* tileharness-exec: the measuring helper behind `measure: true`.
 *
 * Why it exists: on Linux a process's ru_maxrss never drops below the RSS of the image that
 * exec'd it (exec records the old mm's high-water mark in signal->maxrss). A child spawned from a
 * 2 GiB Node process, even by posix_spawn's vfork, therefore reports 2 GiB. So the harness
 * starts this small static program instead, and it starts the target from its own small image
 * (clone with CLONE_VM|CLONE_VFORK, as the harness's fork path does): the target's process is
 * new (maxrss starts at zero) and its pre-exec image is this helper's.
 * The helper waits for the target and reports the target's own status and rusage on fd 3 (or
 * the fd given with -R).
 *
 *   tileharness-exec [-s [-t]] [-P PGID] [-r RESOURCE:SOFT:HARD]... [-c CPU,...] [-m UMASK]
 *                    [-G GID,...] [-g GID] [-u UID] [-p PARENT] [-R FD] -- FILE ARGV0 [ARGS...]
 *
 * The target is the same child the harness would have started itself:
 *   -s    the target starts a new session (it is the group leader the harness's group kills reach;
 *         the helper stays outside, so a group SIGKILL never takes the reporter with it);
 *   -t    with -s: the target, once it leads its session, takes the terminal on its fd 0 as its
 *         controlling terminal (TIOCSCTTY). The helper's own 0-2 are that terminal's slave too, but
 *         it leads no session, so the terminal is never the helper's;
 *   -P    the target's process group: 0, a new one it leads (the group kills reach; the helper
 *         stays outside, as with -s), or the existing group PGID it joins;
 *   -r    a resource limit set in the target before exec (soft/hard -1: unlimited), never on the
 *         helper, so a small RLIMIT_NOFILE or RLIMIT_NPROC cannot starve the helper's own setup;
 *   -c    the CPUs the target is pinned to (sched_setaffinity);
 *   -m    the target's umask (octal);
 *   -G, -g, -u  the target's supplementary groups (-G '': none; several -G add up), gid and uid, set in that order,
 *         last before exec; with -g or -u but no -G the groups are cleared where allowed, failure
 *         ignored (as the harness's own fork path does, and libuv for Node's uid/gid);
 *   -p    killOnExit: the helper dies with PARENT, the harness's process (PR_SET_PDEATHSIG on
 *         itself), and so the target with it. posix_spawn cannot set a death signal, and the
 *         harness starts the helper by posix_spawn, so without this a SIGKILLed harness left the
 *         helper waiting and the target running, reparented to init;
 *   -R    the fd the report goes to (default 3): the harness moves it off the extra fds (`fds`)
 *         the caller gave the target. Every other fd the helper starts with is the target's: the
 *         target inherits them all, the report fd alone closed, and the helper closes them all
 *         once the target runs, so that the target's closing its stdin, stdout or an extra fd is
 *         seen by the harness as if the helper were not there;
 *   FILE  looked up on this process's PATH by execvp's rules (native/exec-search.h).
 * As soon as the target has exec'd (its setsid, group, limits and credentials done) or failed
 * to, the helper reports its pid (STARTED): from then on the harness signals the target directly, SIGKILL and SIGSTOP included. Signals that reach the helper itself
 * are forwarded; the target dies with the helper (PR_SET_PDEATHSIG). Reports: helper-report.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec-search.h"
#include "helper-report.h"

#define MAX_LIMITS 32
/* Stage numbers: native/boundary.h's TH_STAGES (a wire format, append only). */
#define STAGE_SETSID 5
#define STAGE_RLIMIT 6
#define STAGE_SETGROUPS 11
#define STAGE_SETGID 12
#define STAGE_SETUID 13
#define STAGE_SETPGID 14
#define STAGE_AFFINITY 15
#define STAGE_TERMINAL 16

static volatile pid_t target = 0;
static int report_fd = TH_REPORT_FD;

static void forward(int sig) {
  if (target > 0) kill(target, sig);
}

/* Signal masks and handlers go through the system calls themselves, with the kernel's 64-signal
 * mask: libcs keep a few real-time signals for their own threads and timers (glibc 32 and 33,
 * musl 32 to 34), leave them out of sigfillset and refuse handlers for them, and report masks
 * without them. The helper has no threads or timers, and forwards those signals like the rest. */
typedef uint64_t th_mask;

static long set_mask(const th_mask *mask, th_mask *old) {
  return syscall(SYS_rt_sigprocmask, SIG_SETMASK, mask, old, sizeof(th_mask));
}

#if defined(__x86_64__) || defined(__aarch64__)
/* The kernel's struct sigaction on these two (both have sa_restorer). */
struct th_kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  th_mask mask;
};
#if defined(__x86_64__)
/* x86-64 returns from a handler through the restorer the handler was installed with. (aarch64's
 * kernel uses the vDSO's trampoline when none is given.) */
#define TH_SA_RESTORER 0x04000000UL
void th_sigreturn(void);
__asm__(".text\n"
        ".type th_sigreturn,@function\n"
        "th_sigreturn:\n"
        "\tmovq $15, %rax\n" /* SYS_rt_sigreturn */
        "\tsyscall\n"
        ".size th_sigreturn,.-th_sigreturn\n");
#endif

static void install_forwarder(int sig) {
  struct th_kernel_sigaction sa = {.handler = forward};
#if defined(__x86_64__)
  sa.flags = TH_SA_RESTORER;
  sa.restorer = th_sigreturn;
#endif
  syscall(SYS_rt_sigaction, sig, &sa, NULL, sizeof(th_mask));
}
#else
/* Elsewhere libc's sigaction: the signals it keeps for itself are not forwarded. */
static void install_forwarder(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}
#endif

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

/* Closes every fd but keep. */
static void close_except(int keep) {
  if (keep > 0 && syscall(SYS_close_range, 0, keep - 1, 0) < 0)
    for (int fd = 0; fd < keep; fd++) close(fd);
  if (syscall(SYS_close_range, keep + 1, ~0U, 0) < 0) {
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = keep + 1; fd < (max > 0 ? max : 1024); fd++) close((int)fd);
  }
}

static void send_report(struct th_helper_report *r) {
  r->magic = TH_REPORT_MAGIC;
  ssize_t n;
  do {
    n = write(report_fd, r, sizeof *r);
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

/* A decimal id (uid, gid, pgid, cpu) from 0 to max; -1 when s is not one. */
static long long parse_id(const char *s, long long max) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < 0 || v > max) return -1;
  return v;
}

/* An octal umask from 0 to 0777; -1 when s is not one. */
static long long parse_umask(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 8);
  if (end == s || *end != '\0' || *s == '-' || *s == '+' || v > 0777) return -1;
  return v;
}

/* A comma-separated list of ids into out (malloc'd; may be empty for ""); the count, or -1. */
static long parse_ids(const char *s, long long max, long long **out) {
  size_t n = *s ? 1 : 0;
  for (const char *c = s; *c; c++) n += *c == ',';
  *out = malloc((n ? n : 1) * sizeof **out);
  if (!*out) return -1;
  char buf[32];
  for (size_t k = 0; k < n; k++) {
    size_t len = strcspn(s, ",");
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (((*out)[k] = parse_id(buf, max)) < 0) return -1;
    s += len + (s[len] == ',');
  }
  return (long)n;
}

/* What the target's side needs, prepared by main before the clone. */
struct target_plan {
  const char *file;
  char **argv;
  pid_t helper;
  int want_setsid, want_terminal;
  long long pgid, gid, uid, mask;
  int nlimits;
  const int *resources;
  const struct rlimit *limits;
  long ngroups;
  const gid_t *groups;
  long ncpus;
  const unsigned long *cpus; /* TH_CPU_SET_BITS bits */
  const th_mask *mask_after;
  /* Written by the target's side on a failure, read by the helper once the clone returns (they
   * share memory): the stage (0: exec itself), the errno and the detail (the rlimit resource). */
  int stage, err, detail;
};

/* The target's side, from clone(CLONE_VM|CLONE_VFORK) to exec. It shares the helper's memory and
 * runs on a stack the helper lent it while the helper is suspended, so it only makes system calls
 * and writes its own stack and plan->stage/err/detail: no allocation, no stdio. The credentials
 * are raw system calls, not glibc's wrappers, which in a process glibc believes multi-threaded
 * would signal its other threads and wait under a lock (this helper has none, but the rule holds
 * for any CLONE_VM child). Returns only on a failure, with plan->stage/err set. */
static int target_main(void *arg) {
  struct target_plan *plan = arg;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan->helper) _exit(127);
  close(report_fd); /* the target starts with 0-2 and its extra fds only */
  int stage = 0, err = 0;
  if (plan->want_setsid && setsid() < 0) {
    stage = STAGE_SETSID;
    err = errno;
  }
  if (stage == 0 && plan->want_terminal && ioctl(0, TIOCSCTTY, 0) < 0) {
    stage = STAGE_TERMINAL;
    err = errno;
  }
  if (stage == 0 && plan->pgid >= 0 && setpgid(0, (pid_t)plan->pgid) < 0) {
    stage = STAGE_SETPGID;
    err = errno;
  }
  for (int k = 0; stage == 0 && k < plan->nlimits; k++) {
    if (setrlimit(plan->resources[k], &plan->limits[k]) < 0) {
      stage = STAGE_RLIMIT;
      err = errno;
      plan->detail = plan->resources[k];
    }
  }
  if (stage == 0 && plan->ncpus > 0 && syscall(SYS_sched_setaffinity, 0, TH_CPU_SET_BITS / 8, plan->cpus) < 0) {
    stage = STAGE_AFFINITY;
    err = errno;
  }
  if (plan->mask >= 0) umask((mode_t)plan->mask);
  /* Credentials last (a hard rlimit may need root to raise): groups, gid, uid, the order that
   * cannot leave privileges behind. */
  int ids = plan->gid >= 0 || plan->uid >= 0;
  if (stage == 0 && plan->ngroups < 0 && ids) syscall(SYS_setgroups, 0, NULL);
  if (stage == 0 && plan->ngroups >= 0 && syscall(SYS_setgroups, (size_t)plan->ngroups, plan->groups) < 0) {
    stage = STAGE_SETGROUPS;
    err = errno;
  }
  if (stage == 0 && plan->gid >= 0 && syscall(SYS_setgid, (gid_t)plan->gid) < 0) {
    stage = STAGE_SETGID;
    err = errno;
  }
  if (stage == 0 && plan->uid >= 0 && syscall(SYS_setuid, (uid_t)plan->uid) < 0) {
    stage = STAGE_SETUID;
    err = errno;
  }
  if (stage == 0 && ids) {
    /* A change of credentials clears the death signal (prctl(2)): take it again. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != plan->helper) _exit(127);
  }
  if (stage == 0) {
    set_mask(plan->mask_after, NULL);
    err = exec_target(plan->file, plan->argv);
  }
  plan->stage = stage;
  plan->err = err;
  _exit(stage == 0 && err == ENOENT ? 127 : 126);
}

int main(int argc, char **argv) {
  int want_setsid = 0, want_terminal = 0, nlimits = 0, resources[MAX_LIMITS];
  long parent = 0;
  struct rlimit limits[MAX_LIMITS];
  long long pgid = -1, gid = -1, uid = -1, mask = -1, *ids = NULL;
  long ngroups = -1, ncpus = 0, given;
  gid_t *groups = NULL;
  static unsigned long cpus[TH_CPU_SET_BITS / (8 * sizeof(unsigned long))];
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "-s") == 0) {
      want_setsid = 1;
    } else if (strcmp(argv[i], "-t") == 0) {
      want_terminal = 1;
    } else if (strcmp(argv[i], "-P") == 0 && value && (pgid = parse_id(value, INT_MAX)) >= 0) {
      i++;
    } else if (strcmp(argv[i], "-g") == 0 && value && (gid = parse_id(value, 0xfffffffeLL)) >= 0) {
      i++;
    } else if (strcmp(argv[i], "-u") == 0 && value && (uid = parse_id(value, 0xfffffffeLL)) >= 0) {
      i++;
    } else if (strcmp(argv[i], "-m") == 0 && value && (mask = parse_umask(value)) >= 0) {
      i++;
    } else if (strcmp(argv[i], "-G") == 0 && value && (given = parse_ids(value, 0xfffffffeLL, &ids)) >= 0) {
      /* Each -G adds to the list: a long one comes in several, each under the kernel's limit on
       * one argument string (MAX_ARG_STRLEN, 128 KiB). */
      long had = ngroups < 0 ? 0 : ngroups;
      gid_t *more = realloc(groups, (had + given ? had + given : 1) * sizeof *groups);
      if (!more) return 125;
      groups = more;
      for (long k = 0; k < given; k++) groups[had + k] = (gid_t)ids[k];
      ngroups = had + given;
      free(ids);
      i++;
    } else if (strcmp(argv[i], "-c") == 0 && value && (ncpus = parse_ids(value, TH_CPU_SET_BITS - 1, &ids)) > 0) {
      for (long k = 0; k < ncpus; k++) cpus[ids[k] / (8 * sizeof *cpus)] |= 1UL << (ids[k] % (8 * sizeof *cpus));
      free(ids);
      i++;
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc && nlimits < MAX_LIMITS &&
               parse_limit(argv[i + 1], &resources[nlimits], &limits[nlimits])) {
      nlimits++;
      i++;
    } else if (strcmp(argv[i], "-R") == 0 && value && (report_fd = (int)parse_id(value, INT_MAX)) >= 3) {
      i++;
    } else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc && (parent = strtol(argv[i + 1], NULL, 10)) > 0) {
      i++;
    } else {
      return 125;
    }
  }
  if (i + 2 >= argc) return 125; /* no "--", or no FILE and ARGV0 after it */
  if (want_terminal && !want_setsid) return 125; /* TIOCSCTTY needs a session leader */
  if (parent > 0) {
    /* The parent may have died before the prctl took effect: then we are someone else's child,
     * and nothing is started. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != (pid_t)parent) return 125;
  }
  const char *file = argv[i + 1];
  char **target_argv = argv + i + 2;

  struct th_helper_report r;
  memset(&r, 0, sizeof r);
  struct target_plan plan = {
      .file = file, .argv = target_argv, .helper = getpid(), .want_setsid = want_setsid, .want_terminal = want_terminal,
      .pgid = pgid, .gid = gid, .uid = uid, .mask = mask, .nlimits = nlimits,
      .resources = resources, .limits = limits, .ngroups = ngroups, .groups = groups,
      .ncpus = ncpus, .cpus = cpus, .detail = -1};

  /* Signals are blocked across the clone: the target unblocks them just before exec, and the
   * forwarders below are installed only once the target's pid is known. */
  th_mask all = ~(th_mask)0, old = 0;
  set_mask(&all, &old);
  plan.mask_after = &old;

  /* The target starts as the harness's own fork path starts a child: clone(CLONE_VM|CLONE_VFORK),
   * so no page tables are copied and no page is faulted copy-on-write before its exec, and this
   * helper sleeps until the exec (or the failure before it) instead of competing for a core.
   * When the clone returns the target has exec'd, or has written why not into the plan. */
  static char stack[64 * 1024] __attribute__((aligned(64)));
  struct timespec started;
  clock_gettime(CLOCK_MONOTONIC, &started);
  pid_t pid = clone(target_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  if (pid < 0) {
    r.kind = TH_REPORT_FORK_FAILED;
    r.err = errno;
    send_report(&r);
    return 0;
  }
  /* The target has exec'd, its session, group, limits and credentials in place, or it has
   * exited with the reason in the plan (the final report says which). From now on the harness
   * signals it directly. */
  int failed = plan.stage != 0 || plan.err != 0;
  /* The target's fds are the target's alone: the helper keeps only its report fd. Else a target
   * that closes its stdin would leave a reader (this helper) on the pipe, and the harness's writes
   * would block instead of failing with EPIPE; one that closes its stdout or an extra fd would
   * not be seen to. */
  close_except(report_fd);
  r.kind = TH_REPORT_STARTED;
  r.pid = pid;
  /* A target that failed before its program ran (its exec, or its setup) is already exiting: the
   * harness is told so now, not only by the final report, so that it is never taken for a running
   * child meanwhile (kill(0) said true for a program that was not found). */
  r.err = failed ? (plan.err != 0 ? plan.err : EPROTO) : 0;
  send_report(&r);
  r.err = 0;
  if (!failed) {
    target = pid;
    for (int sig = 1; sig <= 64; sig++) { /* the kernel's signals, 1 to 64 */
      if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD) continue;
      install_forwarder(sig);
    }
  }
  set_mask(&old, NULL);

  memset(&r, 0, sizeof r);
  int status = 0;
  struct rusage usage;
  memset(&usage, 0, sizeof usage);
  /* The target's exit is waited for without reaping it (WNOWAIT), and the forwarders are stopped
   * (every signal blocked, the pid forgotten) before it is reaped: a signal that reached this
   * helper after the reap would otherwise be forwarded to the pid, which by then may be another
   * process's. Blocked signals die with the helper. */
  siginfo_t exited;
  while (waitid(P_PID, (id_t)pid, &exited, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  set_mask(&all, NULL);
  target = 0;
  pid_t w;
  do {
    w = wait4(pid, &status, 0, &usage);
  } while (w < 0 && errno == EINTR);
  th_report_rusage_from(&r.usage, &usage);
  struct timespec reaped;
  clock_gettime(CLOCK_MONOTONIC, &reaped);

  r.pid = pid;
  if (failed) {
    r.kind = plan.stage == 0 ? TH_REPORT_EXEC_FAILED : TH_REPORT_SETUP_FAILED;
    r.err = plan.err;
    r.stage = plan.stage;
    r.detail = plan.detail;
  } else {
    r.kind = TH_REPORT_RAN;
    r.status = status;
    r.wall_ns = (int64_t)(reaped.tv_sec - started.tv_sec) * 1000000000 + (reaped.tv_nsec - started.tv_nsec);
  }
  send_report(&r);
  return 0;
}
