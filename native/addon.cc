// N-API surface of the harness. The TypeScript layer (lib/spawn) validates and normalizes every
// option; this file converts the normalized spec to C++ values, runs the child, and returns the
// raw facts (wait status, rusage, captured bytes, failing stage and errno). Results are decoded
// in one place, lib/spawn/result.ts.
#include <napi.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <cmath>
#include <math.h>
#include <string>

#include "addon.h"

namespace th {

double NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

namespace {

[[noreturn]] void ThrowType(Napi::Env env, const std::string &message) {
  Napi::TypeError err = Napi::TypeError::New(env, message);
  err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  throw err;
}

std::string GetString(Napi::Env env, Napi::Object obj, const char *key) {
  Napi::Value v = obj.Get(key);
  if (!v.IsString()) ThrowType(env, std::string("native spec: ") + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

double GetNumber(Napi::Env env, Napi::Object obj, const char *key) {
  Napi::Value v = obj.Get(key);
  if (!v.IsNumber()) ThrowType(env, std::string("native spec: ") + key + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

bool GetBool(Napi::Object obj, const char *key) { return obj.Get(key).ToBoolean().Value(); }

rlim_t ToRlim(double v) { return v < 0 || std::isinf(v) ? RLIM_INFINITY : static_cast<rlim_t>(v); }

}  // namespace

// The spec arrives normalized by lib/spawn/normalize.ts.
void ParseSpec(Napi::Env env, Napi::Object o, LaunchSpec &spec, WaitOptions &wait, size_t &maxBuffer) {
  spec.file = GetString(env, o, "file");
  Napi::Value argv = o.Get("argv");
  if (!argv.IsArray()) ThrowType(env, "native spec: argv must be an array");
  Napi::Array arr = argv.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value a = arr.Get(i);
    if (!a.IsString()) ThrowType(env, "native spec: argv entries must be strings");
    spec.argv.push_back(a.As<Napi::String>().Utf8Value());
  }
  Napi::Value envv = o.Get("env");
  spec.inheritEnv = envv.IsNull() || envv.IsUndefined();
  if (!spec.inheritEnv) {
    if (!envv.IsArray()) ThrowType(env, "native spec: env must be an array or null");
    Napi::Array e = envv.As<Napi::Array>();
    for (uint32_t i = 0; i < e.Length(); i++) {
      Napi::Value kv = e.Get(i);
      if (!kv.IsString()) ThrowType(env, "native spec: env entries must be strings");
      spec.env.push_back(kv.As<Napi::String>().Utf8Value());
    }
  }
  Napi::Value cwd = o.Get("cwd");
  if (cwd.IsString()) {
    spec.hasCwd = true;
    spec.cwd = cwd.As<Napi::String>().Utf8Value();
  }
  Napi::Value stdio = o.Get("stdio");
  if (!stdio.IsArray() || stdio.As<Napi::Array>().Length() != 3) ThrowType(env, "native spec: stdio must be an array of 3");
  for (uint32_t i = 0; i < 3; i++) {
    Napi::Value s = stdio.As<Napi::Array>().Get(i);
    if (!s.IsObject()) ThrowType(env, "native spec: stdio entries must be objects");
    Napi::Object so = s.As<Napi::Object>();
    double kind = GetNumber(env, so, "kind");
    if (kind < 0 || kind > static_cast<double>(StdioKind::MergeStdout)) ThrowType(env, "native spec: bad stdio kind");
    spec.io[i].kind = static_cast<StdioKind>(static_cast<int>(kind));
    if (spec.io[i].kind == StdioKind::Fd) spec.io[i].fd = static_cast<int>(GetNumber(env, so, "fd"));
    if (spec.io[i].kind == StdioKind::Path) {
      spec.io[i].path = GetString(env, so, "path");
      spec.io[i].append = GetBool(so, "append");
    }
  }
  Napi::Value helper = o.Get("helper");
  if (helper.IsString()) {
    // measure: run the helper, which runs `file` (looked up on the child's PATH by the helper).
    spec.measure = true;
    std::string target = spec.file;
    spec.file = helper.As<Napi::String>().Utf8Value();
    spec.argv.insert(spec.argv.begin(), target);
    spec.argv.insert(spec.argv.begin(), spec.file);
  }
  spec.setsid = GetBool(o, "setsid");
  spec.deathSignal = GetBool(o, "deathSignal");
  Napi::Value rl = o.Get("rlimits");
  if (rl.IsArray()) {
    Napi::Array r = rl.As<Napi::Array>();
    for (uint32_t i = 0; i < r.Length(); i++) {
      Napi::Value entry = r.Get(i);
      if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 3) ThrowType(env, "native spec: rlimits entries are [resource, soft, hard]");
      Napi::Array t = entry.As<Napi::Array>();
      spec.rlimits.push_back({t.Get(0u).As<Napi::Number>().Int32Value(), ToRlim(t.Get(1u).As<Napi::Number>().DoubleValue()),
                              ToRlim(t.Get(2u).As<Napi::Number>().DoubleValue())});
    }
  }
  double launcher = GetNumber(env, o, "launcher");
  spec.launcher = static_cast<LauncherChoice>(static_cast<int>(launcher));

  wait.timeoutMs = GetNumber(env, o, "timeout");
  wait.killSignal = static_cast<int>(GetNumber(env, o, "killSignal"));
  wait.forceKillAfterMs = GetNumber(env, o, "forceKillAfterDelay");
  wait.graceMs = GetNumber(env, o, "graceTimeout");
  wait.group = spec.setsid;
  double mb = GetNumber(env, o, "maxBuffer");
  maxBuffer = std::isinf(mb) || mb >= 9007199254740992.0 ? SIZE_MAX : static_cast<size_t>(mb);
}

namespace {

// Outputs up to this size are copied into a Buffer V8 owns; larger ones are handed over as they
// are. An external Buffer's memory is freed by a finalizer that Node runs from the event loop, not
// from the GC, so a sync loop that never yields would hold every output it ever captured (with a
// 4 KiB minimum each: 20,000 `echo hi`s, 110 MiB). A copied one goes with the next GC. Past 1 MiB
// the copy would cost more than the capture is worth: those keep the zero-copy hand-over.
constexpr size_t kCopyBufferMax = 1 << 20;

Napi::Value TakeBuffer(Napi::Env env, Capture &c) {
  if (c.len == 0) return Napi::Buffer<char>::New(env, 0);
  if (c.len <= kCopyBufferMax) {
    Napi::Buffer<char> copy = Napi::Buffer<char>::Copy(env, c.data, c.len);
    free(c.Release());
    return copy;
  }
  size_t len = c.len;
  char *data = c.Release();
  return Napi::Buffer<char>::New(env, data, len, [](Napi::Env, char *d) { free(d); });
}

bool IsChildStage(Stage s) {
  return s == Stage::Exec || s == Stage::Chdir || s == Stage::Open || s == Stage::Dup2 || s == Stage::Setsid ||
         s == Stage::Rlimit || s == Stage::Signal;
}

// Copies the numeric facts of a run into the slots of lib/spawn/native.ts's RAW_* layout: one
// typed array instead of ~30 named properties per call.
void FillNumbers(double *n, const Launched &child, const WaitOutcome &outcome, double startNs, double endNs) {
  auto us = [](const struct timeval &tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); };
  const struct rusage &ru = outcome.usage;
  n[kRawPid] = static_cast<double>(child.pid);
  n[kRawFork] = child.usedFork ? 1 : 0;
  n[kRawStatus] = outcome.haveStatus ? static_cast<double>(outcome.status) : NAN;
  n[kRawTimedOut] = outcome.timedOut ? 1 : 0;
  n[kRawWouldntDie] = outcome.wouldntDie ? 1 : 0;
  n[kRawStage] = static_cast<double>(static_cast<int>(child.stage));
  n[kRawErrno] = child.err;
  n[kRawDetail] = child.detail;
  n[kRawStdoutTruncated] = outcome.out.truncated ? 1 : 0;
  n[kRawStderrTruncated] = outcome.err.truncated ? 1 : 0;
  n[kRawDurationMs] = (endNs - startNs) / 1e6;
  double *r = n + kRawRusage;  // in process.resourceUsage()'s order and units
  r[0] = us(ru.ru_utime);
  r[1] = us(ru.ru_stime);
  r[2] = static_cast<double>(ru.ru_maxrss);
  r[3] = static_cast<double>(ru.ru_ixrss);
  r[4] = static_cast<double>(ru.ru_idrss);
  r[5] = static_cast<double>(ru.ru_isrss);
  r[6] = static_cast<double>(ru.ru_minflt);
  r[7] = static_cast<double>(ru.ru_majflt);
  r[8] = static_cast<double>(ru.ru_nswap);
  r[9] = static_cast<double>(ru.ru_inblock);
  r[10] = static_cast<double>(ru.ru_oublock);
  r[11] = static_cast<double>(ru.ru_msgsnd);
  r[12] = static_cast<double>(ru.ru_msgrcv);
  r[13] = static_cast<double>(ru.ru_nsignals);
  r[14] = static_cast<double>(ru.ru_nvcsw);
  r[15] = static_cast<double>(ru.ru_nivcsw);
}

}  // namespace

void SettleFailedLaunch(Launched &child, WaitOutcome &outcome) {
  if (child.reaped) {
    outcome.haveStatus = true;
    outcome.status = child.status;
    outcome.usage = child.usage;
  } else if (IsChildStage(child.stage)) {
    // posix_spawn reported the failure itself and reaped its child: give the status the fork
    // path's child exits with, so both paths look the same.
    outcome.haveStatus = true;
    outcome.status = W_EXITCODE(ExitCodeForSpawnFailure(child.stage, child.err), 0);
  }
}

Napi::Value BuildRaw(Napi::Env env, const Launched &child, WaitOutcome &outcome, double startNs, double endNs,
                     Napi::Float64Array numbers) {
  FillNumbers(numbers.Data(), child, outcome, startNs, endNs);
  if (outcome.out.len == 0 && outcome.err.len == 0) return env.Null();
  Napi::Array buffers = Napi::Array::New(env, 2);
  buffers.Set(0u, TakeBuffer(env, outcome.out));
  buffers.Set(1u, TakeBuffer(env, outcome.err));
  return buffers;
}

namespace {

// spawnSync(nativeSpec, input: Buffer | null, numbers: Float64Array(kRawLength))
//   -> [stdout, stderr] | null (nothing captured); the numbers are written into `numbers`.
Napi::Value SpawnSync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject() || !info[2].IsTypedArray() ||
      info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
      info[2].As<Napi::TypedArray>().ElementLength() < kRawLength)
    ThrowType(env, "spawnSync(spec, input, numbers: Float64Array)");
  LaunchSpec spec;
  WaitOptions wait;
  size_t maxBuffer = SIZE_MAX;
  ParseSpec(env, info[0].As<Napi::Object>(), spec, wait, maxBuffer);
  if (info.Length() > 1 && info[1].IsBuffer()) {
    Napi::Buffer<char> input = info[1].As<Napi::Buffer<char>>();
    wait.input = input.Data();
    wait.inputLen = input.Length();
    spec.io[0].kind = StdioKind::Pipe;
  }
  // The sync waiter needs a pidfd to poll for the exit (pipes to drain) or to signal safely (a
  // timeout); without either it blocks in wait4.
  spec.wantPidfd = wait.timeoutMs > 0 || spec.io[0].kind == StdioKind::Pipe || spec.io[1].kind == StdioKind::Pipe ||
                   spec.io[2].kind == StdioKind::Pipe;

