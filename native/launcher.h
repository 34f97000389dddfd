// The launcher: turns a LaunchSpec (already converted to C strings in the parent) into a running
// child, by posix_spawn (the seed's fast path) or by the fork path (redirections, cwd, rlimits,
// setsid, then exec). Waiting lives in waiter.h; this file only starts children.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "helper-report.h"

namespace th {

enum class StdioKind : int { Inherit, Ignore, Closed, Fd, Path, Pipe, MergeStdout };

struct StdioSpec {
  StdioKind kind = StdioKind::Inherit;
  int fd = -1;       // StdioKind::Fd
  std::string path;  // StdioKind::Path
  bool append = false;
};

struct RlimitSetting {
  int resource;
  rlim_t soft;
  rlim_t hard;
};

enum class LauncherChoice : int { Auto, PosixSpawn, Fork };

// Which step of starting the child failed. The order is part of the wire format of the error
// channel (the child writes the number), so append only.
enum class Stage : int32_t {
  None = 0, Exec, Chdir, Open, Dup2, Setsid, Rlimit, Signal, Pipe, Fork, Spawn,
};
const char *StageName(Stage s);

struct LaunchSpec {
  std::string file;
  std::vector<std::string> argv;  // argv[0] included
  bool inheritEnv = true;         // use `environ` as it is
  std::vector<std::string> env;   // "K=V", when !inheritEnv
  bool hasCwd = false;
  std::string cwd;
  StdioSpec io[3];
  bool setsid = false;
  bool deathSignal = false;       // fork path: PR_SET_PDEATHSIG(SIGKILL)
  std::vector<RlimitSetting> rlimits;
  LauncherChoice launcher = LauncherChoice::Auto;
  // measure: the program is the measuring helper (native/exec-helper.c); the child gets the write
  // end of a report pipe as fd 3, and everything from fd 4 up is closed.
  bool measure = false;
  // Open a pidfd for the child (to poll for its exit, or signal it without a pid-reuse race).
  // Without one the sync waiter blocks in wait4, the seed's plain shape.
  bool wantPidfd = true;
};

// fd 3 in a measured child: where the helper writes its report (native/helper-report.h).
constexpr int kReportFd = TH_REPORT_FD;

// A started child, or the reason none is running. Owns its fds until handed on.
struct Launched {
  pid_t pid = 0;
  int pidfd = -1;
  int stdinW = -1;   // parent's end of the stdin pipe (O_NONBLOCK)
  int stdoutR = -1;  // parent's end of the stdout pipe (O_NONBLOCK)
  int stderrR = -1;  // parent's end of the stderr pipe (O_NONBLOCK)
  int reportR = -1;  // measure: parent's end of the helper's report pipe (O_NONBLOCK)
  bool usedFork = false;
  Stage stage = Stage::None;  // != None: starting failed
  int err = 0;
  int detail = -1;  // which stream (open, dup2) or resource (rlimit) failed
  // The child was created and exited before exec (fork path): it has been reaped, this is its status.
  bool reaped = false;
  int status = 0;
  struct rusage usage {};
};

// Starts the child. Never throws; failures come back in Launched::stage/err.
Launched Launch(const LaunchSpec &spec);

// Wait status the fork path's child exits with when it fails before exec: shell-compatible,
// 127 for a program that was not found, 126 for everything else.
int ExitCodeForSpawnFailure(Stage stage, int err);

void CloseFd(int &fd);

}  // namespace th
