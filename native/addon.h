// Shared by the sync (addon.cc) and async (async.cc) N-API entry points.
#pragma once

#include <napi.h>

#include "launcher.h"
#include "waiter.h"

namespace th {

double NowNs();
// Reads a spec normalized by lib/spawn/normalize.ts.
void ParseSpec(Napi::Env env, Napi::Object o, LaunchSpec &spec, WaitOptions &wait, size_t &maxBuffer);
// Fills outcome for a launch that failed (status the fork path's child exits with, or none).
void SettleFailedLaunch(Launched &child, WaitOutcome &outcome);
// The raw result object lib/spawn/result.ts decodes.
Napi::Object BuildRaw(Napi::Env env, const Launched &child, WaitOutcome &outcome, double startNs, double endNs);
void InitAsync(Napi::Env env, Napi::Object exports);

}  // namespace th
