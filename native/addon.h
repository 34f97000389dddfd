// What the files of the N-API surface share: binding.cc (the module and its tables), spec.cc (a
// normalized spec to C++ values), result.cc (a run's facts to JS values), sync.cc (spawnSync) and
// async.cc (spawnAsync and the event-loop waiter), anonymous-file.cc (a memfd for a tool's input).
#pragma once

#include <napi.h>

#include "boundary.h"
#include "clock.h"
#include "launcher.h"
#include "waiter.h"

namespace th {

// spec.cc. Converts a spec normalized by lib/spawn/normalize.ts; decides nothing (every choice
// was made there). `numbers` is the Float64Array of its numeric facts (boundary.h's
// TH_SPEC_NUMBERS, filled by lib/spawn/native.ts's specNumbers); `input` (an ArrayBufferView or
// null) is copied into wait.input.
void ParseSpec(Napi::Env env, Napi::Object o, Napi::Value numbers, Napi::Value input, LaunchSpec &spec, WaitOptions &wait,
               size_t &maxBuffer);

// result.cc. The elements of `value` when it is a Float64Array of at least minLength elements
// whose buffer is not detached; else nullptr. Plain C API, no exception: each caller says what
// was wrong in its own words. (Every Float64Array that crosses the boundary is checked here.)
double *Float64Elements(napi_env env, napi_value value, size_t minLength);
// Fills outcome for a launch that failed (the status the fork path's child exits
// with, or none).
void SettleFailedLaunch(Launched &child, WaitOutcome &outcome);
// Writes a run's facts into `numbers` (kResultLength doubles, laid out as boundary.h's
// TH_RESULT_SLOTS and TH_RUSAGE_FIELDS).
void WriteNumbers(double *numbers, const Launched &child, const WaitOutcome &outcome, double startNs, double endNs);
// The captured [stdout, stderr] as Buffers (taking the bytes out of the outcome), or null when
// nothing was captured. Plain C API: safe from a libuv callback; nullptr when N-API refused.
napi_value TakeBuffers(napi_env env, WaitOutcome &outcome);

// sync.cc, async.cc: each adds its entry point to the exports.
void InitSync(Napi::Env env, Napi::Object exports);
void InitAsync(Napi::Env env, Napi::Object exports);
// anonymous-file.cc: anonymousFile(name, bytes), a memfd holding the bytes.
void InitAnonymousFile(Napi::Env env, Napi::Object exports);
void InitFileAttrs(Napi::Env env, Napi::Object exports);

}  // namespace th
