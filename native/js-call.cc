#include "js-call.h"

namespace th {

bool RaisePendingAsUncaught(napi_env env) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) != napi_ok || !pending) return false;
  napi_value error;
  if (napi_get_and_clear_last_exception(env, &error) != napi_ok) return true;
  // Reports to process.on('uncaughtException'), or ends the process the way any uncaught
  // exception does when nobody listens. In an environment that is stopping, this is a no-op.
  napi_fatal_exception(env, error);
  return true;
}

bool JsCallback::Hold(napi_env env, napi_value fn, const char *resourceName) {
  Reset();
  napi_valuetype type;
  if (fn == nullptr || napi_typeof(env, fn, &type) != napi_ok || type != napi_function) return false;
  env_ = env;
  napi_value name;
  if (napi_create_string_utf8(env, resourceName, NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_async_init(env, nullptr, name, &context_) != napi_ok) {
    context_ = nullptr;
    return false;
  }
  if (napi_create_reference(env, fn, 1, &ref_) != napi_ok) {
    ref_ = nullptr;
    Reset();
    return false;
  }
  return true;
}

void JsCallback::Reset() {
  if (ref_) napi_delete_reference(env_, ref_);
  if (context_) napi_async_destroy(env_, context_);
  ref_ = nullptr;
  context_ = nullptr;
}

bool JsCallback::Call(size_t argc, const napi_value *argv, napi_value *out) {
  if (!ref_) return false;
  napi_value fn, recv, result;
  if (napi_get_reference_value(env_, ref_, &fn) != napi_ok || fn == nullptr) return false;
  if (napi_get_global(env_, &recv) != napi_ok) return false;  // napi_make_callback needs an object
  napi_status status = napi_make_callback(env_, context_, recv, fn, argc, argv, &result);
  if (status == napi_ok) {
    if (out) *out = result;
    return true;
  }
  RaisePendingAsUncaught(env_);
  return false;
}

}  // namespace th
