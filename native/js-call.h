// The one way native code calls into JavaScript from outside a JavaScript call: from a libuv
// callback (a child's pipe became readable, its pidfd fired), where no JS frame is below us.
//
// Two things can go wrong there, and neither may take the process down:
//   - the JS function throws (a 'data' listener, the result callback). node-addon-api would turn
//     that into a C++ exception unwinding through libuv, which ends in std::terminate. Here the
//     exception becomes an ordinary uncaught exception (napi_fatal_exception): the process's
//     'uncaughtException' listeners see it, exactly as for a throw in a timer callback.
//   - the environment is being torn down (a worker calling process.exit() or being terminated,
//     the main thread exiting): JS can no longer run, and N-API calls fail. node-addon-api reacts
//     to a failed call by building an Error, which itself fails and aborts ("FATAL ERROR:
//     Error::Error napi_define_properties"). Here every step checks its napi_status and the call
//     is skipped; the caller still kills and reaps its child, without JS.
//
// So this file uses the plain C API, never node-addon-api, and never throws. (Inside a JS call,
// node-addon-api is fine: its errors become JS exceptions, and with
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS, defined by both build files, an error that cannot be
// thrown into an environment that is terminating is dropped rather than aborting the process.)
#pragma once

#include <node_api.h>

#include <cstddef>

namespace th {

// A JS function kept for later calls from libuv callbacks, with its async context (so
// async_hooks and AsyncLocalStorage see the call as belonging to the spawn that made it).
class JsCallback {
 public:
  JsCallback() = default;
  JsCallback(const JsCallback &) = delete;
  JsCallback &operator=(const JsCallback &) = delete;
  ~JsCallback() { Reset(); }

  // Holds `fn` (a function, else nothing is held). False when N-API refused.
  bool Hold(napi_env env, napi_value fn, const char *resourceName);
  bool held() const { return ref_ != nullptr; }
  // Drops the function. Call while the environment is alive (its cleanup hook at the latest).
  void Reset();

  // Calls fn(argv...) with `this` the global object. A JS exception becomes an uncaught exception; false
  // when the call could not be made (the environment cannot run JS any more) or threw.
  bool Call(size_t argc, const napi_value *argv, napi_value *result = nullptr);

 private:
  napi_env env_ = nullptr;
  napi_ref ref_ = nullptr;
  napi_async_context context_ = nullptr;
};

// A handle scope for a libuv callback that creates JS values; ok() is false when the
// environment cannot give one (then create nothing).
class JsScope {
 public:
  explicit JsScope(napi_env env) : env_(env) { ok_ = napi_open_handle_scope(env, &scope_) == napi_ok; }
  ~JsScope() {
    if (ok_) napi_close_handle_scope(env_, scope_);
  }
  JsScope(const JsScope &) = delete;
  JsScope &operator=(const JsScope &) = delete;
  bool ok() const { return ok_; }

 private:
  napi_env env_;
  napi_handle_scope scope_ = nullptr;
  bool ok_ = false;
};

// Turns whatever exception is pending in `env` into an uncaught exception. Returns whether one was.
bool RaisePendingAsUncaught(napi_env env);

}  // namespace th
