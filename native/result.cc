// A run's facts, handed to JavaScript: the numbers into a Float64Array (boundary.h's layout), the
// captured bytes as Buffers. Called from libuv callbacks too, so the plain C API and no throws.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "addon.h"

namespace th {

namespace {

double Micros(const struct timeval &tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); }

// Outputs up to this size are copied into a Buffer V8 owns; larger ones are handed over as they
// are. An external Buffer's memory is freed by a finalizer that Node runs from the event loop, not
// from the GC, so a sync loop that never yields would hold every output it ever captured (with a
// 4 KiB minimum each: 20,000 `echo hi`s, 110 MiB). A copied one goes with the next GC. Past 1 MiB
// the copy would cost more than the capture is worth: those keep the zero-copy hand-over.
constexpr size_t kCopyBufferMax = 1 << 20;

napi_value TakeBuffer(napi_env env, Capture &c) {
  napi_value out = nullptr;
  if (c.len <= kCopyBufferMax) {
    void *copy;
    if (napi_create_buffer_copy(env, c.len, c.len ? c.data : "", &copy, &out) != napi_ok) return nullptr;
    free(c.Release());
    return out;
  }
  c.Trim();
  size_t len = c.len;
  char *data = c.Release();
  // len never exceeds buffer.constants.MAX_LENGTH (maxBuffer is clamped to it). Should N-API still
  // refuse, whether it ran the finalizer is not ours to know: the bytes are left (a leak, never a
  // double free).
  if (napi_create_external_buffer(env, len, data, [](napi_env, void *d, void *) { free(d); }, nullptr, &out) != napi_ok)
    return nullptr;
  return out;
}

// The stages a child fails at before its exec (or a redirect the parent opened for it, reported
// the same way), whose result has the exit status such a child exits with. The fork path's child
// alone sets ids, CPUs and a terminal.
bool IsChildStage(Stage s) {
  return s == Stage::Exec || s == Stage::Chdir || s == Stage::Open || s == Stage::Dup2 || s == Stage::Setsid ||
         s == Stage::Rlimit || s == Stage::Signal || s == Stage::Setpgid || s == Stage::Helper ||
         s == Stage::Setgroups || s == Stage::Setgid || s == Stage::Setuid || s == Stage::Affinity ||
         s == Stage::Terminal;
}

}  // namespace

double *Float64Elements(napi_env env, napi_value value, size_t minLength) {
  bool typed = false;
  napi_typedarray_type type;
  size_t length = 0;
  void *data = nullptr;
  if (!value || napi_is_typedarray(env, value, &typed) != napi_ok || !typed ||
      napi_get_typedarray_info(env, value, &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_float64_array || length < minLength || !data)
    return nullptr;
  return static_cast<double *>(data);
}

void SettleFailedLaunch(Launched &child, WaitOutcome &outcome) {
  if (child.reaped) {
    outcome.haveStatus = true;
    outcome.status = child.status;
    outcome.usage = child.usage;
  } else if (IsChildStage(child.stage) && child.err != ETIMEDOUT && child.err != ECANCELED) {
    // posix_spawn reported the failure itself and reaped its child (or the kernel reaped the fork
    // path's, this process ignoring SIGCHLD): give the status the fork path's child exits with,
    // so both paths look the same. Its rusage went with it: none, never zeros said to be wait4's.
    // (A { path } open that was given up on, at the deadline or by an abort, had no child at all.)
    outcome.haveStatus = true;
    outcome.status = W_EXITCODE(ExitCodeForSpawnFailure(child.stage, child.err), 0);
  }
  // Nothing reaped here: no figure of a child's (there was none, or it went unseen).
  if (!child.reaped) outcome.rusageSource = RusageSource::Unavailable;
}

void WriteNumbers(double *n, const Launched &child, const WaitOutcome &outcome, double startNs, double endNs) {
  n[kSlot_pid] = static_cast<double>(child.pid);
  n[kSlot_fork] = child.usedFork ? 1 : 0;
  n[kSlot_status] = outcome.haveStatus ? static_cast<double>(outcome.status) : NAN;
  n[kSlot_timedOut] = outcome.timedOut ? 1 : 0;
  n[kSlot_wouldntDie] = outcome.wouldntDie ? 1 : 0;
  n[kSlot_stage] = static_cast<double>(static_cast<int>(child.stage));
  n[kSlot_errnum] = child.err;
  n[kSlot_detail] = child.detail;
  n[kSlot_stdoutTruncated] = outcome.out.truncated ? 1 : 0;
  n[kSlot_stderrTruncated] = outcome.err.truncated ? 1 : 0;
  // The child's lifetime: from the launch to when its exit was seen (not to when its result was
  // built, which can be later by waitDelay); measured, the target's own, as its helper clocked it.
  // A { path } target that could not be opened (refused, timed out, cancelled) left no child to
  // have a lifetime: 0, not the time spent on the open (a FIFO's 300 ms wait for a reader).
  bool neverLaunched = child.stage == Stage::Open && child.pid <= 0;
  n[kSlot_durationMs] = neverLaunched ? 0
                        : outcome.targetWallNs > 0 ? outcome.targetWallNs / 1e6
                                                   : ((outcome.exitNs > 0 ? outcome.exitNs : endNs) - startNs) / 1e6;
  n[kSlot_waitDelayExpired] = outcome.waitDelayExpired ? 1 : 0;
  n[kSlot_rusageSource] = static_cast<double>(static_cast<int>(outcome.rusageSource));
  const struct rusage &ru = outcome.usage;
  double *r = n + kSlotRusage;
  int i = 0;
  // Figures that are not the child's are not reported as if they were.
  bool have = outcome.rusageSource != RusageSource::Unavailable;
#define TH_WRITE_TIME(name, field) r[i++] = have ? Micros(ru.field) : NAN;
#define TH_WRITE_COUNT(name, field) r[i++] = have ? static_cast<double>(ru.field) : NAN;
  TH_RUSAGE_FIELDS(TH_WRITE_TIME, TH_WRITE_COUNT)
#undef TH_WRITE_TIME
#undef TH_WRITE_COUNT
}

napi_value TakeBuffers(napi_env env, WaitOutcome &outcome) {
  napi_value result = nullptr;
  if (outcome.out.len == 0 && outcome.err.len == 0) {
    napi_get_null(env, &result);
    return result;
  }
  napi_value out = TakeBuffer(env, outcome.out);
  napi_value err = out ? TakeBuffer(env, outcome.err) : nullptr;
  if (!err || napi_create_array_with_length(env, 2, &result) != napi_ok) return nullptr;
  if (napi_set_element(env, result, 0, out) != napi_ok || napi_set_element(env, result, 1, err) != napi_ok) return nullptr;
  return result;
}

}  // namespace th
