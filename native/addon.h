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
// The numeric facts of a run, slot by slot, as lib/spawn/native.ts reads them (RAW_*).
enum RawSlot {
  kRawPid, kRawFork, kRawStatus, kRawTimedOut, kRawWouldntDie, kRawStage, kRawErrno, kRawDetail,
  kRawStdoutTruncated, kRawStderrTruncated, kRawDurationMs, kRawRusage,
  kRawLength = kRawRusage + 16,
};
// Writes the numbers of a run into `numbers` and returns [stdout, stderr], or null when nothing
// was captured.
Napi::Value BuildRaw(Napi::Env env, const Launched &child, WaitOutcome &outcome, double startNs, double endNs,
                     Napi::Float64Array numbers);
void InitAsync(Napi::Env env, Napi::Object exports);

}  // namespace th
