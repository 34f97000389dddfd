// spawnSync: a child run to completion on the calling thread. The deadline is one SIGALRM timer
// for the whole call (alarm.h), armed before anything can block: the { path } opens (path-open.h),
// then the wait (waiter.h).
#include <errno.h>

#include <memory>

#include "addon.h"
#include "alarm.h"
#include "path-open.h"

namespace th {

namespace {

// Opens the { path } targets off this thread, waiting for them at most until the deadline.
// False when they could not be opened (recorded in child).
bool OpenPaths(LaunchSpec &spec, double deadlineNs, Launched &child, WaitOutcome &outcome) {
  if (!PathOpener::Needed(spec)) return true;
  std::unique_ptr<PathOpener> opener = PathOpener::Start(spec, child);
  if (!opener) return false;
  if (!WaitForOpener(*opener, deadlineNs)) {
    opener->GiveUp(child, ETIMEDOUT);
    outcome.timedOut = true;
    return false;
  }
  return opener->Take(spec, child);
}

// spawnSync(spec, specNumbers: Float64Array, input: ArrayBufferView | null, numbers: Float64Array(kResultLength))
//   -> [stdout, stderr] | null (nothing captured); the run's numbers are written into `numbers`.
Napi::Value SpawnSync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsObject() || !Float64Elements(env, info[3], kResultLength)) {
    Napi::TypeError err = Napi::TypeError::New(env, "spawnSync(spec, specNumbers, input, numbers: Float64Array)");
    err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
    throw err;
  }
  LaunchSpec spec;
  WaitOptions wait;
  size_t maxBuffer = SIZE_MAX;
  ParseSpec(env, info[0].As<Napi::Object>(), info[1], info[2], spec, wait, maxBuffer);
  // The sync waiter polls a pidfd for the exit while it has pipes to drain (or a terminal) and to
  // keep a deadline safely; with neither it blocks in wait4 and needs none, unless the kernel
  // reaps children itself (SIGCHLD ignored): wait4 would find nothing, and the pidfd is what still
  // knows the exit status (PidfdExitStatus). That is asked last, a system call only a spawn that
  // has no other use for a pidfd makes.
  spec.wantPidfd = wait.timeoutMs > 0;
  for (const StdioSpec &io : spec.io) spec.wantPidfd = spec.wantPidfd || io.kind == StdioKind::Pipe || io.kind == StdioKind::Terminal;
  if (!spec.wantPidfd) spec.wantPidfd = ChildrenAutoReaped();

  double start = NowNs();
  Launched child;
  WaitOutcome outcome;
  outcome.out.limit = maxBuffer;
  outcome.err.limit = maxBuffer;
  std::unique_ptr<AlarmTimer> timer;
  if (wait.timeoutMs > 0) {
    timer.reset(new AlarmTimer());
    if (!timer->Arm(wait.timeoutMs)) {
      child.stage = Stage::Spawn;
      child.err = errno;
    }
  }
  double openNs = NowNs();
  if (child.stage == Stage::None && OpenPaths(spec, wait.timeoutMs > 0 ? start + wait.timeoutMs * 1e6 : 0, child, outcome)) {
    double launchNs = NowNs();
    // durationMs is the child's lifetime, from its launch: not the { path } opens before it (a
    // FIFO waiting for its reader, say), which only the deadline counts.
    start = launchNs;
    // Only the { path } opens count against the target's deadline, not the setup before them.
    double opensMs = PathOpener::Needed(spec) ? (launchNs - openNs) / 1e6 : 0;
    child = Launch(spec);
    CloseOpenedPaths(spec);
    if (child.stage == Stage::None && spec.measure && AwaitHelperStart(child) && timer) {
      // The deadline acts on the target from when it exists (as the async path's timer, armed
      // when the helper's report comes: async.cc, EndStart): the helper's exec and fork are not taken out of the target's time, so a
      // measured child that timed out lived at least `timeout`, as its durationMs (the helper's
      // clock of the target) shows. The { path } opens before the launch still count.
      timer->Arm(wait.timeoutMs - opensMs);
    }
  }
  if (child.stage == Stage::None) {
    WaitSync(child, wait, timer.get(), outcome);
  } else {
    SettleFailedLaunch(child, outcome);
  }
  timer.reset();
  // Looked up again: a getter on the spec, run while it was read, may have detached the array.
  double *numbers = Float64Elements(env, info[3], kResultLength);
  if (!numbers) {
    Napi::TypeError err = Napi::TypeError::New(env, "spawnSync: numbers was detached while the spec was read");
    err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
    throw err;
  }
  WriteNumbers(numbers, child, outcome, start, NowNs());
  napi_value buffers = TakeBuffers(env, outcome);
  if (!buffers) throw Napi::Error::New(env, "spawnSync: the captured output could not be handed over");
  return Napi::Value(env, buffers);
}

}  // namespace

void InitSync(Napi::Env env, Napi::Object exports) {
  exports.Set("spawnSync", Napi::Function::New(env, SpawnSync, "spawnSync"));
}

}  // namespace th
