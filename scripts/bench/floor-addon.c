/* floor-addon: the async floor inside Node, a Node addon with nothing in it but what any async
 * spawn from an event loop must do: floor -a's launch (floor-launch.h's floor_fork, tileharness's
 * default fork path, its pidfd made by the clone), the child's pidfd watched by a uv_poll on the
 * environment's loop, wait4 when it fires, and one call
 * into JavaScript with the wait status. No spec to read, no exit clock, no handle, no result
 * object, no kill list, no teardown: against the C floor it is what Node itself (N-API, libuv, a
 * promise, the event loop's turn) costs an async spawn; tileharness's native.spawnAsync against it
 * is what the harness's own work costs. The performance suite (scripts/bench/run.mjs) compiles it
 * with cc at run time against Node's headers; it is not part of the package.
 *
 *   spawn(file, onDone(status)): starts FILE, a path (no arguments); onDone gets the wait status, or -errno
 *   when the launch failed (then at once, before spawn returns).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "floor-launch.h"

extern char **environ;

typedef struct {
  uv_poll_t poll; /* first: the handle's address is the child's */
  pid_t pid;
  int pidfd;
  napi_env env;
  napi_ref onDone;
} Child;

/* onDone(status): from the loop (fromLoop) through napi_make_callback, which runs the microtasks
 * after it as any callback from libuv must; from inside spawn() as a plain call. */
static void call(napi_env env, napi_ref ref, int status, int fromLoop) {
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, recv, arg, ignored;
  if (napi_get_reference_value(env, ref, &fn) == napi_ok && fn && napi_get_global(env, &recv) == napi_ok &&
      napi_create_int32(env, status, &arg) == napi_ok) {
    if (fromLoop)
      napi_make_callback(env, NULL, recv, fn, 1, &arg, &ignored);
    else
      napi_call_function(env, recv, fn, 1, &arg, &ignored);
  }
  napi_close_handle_scope(env, scope);
}

static void closed(uv_handle_t *handle) { free(handle); }

static void exited(uv_poll_t *poll, int status, int events) {
  (void)status, (void)events;
  Child *c = (Child *)poll;
  int wstatus = 0;
  struct rusage usage; /* as the harness reaps: the rusage is part of the cost */
  if (wait4(c->pid, &wstatus, 0, &usage) < 0) wstatus = -errno;
  uv_poll_stop(poll);
  close(c->pidfd);
  call(c->env, c->onDone, wstatus, 1);
  napi_delete_reference(c->env, c->onDone);
  uv_close((uv_handle_t *)poll, closed);
}

static napi_value Spawn(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  char file[4096];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_string_utf8(env, argv[0], file, sizeof file, &length) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "spawn(file: string, onDone: function)");
    return NULL;
  }
  Child *c = calloc(1, sizeof *c);
  if (!c || napi_create_reference(env, argv[1], 1, &c->onDone) != napi_ok) {
    free(c);
    napi_throw_error(env, NULL, "spawn: out of memory");
    return NULL;
  }
  c->env = env;
  char *args[] = {file, NULL};
  c->pid = floor_fork(file, args, environ, &c->pidfd);
  int rc = c->pid > 0 ? 0 : errno;
  uv_loop_t *loop;
  if (rc == 0 && (napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &c->poll, c->pidfd) != 0)) {
    rc = EINVAL;
    close(c->pidfd);
    waitpid(c->pid, NULL, 0);
  }
  if (rc != 0) {
    call(env, c->onDone, -rc, 0);
    napi_delete_reference(env, c->onDone);
    free(c);
    return NULL;
  }
  uv_poll_start(&c->poll, UV_READABLE, exited);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, Spawn, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "spawn", fn) != napi_ok)
    return NULL;
  return exports;
}
