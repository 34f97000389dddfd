// The addon module: its entry points (sync.cc, async.cc) and the tables lib/spawn reads once at
// load: the declared layout of the boundary (boundary.h), signal names, rlimit numbers, errno names.
#include <napi.h>

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mutex>
#include <string>

#include "addon.h"
#include "environ.h"
#include "helper-report.h"

namespace th {

namespace {

Napi::Array Names(Napi::Env env, std::initializer_list<const char *> names) {
  Napi::Array out = Napi::Array::New(env, names.size());
  uint32_t i = 0;
  for (const char *n : names) out.Set(i++, n);
  return out;
}

// boundary.h's lists, by name, in their order: lib/spawn/native.ts numbers everything from these.
Napi::Object Layout(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
#define TH_NAME(name, ...) #name,
#define TH_JS_NAME(name, js) js,
  o.Set("slots", Names(env, {TH_RESULT_SLOTS(TH_NAME)}));
  o.Set("rusage", Names(env, {TH_RUSAGE_FIELDS(TH_NAME, TH_NAME)}));
  o.Set("stdioKinds", Names(env, {TH_STDIO_KINDS(TH_JS_NAME)}));
  o.Set("launchers", Names(env, {TH_LAUNCHERS(TH_JS_NAME)}));
  o.Set("stages", Names(env, {TH_STAGES(TH_JS_NAME)}));
  o.Set("rusageSources", Names(env, {TH_RUSAGE_SOURCES(TH_JS_NAME)}));
  o.Set("specNumbers", Names(env, {TH_SPEC_NUMBERS(TH_NAME)}));
  o.Set("specOptionals", Names(env, {TH_SPEC_OPTIONALS(TH_NAME)}));
#undef TH_NAME
#undef TH_JS_NAME
  o.Set("length", kResultLength);
  return o;
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
  const std::pair<const char *, int> limits[] = {
      {"as", RLIMIT_AS},         {"core", RLIMIT_CORE},     {"cpu", RLIMIT_CPU},
      {"data", RLIMIT_DATA},     {"fsize", RLIMIT_FSIZE},   {"locks", RLIMIT_LOCKS},
      {"memlock", RLIMIT_MEMLOCK}, {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},
      {"nofile", RLIMIT_NOFILE}, {"nproc", RLIMIT_NPROC},   {"rss", RLIMIT_RSS},
      {"rtprio", RLIMIT_RTPRIO}, {"rttime", RLIMIT_RTTIME}, {"sigpending", RLIMIT_SIGPENDING},
      {"stack", RLIMIT_STACK},
  };
  for (const auto &l : limits) o.Set(l.first, l.second);
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

namespace th {
namespace {

// The addon is never unloaded. Node dlcloses an addon when the last environment that loaded it
// goes (a worker that was the only one to load it, and exits), but threads of the addon's outlive
// any environment (the exit clock, the reaper, a { path } opener), as does its atexit handler:
// the next wake-up of one ran in unmapped code and took the whole process down (SIGSEGV). So at
// the first load the library marks itself RTLD_NODELETE (dlopen of itself, already loaded, with
// RTLD_NOLOAD), and stays mapped until the process exits.
void StayLoaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&StayLoaded), &info) == 0 || info.dli_fname == nullptr) return;
    // Leaked on purpose: the reference is what keeps it.
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  });
}

}  // namespace
}  // namespace th

static Napi::Object InitTileharness(Napi::Env env, Napi::Object exports) {
  using namespace th;
  StayLoaded();
  InitSync(env, exports);
  InitAsync(env, exports);
  InitAnonymousFile(env, exports);
  InitFileAttrs(env, exports);
  exports.Set("errnoInfo", Napi::Function::New(env, ErrnoInfo, "errnoInfo"));
  exports.Set("signals", SignalTable(env));
  exports.Set("layout", Layout(env));
  exports.Set("rlimits", RlimitTable(env));
  static_assert(CPU_SETSIZE == TH_CPU_SET_BITS, "the measuring helper takes the same CPUs");
  exports.Set("cpuSetSize", Napi::Number::New(env, CPU_SETSIZE));  // cpus: each below it
  exports.Set("envLock", HaveNodeEnvLock());
  return exports;
}

NODE_API_MODULE(tileharness, InitTileharness)
