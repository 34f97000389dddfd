/* tileharness-exec: the measuring helper behind `measure: true`.
 *
 * Why it exists: on Linux a process's ru_maxrss never drops below the RSS of the image that
 * exec'd it (exec records the old mm's high-water mark in signal->maxrss). A child spawned from a
 * 2 GiB Node process, even by posix_spawn's vfork, therefore reports 2 GiB. So the harness
 * starts this small static program instead, and it forks the target from its own small image:
 * the target's process is new (maxrss starts at zero) and its pre-exec image is this helper's.
 * The helper waits for the target and reports the target's own status and rusage on fd 3.
 *
 *   tileharness-exec FILE ARGV0 [ARGS...]
 *
 * FILE is looked up on this process's PATH when it has no '/', with execvp's rules (EACCES
 * remembered, never /bin/sh for ENOEXEC). Signals the harness sends to the helper (a timeout's
 * killSignal, kill(), abort) are forwarded to the target; SIGKILL cannot be, so the target is
 * armed with PR_SET_PDEATHSIG(SIGKILL) and dies with the helper.
 *
 * Report on fd 3 (one write of struct report, then the helper exits 0):
 *   kind 1: the target ran; status is its wait status, usage its rusage.
 *   kind 2: exec failed; err is the errno.
 * If no report arrives (the helper itself was killed), the harness uses the helper's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper-report.h"

static volatile pid_t target = 0;

static void forward(int sig) {
  if (target > 0) kill(target, sig);
}

static int continues_search(int err) {
  return err == EACCES || err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT;
}

/* execvp's PATH walk without its ENOEXEC-to-/bin/sh fallback. Returns the errno to report. */
static int exec_target(const char *file, char **argv) {
  if (strchr(file, '/')) {
    execv(file, argv);
    return errno;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin";
  size_t flen = strlen(file);
  char buf[4096];
  int saw_eacces = 0, last = ENOENT;
  for (const char *p = path;; p++) {
    const char *colon = strchr(p, ':');
    size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
    if (dlen + flen + 2 <= sizeof buf) {
      if (dlen) {
        memcpy(buf, p, dlen);
        buf[dlen] = '/';
        memcpy(buf + dlen + 1, file, flen + 1);
      } else {
        memcpy(buf, file, flen + 1);
      }
      execv(buf, argv);
      int err = errno;
      if (!continues_search(err)) return err;
      if (err == EACCES) saw_eacces = 1;
      last = err;
    }
    if (!colon) break;
    p = colon;
  }
  return saw_eacces ? EACCES : last;
}

static void send_report(const struct th_helper_report *r) {
  ssize_t n;
  do {
    n = write(TH_REPORT_FD, r, sizeof *r);
  } while (n < 0 && errno == EINTR);
}

int main(int argc, char **argv) {
  if (argc < 3) return 125;
  const char *file = argv[1];
  char **target_argv = argv + 2;
  pid_t self = getpid();

  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) return 125;

  /* Signals are blocked across the fork so that a forwarded signal cannot arrive before the
   * handler knows the target's pid; the target unblocks them before exec. */
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);

  pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) _exit(127);
    close(errpipe[0]);
    close(TH_REPORT_FD);  /* the target starts with 0-2 only */
    sigprocmask(SIG_SETMASK, &old, NULL);
    int err = exec_target(file, target_argv);
    ssize_t n;
    do {
      n = write(errpipe[1], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    _exit(err == ENOENT ? 127 : 126);
  }
  target = pid;
  close(errpipe[1]);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD) continue;
    sigaction(sig, &sa, NULL);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);

  struct th_helper_report r;
  memset(&r, 0, sizeof r);
  r.magic = TH_REPORT_MAGIC;
  int err = 0;
  ssize_t got;
  do {
    got = read(errpipe[0], &err, sizeof err);
  } while (got < 0 && errno == EINTR);

  int status = 0;
  pid_t w;
  do {
    w = wait4(pid, &status, 0, &r.usage);
  } while (w < 0 && errno == EINTR);

  if (got == (ssize_t)sizeof err) {
    r.kind = TH_REPORT_EXEC_FAILED;
    r.err = err;
  } else {
    r.kind = TH_REPORT_RAN;
    r.status = status;
  }
  send_report(&r);
  return 0;
}
