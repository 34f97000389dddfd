#include "environ.h"

#include <pthread.h>

extern char **environ;

// node::per_process::env_var_mutex, a node::Mutex: a class whose only member is the uv_mutex_t
// (pthread_mutex_t on Linux) it wraps. Weak: absent, the address is null.
namespace node {
namespace per_process {
extern pthread_mutex_t env_var_mutex __attribute__((weak));
}  // namespace per_process
}  // namespace node

namespace th {

bool HaveNodeEnvLock() { return &node::per_process::env_var_mutex != nullptr; }

namespace {

struct EnvLock {
  pthread_mutex_t *mutex = &node::per_process::env_var_mutex;
  EnvLock() {
    if (mutex) pthread_mutex_lock(mutex);
  }
  ~EnvLock() {
    if (mutex) pthread_mutex_unlock(mutex);
  }
};

}  // namespace

StringList SnapshotEnviron() {
  StringList out;
  EnvLock lock;
  out.AddAll(environ);
  return out;
}

}  // namespace th
