// A spec normalized by lib/spawn/normalize.ts, converted to the C++ values the launcher and the
// waiters take. Nothing is decided here: which program runs (the measuring helper or the target),
// which streams are pipes are all in the spec already. (Whether a pidfd is opened is each waiter's
// own need: sync.cc and async.cc set it.)
#include <math.h>

#include <cmath>
#include <cstring>
#include <string>

#include "addon.h"
#include "environ.h"

namespace th {

namespace {

[[noreturn]] void ThrowType(Napi::Env env, const std::string &message) {
  Napi::TypeError err = Napi::TypeError::New(env, "native spec: " + message);
  err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  throw err;
}

std::string GetString(Napi::Env env, Napi::Object obj, const char *key) {
  Napi::Value v = obj.Get(key);
  if (!v.IsString()) ThrowType(env, std::string(key) + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

double GetNumber(Napi::Env env, Napi::Object obj, const char *key) {
  Napi::Value v = obj.Get(key);
  if (!v.IsNumber()) ThrowType(env, std::string(key) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

bool GetBool(Napi::Object obj, const char *key) { return obj.Get(key).ToBoolean().Value(); }

// The elements of an array, each of which must pass `is`, converted by `get`.
template <typename T, typename Is, typename Get>
std::vector<T> GetArray(Napi::Env env, Napi::Value v, const char *key, const char *of, Is is, Get get) {
  if (!v.IsArray()) ThrowType(env, std::string(key) + " must be an array of " + of);
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<T> out;
  out.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value e = arr.Get(i);
    if (!is(e)) ThrowType(env, std::string(key) + " must be an array of " + of);
    out.push_back(get(e));
  }
  return out;
}

// Each string's UTF-8 is written straight into the list: no std::string in between.
StringList GetStrings(Napi::Env env, Napi::Value v, const char *key) {
  if (!v.IsArray()) ThrowType(env, std::string(key) + " must be an array of strings");
  Napi::Array arr = v.As<Napi::Array>();
  uint32_t n = arr.Length();
  StringList out;
  out.Reserve(n, 32 * size_t{n});
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value e = arr.Get(i);
    size_t length = 0;
    if (!e.IsString() || napi_get_value_string_utf8(env, e, nullptr, 0, &length) != napi_ok)
      ThrowType(env, std::string(key) + " must be an array of strings");
    if (napi_get_value_string_utf8(env, e, out.Append(length), length + 1, &length) != napi_ok)
      ThrowType(env, std::string(key) + " must be an array of strings");
  }
  return out;
}

std::vector<double> GetNumbers(Napi::Env env, Napi::Value v, const char *key) {
  return GetArray<double>(
      env, v, key, "numbers", [](Napi::Value e) { return e.IsNumber(); },
      [](Napi::Value e) { return e.As<Napi::Number>().DoubleValue(); });
}

rlim_t ToRlim(double v) { return v < 0 || std::isinf(v) ? RLIM_INFINITY : static_cast<rlim_t>(v); }

// The bytes of an ArrayBufferView, copied: the child reads them long after this call returns.
void CopyInput(Napi::Env env, Napi::Value input, WaitOptions &wait) {
  if (input.IsNull() || input.IsUndefined()) return;
  void *data = nullptr;
  size_t length = 0;
  if (input.IsTypedArray()) {
    napi_typedarray_type type;
    size_t count;
    napi_value ab;
    size_t offset;
    if (napi_get_typedarray_info(env, input, &type, &count, &data, &ab, &offset) != napi_ok) ThrowType(env, "input");
    length = count * input.As<Napi::TypedArray>().ElementSize();
  } else if (input.IsDataView()) {
    napi_value ab;
    size_t offset;
    if (napi_get_dataview_info(env, input, &length, &data, &ab, &offset) != napi_ok) ThrowType(env, "input");
  } else {
    ThrowType(env, "input must be an ArrayBufferView or null");
  }
  wait.input.assign(static_cast<const char *>(data), data ? length : 0);
}

// The spec's numbers (boundary.h's TH_SPEC_NUMBERS), copied into n.
void CopySpecNumbers(Napi::Env env, Napi::Value numbers, double (&n)[kSpecLength]) {
  const double *data = Float64Elements(env, numbers, kSpecLength);
  if (!data) ThrowType(env, "numbers must be a Float64Array of " + std::to_string(kSpecLength));
  memcpy(n, data, sizeof n);
}

}  // namespace

void ParseSpec(Napi::Env env, Napi::Object o, Napi::Value numbers, Napi::Value input, LaunchSpec &spec, WaitOptions &wait,
               size_t &maxBuffer) {
  // Copied out first: reading the object below may run a getter, which could detach the array.
  double n[kSpecLength];
  CopySpecNumbers(env, numbers, n);
  spec.file = GetString(env, o, "file");
  spec.argv = GetStrings(env, o.Get("argv"), "argv");
  Napi::Value envv = o.Get("env");
  // null: this process's environment, copied under Node's lock (environ.h).
  spec.env = envv.IsNull() ? SnapshotEnviron() : GetStrings(env, envv, "env");
  // The rest is read only when given (boundary.h's TH_SPEC_OPTIONALS): absent, it is empty.
  double givenNumber = n[kSpec_given];
  if (!(givenNumber >= 0 && givenNumber < (1u << kSpecOptionalCount)) || givenNumber != std::floor(givenNumber))
    ThrowType(env, "given must be a bit set of the optional fields");
  unsigned given = static_cast<unsigned>(givenNumber);
  if (given & kGiven_cwd) {
    Napi::Value cwd = o.Get("cwd");
    if (cwd.IsString()) {
      spec.hasCwd = true;
      spec.cwd = cwd.As<Napi::String>().Utf8Value();
    }
  }
  // The kinds cross as numbers; an entry's object is read for an fd or a path only.
  bool details = false;
  const double kinds[3] = {n[kSpec_stdin], n[kSpec_stdout], n[kSpec_stderr]};
  for (int i = 0; i < 3; i++) {
    if (!(kinds[i] >= 0 && kinds[i] <= static_cast<double>(StdioKind::Terminal)) || kinds[i] != std::floor(kinds[i]))
      ThrowType(env, "bad stdio kind");
    spec.io[i].kind = static_cast<StdioKind>(static_cast<int>(kinds[i]));
    details = details || spec.io[i].kind == StdioKind::Fd || spec.io[i].kind == StdioKind::Path;
  }
  if (details) {
    Napi::Value stdio = o.Get("stdio");
    if (!stdio.IsArray() || stdio.As<Napi::Array>().Length() != 3) ThrowType(env, "stdio must be an array of 3");
    for (uint32_t i = 0; i < 3; i++) {
      if (spec.io[i].kind != StdioKind::Fd && spec.io[i].kind != StdioKind::Path) continue;
      Napi::Value s = stdio.As<Napi::Array>().Get(i);
      if (!s.IsObject()) ThrowType(env, "stdio entries must be objects");
      Napi::Object so = s.As<Napi::Object>();
      if (spec.io[i].kind == StdioKind::Fd) spec.io[i].fd = static_cast<int>(GetNumber(env, so, "fd"));
      if (spec.io[i].kind == StdioKind::Path) {
        spec.io[i].path = GetString(env, so, "path");
        spec.io[i].append = GetBool(so, "append");
      }
    }
  }
  // [target, fd] pairs, ascending by target, each target 3..1023 (normalize.ts decides; a spec
  // that breaks the launcher's assumptions is refused here, not trusted).
  if (given & kGiven_fds) {
    Napi::Value extra = o.Get("fds");
    if (!extra.IsArray()) ThrowType(env, "fds must be an array");
    Napi::Array ea = extra.As<Napi::Array>();
    for (uint32_t i = 0; i < ea.Length(); i++) {
      std::vector<double> pair = GetNumbers(env, ea.Get(i), "fds entries");
      if (pair.size() != 2 || !(pair[0] >= 3 && pair[0] < 1024) || pair[0] != std::floor(pair[0]) || !(pair[1] >= 0 && pair[1] <= 2147483647.0) ||
          (!spec.extraFds.empty() && pair[0] <= spec.extraFds.back().target))
        ThrowType(env, "fds entries are [target 3..1023, ascending, fd]");
      spec.extraFds.push_back({static_cast<int>(pair[0]), static_cast<int>(pair[1])});
    }
  }
  // terminal: [columns, rows] (each 1..65535), and then 0-2 are all the terminal; null: none.
  Napi::Value terminal = given & kGiven_terminal ? o.Get("terminal") : env.Null();
  bool anyTerminal = false, allTerminal = true;
  for (const StdioSpec &io : spec.io) {
    anyTerminal = anyTerminal || io.kind == StdioKind::Terminal;
    allTerminal = allTerminal && io.kind == StdioKind::Terminal;
  }
  if (!terminal.IsNull()) {
    std::vector<double> size = GetNumbers(env, terminal, "terminal");
    if (size.size() != 2 || !allTerminal) ThrowType(env, "terminal is [columns, rows], with every stdio kind terminal");
    for (double d : size)
      if (!(d >= 1 && d <= 65535) || d != std::floor(d)) ThrowType(env, "terminal sizes are integers from 1 to 65535");
    spec.columns = static_cast<unsigned short>(size[0]);
    spec.rows = static_cast<unsigned short>(size[1]);
  } else if (anyTerminal) {
    ThrowType(env, "stdio kind terminal without a terminal");
  }
  spec.controllingTerminal = n[kSpec_controllingTerminal] != 0;
  if (spec.controllingTerminal && terminal.IsNull()) ThrowType(env, "controllingTerminal without a terminal");
  spec.measure = n[kSpec_measure] != 0;
  double reportFd = n[kSpec_reportFd];
  if (!(reportFd >= 3 && reportFd <= 1024)) ThrowType(env, "reportFd must be from 3 to 1024");
  spec.reportFd = static_cast<int>(reportFd);
  for (const ExtraFd &e : spec.extraFds)
    if (spec.measure && e.target == spec.reportFd) ThrowType(env, "reportFd must not be an fds target");
  spec.setsid = n[kSpec_setsid] != 0;
  spec.deathSignal = n[kSpec_deathSignal] != 0;
  if (given & kGiven_rlimits) {
    Napi::Value rl = o.Get("rlimits");
    if (!rl.IsArray()) ThrowType(env, "rlimits must be an array");
    Napi::Array r = rl.As<Napi::Array>();
    for (uint32_t i = 0; i < r.Length(); i++) {
      Napi::Value entry = r.Get(i);
      if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 3) ThrowType(env, "rlimits entries are [resource, soft, hard]");
      Napi::Array t = entry.As<Napi::Array>();
      if (!t.Get(0u).IsNumber() || !t.Get(1u).IsNumber() || !t.Get(2u).IsNumber()) ThrowType(env, "rlimits entries are numbers");
      spec.rlimits.push_back({t.Get(0u).As<Napi::Number>().Int32Value(), ToRlim(t.Get(1u).As<Napi::Number>().DoubleValue()),
                              ToRlim(t.Get(2u).As<Napi::Number>().DoubleValue())});
    }
  }
  // Credentials, umask, process group, CPUs: -1 (or null, or empty) for "not given".
  double uid = n[kSpec_uid], gid = n[kSpec_gid], mask = n[kSpec_umask];
  spec.hasUid = uid >= 0;
  spec.uid = spec.hasUid ? static_cast<uid_t>(uid) : 0;
  spec.hasGid = gid >= 0;
  spec.gid = spec.hasGid ? static_cast<gid_t>(gid) : 0;
  spec.hasUmask = mask >= 0;
  spec.umask = spec.hasUmask ? static_cast<mode_t>(mask) : 0;
  Napi::Value groups = given & kGiven_groups ? o.Get("groups") : env.Null();
  if (!groups.IsNull()) {
    spec.hasGroups = true;
    for (double g : GetNumbers(env, groups, "groups")) spec.groups.push_back(static_cast<gid_t>(g));
  }
  spec.processGroup = static_cast<pid_t>(n[kSpec_processGroup]);
  if (given & kGiven_cpus) {
    for (double c : GetNumbers(env, o.Get("cpus"), "cpus")) {
      if (!(c >= 0 && c < CPU_SETSIZE)) ThrowType(env, "cpus entries must be below CPU_SETSIZE");
      spec.cpus.push_back(static_cast<int>(c));
    }
  }
  double launcher = n[kSpec_launcher];
  if (!(launcher >= 0 && launcher <= static_cast<double>(LauncherChoice::Fork))) ThrowType(env, "bad launcher");
  spec.launcher = static_cast<LauncherChoice>(static_cast<int>(launcher));

  wait.timeoutMs = n[kSpec_timeout];
  wait.killSignal = static_cast<int>(n[kSpec_killSignal]);
  wait.forceKillAfterMs = n[kSpec_forceKillAfterDelay];
  wait.graceMs = n[kSpec_graceTimeout];
  wait.waitDelayMs = n[kSpec_waitDelay];
  wait.group = n[kSpec_group] != 0;
  // At most what a Buffer can hold (normalize.ts clamps to buffer.constants.MAX_LENGTH).
  double mb = n[kSpec_maxBuffer];
  if (!(mb >= 0 && mb <= 9007199254740991.0)) ThrowType(env, "maxBuffer must be a safe integer");
  maxBuffer = static_cast<size_t>(mb);
  CopyInput(env, input, wait);
}

}  // namespace th
