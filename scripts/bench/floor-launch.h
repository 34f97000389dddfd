/* The launches the floor programs make (floor.c, and floor-addon.c inside Node).
 *
 * floor_actions: the plain floor's posix_spawnp file actions, set up once. stdin and stderr on
 * /dev/null, as tileharness's and child_process's 'ignore' put them; stdout too, or dup2'd from
 * stdout_fd when it is not -1 (floor -c's capture pipe).
 *
 * floor_fork: tileharness's own launch as spawnChild and spawnChildSync take it by default (the
 * fork path, which 'auto' takes for killOnExit: native/launcher.cc's LaunchFork and ChildMain),
 * replayed system call for system call. clone(CLONE_VM | CLONE_VFORK) on a stack lent from this
 * frame, every signal blocked across it, the pidfd made by the clone (CLONE_PIDFD) when asked
 * for; in the child, every disposition reset to SIG_DFL and the mask cleared, the death signal
 * taken (PR_SET_PDEATHSIG) and the parent checked, /dev/null opened onto 0-2, every fd from 3 up
 * marked close-on-exec, and execve (FILE is a path here: no PATH search). */
#pragma once
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static inline void floor_actions(posix_spawn_file_actions_t *actions, int stdout_fd) {
  posix_spawn_file_actions_init(actions);
  posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0)
    posix_spawn_file_actions_adddup2(actions, stdout_fd, 1);
  else
    posix_spawn_file_actions_addopen(actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(actions, 2, "/dev/null", O_WRONLY, 0);
}

/* What the fork path's child reads: prepared in the parent, as launcher.cc's ChildPlan is. */
struct floor_fork_plan {
  const char *file;
  char *const *argv;
  char *const *envp;
  pid_t parent;
  struct sigaction default_action;
  sigset_t empty_mask;
};

static int floor_fork_child(void *arg) {
  const struct floor_fork_plan *plan = arg;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &plan->default_action, NULL);
  }
  if (sigprocmask(SIG_SETMASK, &plan->empty_mask, NULL) < 0) _exit(127);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan->parent) _exit(127);
  for (int target = 0; target < 3; target++) {
    int fd = open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC, 0666);
    if (fd < 0) _exit(127);
    if (fd != target) {
      if (dup2(fd, target) < 0) _exit(127);
      close(fd);
    } else {
      fcntl(fd, F_SETFD, 0);
    }
  }
  syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  execve(plan->file, plan->argv, plan->envp);
  _exit(127);
}

/* Starts FILE with argv and envp as the fork path does; its pid, or -1 (errno set). With pidfd,
 * the child's pidfd (close-on-exec) is stored there. An exec failure is the child's exit 127. */
static pid_t floor_fork(const char *file, char *const *argv, char *const *envp, int *pidfd) {
  struct floor_fork_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.file = file;
  plan.argv = argv;
  plan.envp = envp;
  plan.parent = getpid();
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);
  char stack[64 * 1024] __attribute__((aligned(64))); /* the child's, lent: this thread waits */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfd ? CLONE_PIDFD : 0);
  if (pidfd) *pidfd = -1;
  pid_t pid = clone(floor_fork_child, stack + sizeof stack, flags, &plan, pidfd);
  int err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = err;
  return pid;
}
