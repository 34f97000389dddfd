/* The launch the floor programs make (floor.c, and floor-addon.c inside Node): posix_spawnp's file
 * actions and attributes, set up once. stdin and stderr on /dev/null, as tileharness's and
 * child_process's 'ignore' put them; stdout too, or dup2'd from stdout_fd when it is not -1 (floor
 * -c's capture pipe). With harness, tileharness's choices as well (native/launcher.cc): every
 * signal reset to SIG_DFL and the mask cleared in the child, fds from 3 up closed. */
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

static void floor_actions(posix_spawn_file_actions_t *actions, int harness, int stdout_fd) {
  posix_spawn_file_actions_init(actions);
  posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0)
    posix_spawn_file_actions_adddup2(actions, stdout_fd, 1);
  else
    posix_spawn_file_actions_addopen(actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(actions, 2, "/dev/null", O_WRONLY, 0);
  if (harness) posix_spawn_file_actions_addclosefrom_np(actions, 3);
}

static void floor_attr(posix_spawnattr_t *attr, int harness) {
  posix_spawnattr_init(attr);
  if (!harness) return;
  sigset_t all, none;
  sigfillset(&all);
  /* glibc's two internal signals too, as launcher.cc does (sigaddset refuses them) */
  all.__val[0] |= (1UL << 31) | (1UL << 32);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}
