// The environment a child inherits when the caller gives none: a copy of this process's, taken
// under Node's own lock.
//
// `environ` is not safe to read while another thread changes it: setenv may move the array and
// free the old one, so posix_spawn or execve handed the live pointer can copy freed memory
// (children fail with EFAULT, or get a torn environment). Every change Node makes (process.env
// on the main thread and in workers created with SHARE_ENV) happens under
// node::per_process::env_var_mutex, which node exports; taking that same lock to copy the
// strings is what Node does itself before it spawns. Where the lock is not there to take (a
// runtime that does not export it), HaveNodeEnvLock() is false and lib/spawn copies process.env
// in JavaScript instead, which takes the lock for each read.
#pragma once

#include "string-list.h"

namespace th {

bool HaveNodeEnvLock();
// "K=V" strings of this process's environment, copied under Node's lock.
StringList SnapshotEnviron();

}  // namespace th