  double start = NowNs();
  Launched child = Launch(spec);
  WaitOutcome outcome;
  outcome.out.limit = maxBuffer;
  outcome.err.limit = maxBuffer;
  if (child.stage == Stage::None) {
    WaitSync(child, wait, outcome);
    if (outcome.timerError) {
      child.stage = Stage::Spawn;
      child.err = outcome.timerError;
    }
  } else {
    SettleFailedLaunch(child, outcome);
  }
  return BuildRaw(env, child, outcome, start, NowNs(), info[2].As<Napi::Float64Array>());
}

// [[number, name, description], ...] for every signal: the one table of signal names.
Napi::Value SignalTable(Napi::Env env) {
  Napi::Array out = Napi::Array::New(env);
  uint32_t k = 0;
  for (int sig = 1; sig < NSIG; sig++) {
    std::string name;
    if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
      name = sig == SIGRTMIN ? "SIGRTMIN" : (sig == SIGRTMAX ? "SIGRTMAX" : "SIGRTMIN+" + std::to_string(sig - SIGRTMIN));
    } else {
      const char *abbrev = sigabbrev_np(sig);
      if (!abbrev) continue;
      name = std::string("SIG") + abbrev;
    }
    const char *descr = sigdescr_np(sig);
    Napi::Array row = Napi::Array::New(env, 3);
    row.Set(0u, sig);
    row.Set(1u, name);
    row.Set(2u, descr ? descr : strsignal(sig));
    out.Set(k++, row);
  }
  return out;
}

