// The launcher: turns a LaunchSpec (already converted to C strings in the parent) into a running
// child, by posix_spawn (the contract's fast path) or by the fork path (redirections, cwd, rlimits,
// setsid, then exec). Waiting lives in waiter.h; this file only starts children.
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "boundary.h"
#include "helper-report.h"
#include "string-list.h"

namespace th {

struct StdioSpec {
  StdioKind kind = StdioKind::Inherit;
  int fd = -1;       // StdioKind::Fd: the caller's fd; StdioKind::Path: the file, opened (path-open.h)
  std::string path;  // StdioKind::Path
  bool append = false;
};

// An extra fd (`fds`): the caller's open fd `fd`, given to the child as `target` (3..1023).
struct ExtraFd {
  int target;
  int fd;
};

struct RlimitSetting {
  int resource;
  rlim_t soft;
  rlim_t hard;
};

struct LaunchSpec {
  std::string file;
  StringList argv;  // argv[0] included
  StringList env;   // "K=V": the child's whole environment
  bool hasCwd = false;
  std::string cwd;
  StdioSpec io[3];
  std::vector<ExtraFd> extraFds;  // sorted by target, targets distinct (normalize.ts)
  bool setsid = false;
  bool deathSignal = false;       // fork path: PR_SET_PDEATHSIG(SIGKILL)
  std::vector<RlimitSetting> rlimits;
  // Credentials and umask (fork path: posix_spawn cannot change them). With a uid or gid but no
  // groups, the supplementary groups are cleared where that is allowed (as libuv does).
  bool hasUid = false, hasGid = false, hasGroups = false, hasUmask = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  mode_t umask = 0;
  // -1: the parent's process group; 0: a new group the child leads; else the group it joins.
  pid_t processGroup = -1;
  std::vector<int> cpus;  // the CPUs the child is pinned to (fork path); empty: inherited
  // terminal (every io[i].kind is StdioKind::Terminal): the child's fds 0-2 are the slave of a new
  // pseudo-terminal of this size, prepared here in the parent. controllingTerminal: the child
  // makes it its controlling terminal (setsid, then TIOCSCTTY on fd 0; fork path only); false
  // when measured, where the helper's target does that (its -t) and the helper never does.
  unsigned short columns = 0, rows = 0;
  bool controllingTerminal = false;
  LauncherChoice launcher = LauncherChoice::Auto;
  // measure: the program is the measuring helper (native/exec-helper.c); the child gets the write
  // end of a report pipe as fd `reportFd` (3, or the first number above 2 that is not an extra
  // fd's target: the helper is told with -R), and every other fd above 2 that is not an extra fd
  // is closed. The target's setsid and
  // rlimits (and credentials, umask, process group, CPUs) are the helper's to apply (its options),
  // so those fields here are the helper's own.
  bool measure = false;
  int reportFd = TH_REPORT_FD;
  // Open a pidfd for the child (to poll for its exit, or signal it without a pid-reuse race).
  // Without one the sync waiter blocks in wait4, the contract's plain shape.
  bool wantPidfd = true;
};

// A started child, or the reason none is running. Owns its fds until handed on.
struct Launched {
  pid_t pid = 0;
  int pidfd = -1;
  // With a terminal, stdoutR is its master (O_NONBLOCK: reading it is reading what the child
  // writes, EIO once no slave fd is left) and stdinW a copy of it (writing is the child's input).
  int stdinW = -1;   // parent's end of the stdin pipe (O_NONBLOCK)
  int stdoutR = -1;  // parent's end of the stdout pipe (O_NONBLOCK)
  int stderrR = -1;  // parent's end of the stderr pipe (O_NONBLOCK)
  int reportR = -1;  // measure: parent's end of the helper's report pipe (O_NONBLOCK)
  // measure: an fd held from the launch until the target's pidfd is opened (AdoptHelperStart),
  // which then takes its place: a process at its fd limit by then still gets the pidfd.
  int targetSlot = -1;
  // stdoutR and stdinW are a terminal's master. stdinW is then kept open until the child has been
  // reaped, whatever is written or read: the master's last close hangs the terminal up, which
  // sends SIGHUP to a child that closed its fds (the master reads EIO) but has not exited yet.
  bool terminal = false;
  // measure: the target the helper started (its STARTED report), which signals go to.
  pid_t targetPid = 0;
  int targetPidfd = -1;
  bool targetGone = false;  // it exited, and the helper reaped it, before its pidfd could be opened
  bool usedFork = false;
  Stage stage = Stage::None;  // != None: starting failed
  int err = 0;
  int detail = -1;  // which stream (open, dup2) or resource (rlimit) failed
  // posix_spawn path: the child ran, and was gone (reaped by the kernel, this process ignoring
  // SIGCHLD, or by another waiter) before its pidfd could be opened. Its status and rusage are
  // lost, and its pid may already be another process's: it is never signalled or waited for.
  // pidfd is then an eventfd that is readable from the start, which is all the waiters ask of a
  // pidfd (readable once the child has exited), and which no signal can go through.
  bool gone = false;
  // The child was created and exited before exec (fork path): it has been reaped, this is its status.
  bool reaped = false;
  int status = 0;
  struct rusage usage {};
};

// Starts the child. Never throws; failures come back in Launched::stage/err. { path } targets
// must have been opened already (spec.io[i].fd, see path-open.h); Launch does not close them.
Launched Launch(const LaunchSpec &spec);

// Whether Launch takes the fork path for this spec, now: asked for, or 'auto' and what posix_spawn
// cannot do is asked for (the death signal, setsid, rlimits, credentials, umask, CPUs, a
// controlling terminal), or 'auto' with a pidfd wanted while the kernel reaps children itself.
bool UsesForkPath(const LaunchSpec &spec);

// A running child as the code that signals it sees it.
struct ChildRef {
  pid_t pid = 0;
  int pidfd = -1;
  bool group = false;  // setsid or a new process group: signals go to its whole process group
  // Known to have exited before it could be watched (a measured target its helper has already
  // reaped): nothing is sent to its pid or its group, either of which may be another's by now.
  bool exited = false;
};

// Sends sig to the child (through its pidfd, so never to a reused pid) or to its process group.
// Async-signal-safe.
void SignalChild(const ChildRef &child, int sig);

// Whether the child has exited (its pidfd is readable: for a child or any other process), whether
// or not it has been reaped. A deadline, an abort or kill() acts only on a child that has not:
// a result is decided by what happened first.
bool HasExited(const ChildRef &child);

// Whether a killed child that has not exited yet will as soon as it runs: /proc shows none of its
// threads in an uninterruptible sleep ('D', or 'I': the same, not counted in the load average),
// the one wait a SIGKILL does not cut short. Such a child is only waiting for a CPU, which on a
// loaded machine can take milliseconds. False when /proc cannot say (gone, or hidden).
bool DiesWhenScheduled(const ChildRef &child);

// Reaps pid with wait4, retrying on EINTR; false when there was nothing to reap.
bool Reap(pid_t pid, int &status, struct rusage &usage);

// What a wait4 with WNOHANG found: the child reaped, nothing to reap (gone already: the kernel
// reaped it, or another waiter), or a child that cannot be reaped yet. That is one still running,
// or one that has exited while another process traces it (ptrace): such a zombie is its tracer's
// to see first, and its parent's wait4 blocks until the tracer has waited for it or let it go.
enum class ReapResult { Reaped, Gone, NotYet };
ReapResult TryReap(pid_t pid, int &status, struct rusage &usage);

// The wait status of a child that exited and is gone (reaped by someone else: the kernel, when
// this process ignores SIGCHLD), as its pidfd still tells it: PIDFD_GET_INFO with
// PIDFD_INFO_EXIT, Linux 6.15. False on an older kernel, or when the pidfd cannot tell.
bool PidfdExitStatus(int pidfd, int &status);

// The parent of the process `pidfd` refers to (opened by the number `pid`): from the pidfd itself
// (PIDFD_GET_INFO, Linux 6.13), else from /proc/<pid>/stat read while that process still runs.
// -1 when neither can tell (it has exited meanwhile, say: then no signal can reach it anyway).
pid_t PidfdParent(int pidfd, pid_t pid);

// Whether the kernel reaps this process's children itself, leaving wait4 nothing to find: SIGCHLD
// ignored (SIG_IGN) or SA_NOCLDWAIT set, by anyone in the process.
bool ChildrenAutoReaped();

// Wait status the fork path's child exits with when it fails before exec: shell-compatible,
// 127 for a program that was not found, 126 for everything else.
int ExitCodeForSpawnFailure(Stage stage, int err);

void CloseFd(int &fd);

// Reads a small /proc file whole into `text` (NUL-terminated, at most size - 1 bytes); false when
// it cannot be opened or read.
bool ReadProcText(const char *path, char *text, size_t size);

}  // namespace th
