// The native boundary, declared once. Every list that both sides of the N-API boundary number
// (the slots of a run's numbers, the rusage fields in them, stdio kinds, launcher choices, the
// stages a launch can fail at) is an X-macro here. The C++ enums are generated from these lists,
// and the addon exports each list's names at load (binding.cc, `layout`), from which
// lib/spawn/native.ts builds its numbering: a slot moved or added here moves there too, and a
// name the JS side expects but the addon lacks fails the load instead of decoding wrongly.
#pragma once

#include <cstdint>

#include "rusage-fields.h"

namespace th {

// The numeric facts of a run, one double each, in this order (result.cc fills them).
#define TH_RESULT_SLOTS(X)                                                                         \
  X(pid)             /* the child's pid; 0 when none was left to report */                        \
  X(fork)            /* 1: the fork path launched it; 0: posix_spawn */                           \
  X(status)          /* the wait status, NaN when there is none */                                \
  X(timedOut)        /* 1: the deadline passed */                                                 \
  X(wouldntDie)      /* 1: not reaped within graceTimeout after the kill */                       \
  X(stage)           /* Stage that failed, 0 for none */                                          \
  X(errnum)          /* its errno */                                                              \
  X(detail)          /* which stream (open, dup2) or resource (rlimit) */                         \
  X(stdoutTruncated) /* 1: stdout was cut at maxBuffer */                                         \
  X(stderrTruncated) /* 1: stderr was cut at maxBuffer */                                         \
  X(durationMs)      /* launch to reap, monotonic */                                              \
  X(rusageSource)    /* RusageSource: whose figures the rusage slots hold */                      \
  X(waitDelayExpired) /* 1: pipes still open waitDelay after the exit; output after that is cut */

// The numeric facts of a spec, one double each (a flag: 0 or 1), in this order. They cross beside
// the spec object, in a Float64Array that lib/spawn/native.ts's specNumbers fills from it, and
// spec.cc reads them by slot: a read from memory where each was a property looked up by name,
// about 0.2 µs apiece, more on the caches a child has just made cold. stdin, stdout and stderr
// are the stdio entries' kinds; `given` has a bit for each of TH_SPEC_OPTIONALS the spec holds.
// The spec's strings and arrays are read from the object by name: file, argv and env always,
// the stdio entries only when one is an fd or a path, the rest only when given.
#define TH_SPEC_NUMBERS(X)                                                                        \
  X(reportFd) X(controllingTerminal) X(setsid) X(deathSignal) X(uid) X(gid) X(umask)              \
  X(processGroup) X(launcher) X(timeout) X(killSignal) X(forceKillAfterDelay) X(graceTimeout)     \
  X(waitDelay) X(maxBuffer) X(measure) X(group) X(stdin) X(stdout) X(stderr) X(given)

// A spec's properties that are usually empty: bit (1 << k) of the `given` number for the k-th, set
// unless the property is null (cwd, terminal, groups) or an empty array (fds, rlimits, cpus).
#define TH_SPEC_OPTIONALS(X) X(cwd) X(fds) X(terminal) X(rlimits) X(groups) X(cpus)

// The child's rusage fields: TH_RUSAGE_FIELDS, in rusage-fields.h (plain C, which the measuring
// helper's report layout is generated from too).

// Where a child's fd 0-2 comes from: X(Enum, 'js name').
#define TH_STDIO_KINDS(X)        \
  X(Inherit, "inherit")          \
  X(Ignore, "ignore")            \
  X(Closed, "closed")            \
  X(Fd, "fd")                    \
  X(Path, "path")                \
  X(Pipe, "pipe")                \
  X(MergeStdout, "mergeStdout")  \
  X(Terminal, "terminal")

// Which launch path to take: X(Enum, 'js name').
#define TH_LAUNCHERS(X)            \
  X(Auto, "auto")                  \
  X(PosixSpawn, "posix_spawn")     \
  X(Fork, "fork")

// Which step of starting the child failed: X(Enum, 'js name'). The fork path's child and a
// measured child's helper report the number, so the order is a wire format: append only.
#define TH_STAGES(X)      \
  X(None, "none")         \
  X(Exec, "exec")         \
  X(Chdir, "chdir")       \
  X(Open, "open")         \
  X(Dup2, "dup2")         \
  X(Setsid, "setsid")     \
  X(Rlimit, "rlimit")     \
  X(Signal, "signal")     \
  X(Pipe, "pipe")         \
  X(Fork, "fork")         \
  X(Spawn, "spawn")       \
  X(Setgroups, "setgroups") \
  X(Setgid, "setgid")     \
  X(Setuid, "setuid")     \
  X(Setpgid, "setpgid")   \
  X(Affinity, "affinity") \
  X(Terminal, "terminal") \
  X(Helper, "helper")

// Whose resource usage a result reports: X(Enum, 'js name').
#define TH_RUSAGE_SOURCES(X)     \
  X(Wait4, "wait4")              \
  X(Helper, "helper")            \
  X(Unavailable, "unavailable")

#define TH_ENUM_MEMBER(name, ...) name,
enum class StdioKind : int { TH_STDIO_KINDS(TH_ENUM_MEMBER) };
enum class LauncherChoice : int { TH_LAUNCHERS(TH_ENUM_MEMBER) };
enum class Stage : int32_t { TH_STAGES(TH_ENUM_MEMBER) };
enum class RusageSource : int { TH_RUSAGE_SOURCES(TH_ENUM_MEMBER) };
#undef TH_ENUM_MEMBER

#define TH_SLOT_MEMBER(name) kSlot_##name,
enum ResultSlot : int { TH_RESULT_SLOTS(TH_SLOT_MEMBER) kSlotRusage };
#undef TH_SLOT_MEMBER
#define TH_SPEC_MEMBER(name) kSpec_##name,
enum SpecSlot : int { TH_SPEC_NUMBERS(TH_SPEC_MEMBER) kSpecLength };
#undef TH_SPEC_MEMBER
#define TH_OPTIONAL_MEMBER(name) kGivenIndex_##name,
enum SpecOptionalIndex : int { TH_SPEC_OPTIONALS(TH_OPTIONAL_MEMBER) kSpecOptionalCount };
#undef TH_OPTIONAL_MEMBER
#define TH_OPTIONAL_BIT(name) constexpr unsigned kGiven_##name = 1u << kGivenIndex_##name;
TH_SPEC_OPTIONALS(TH_OPTIONAL_BIT)
#undef TH_OPTIONAL_BIT
#define TH_COUNT(...) +1
constexpr int kRusageFieldCount = 0 TH_RUSAGE_FIELDS(TH_COUNT, TH_COUNT);
constexpr int kStageCount = 0 TH_STAGES(TH_COUNT);
#undef TH_COUNT
constexpr int kResultLength = kSlotRusage + kRusageFieldCount;

const char *StageName(Stage s);

}  // namespace th