Napi::Value RlimitTable(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("as", static_cast<int>(RLIMIT_AS));
  o.Set("core", static_cast<int>(RLIMIT_CORE));
  o.Set("cpu", static_cast<int>(RLIMIT_CPU));
  o.Set("data", static_cast<int>(RLIMIT_DATA));
  o.Set("fsize", static_cast<int>(RLIMIT_FSIZE));
  o.Set("locks", static_cast<int>(RLIMIT_LOCKS));
  o.Set("memlock", static_cast<int>(RLIMIT_MEMLOCK));
  o.Set("msgqueue", static_cast<int>(RLIMIT_MSGQUEUE));
  o.Set("nice", static_cast<int>(RLIMIT_NICE));
  o.Set("nofile", static_cast<int>(RLIMIT_NOFILE));
  o.Set("nproc", static_cast<int>(RLIMIT_NPROC));
  o.Set("rss", static_cast<int>(RLIMIT_RSS));
  o.Set("rtprio", static_cast<int>(RLIMIT_RTPRIO));
  o.Set("rttime", static_cast<int>(RLIMIT_RTTIME));
  o.Set("sigpending", static_cast<int>(RLIMIT_SIGPENDING));
  o.Set("stack", static_cast<int>(RLIMIT_STACK));
  return o;
}

// errnoInfo(n) -> [name, description], e.g. ['ENOENT', 'No such file or directory']
Napi::Value ErrnoInfo(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int e = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : 0;
  const char *name = strerrorname_np(e);
  const char *desc = strerrordesc_np(e);
  Napi::Array row = Napi::Array::New(env, 2);
  row.Set(0u, name ? std::string(name) : "E" + std::to_string(e));
  row.Set(1u, desc ? std::string(desc) : "Unknown error " + std::to_string(e));
  return row;
}

}  // namespace
}  // namespace th

static Napi::Object InitTileharness(Napi::Env env, Napi::Object exports) {
  using namespace th;
  exports.Set("spawnSync", Napi::Function::New(env, SpawnSync, "spawnSync"));
  InitAsync(env, exports);
  exports.Set("errnoInfo", Napi::Function::New(env, ErrnoInfo, "errnoInfo"));
  exports.Set("signals", SignalTable(env));
  Napi::Array stages = Napi::Array::New(env);
  for (int i = 0; i <= static_cast<int>(Stage::Spawn); i++) stages.Set(static_cast<uint32_t>(i), StageName(static_cast<Stage>(i)));
  exports.Set("stages", stages);
  exports.Set("rawLength", static_cast<int>(kRawLength));
  exports.Set("rlimits", RlimitTable(env));
  return exports;
}

NODE_API_MODULE(tileharness, InitTileharness)
