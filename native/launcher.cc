// The launcher. Two paths, as tileiras's harness contract has them:
//
//   posix_spawn  no hook is needed: file actions (and a process group), retried on EINTR.
//   fork         a death signal (killOnExit), setsid, rlimits, credentials, a umask or CPUs are
//                requested: the child applies redirections, cwd, limits, setsid, its process
//                group, CPUs, umask and credentials itself, takes the death signal, then execs.
//
// The fork path does not call fork(2): copying the page tables of a multi-GiB Node process costs
// ~40 ms per GiB, which is the cost this package exists to avoid. It uses clone(CLONE_VM |
// CLONE_VFORK) with a stack of its own, as glibc's posix_spawn does: the parent thread is suspended
// until the child execs or exits, and the child runs the contract's fork-side sequence in between.
//
// Everything the child needs (argv, envp, candidate paths, open flags, rlimit structs, the
// sigaction it installs) is built in the parent before the clone. See ChildMain for the rules.
#include "launcher.h"

#include "exec-search.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>
#include <atomic>
#include <cstdlib>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace th {

const char *StageName(Stage s) {
  switch (s) {
#define TH_STAGE_CASE(name, js) \
  case Stage::name:             \
    return js;
    TH_STAGES(TH_STAGE_CASE)
#undef TH_STAGE_CASE
  }
  return "unknown";
}

void SignalChild(const ChildRef &child, int sig) {
  // Gone before it could be watched: nothing is sent, to its pid or to its group. The group may
  // have emptied with it, and its id be another process's group by now (a new session's).
  if (child.exited) return;
  // pid 0 is no child: kill() would take it for this process's own group (and -1 for every
  // process it may signal).
  if (child.group) {
    // A group outlives its leader while any member is left, and its id is not reused until then.
    if (child.pid > 0) kill(-child.pid, sig);
  } else if (child.pidfd >= 0) {
    // Through the pidfd: even if the child were already reaped, this can't reach a reused pid.
    syscall(SYS_pidfd_send_signal, child.pidfd, sig, nullptr, 0);
  } else if (child.pid > 0) {
    kill(child.pid, sig);
  }
}

bool HasExited(const ChildRef &child) {
  if (child.exited) return true;
  if (child.pidfd < 0) return false;
  struct pollfd p = {child.pidfd, POLLIN, 0};
  int rc;
  do {
    rc = poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  return rc > 0;
}

// A small text file of /proc (a stat line, an fdinfo), NUL-terminated in `text`: false when it
// cannot be read.
bool ReadProcText(const char *path, char *text, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, text, size - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return true;
}

bool DiesWhenScheduled(const ChildRef &child) {
  // The child as /proc numbers it, from its pidfd's fdinfo ("Pid:", in the PID namespace of the
  // /proc mounted here): a pid of this process's namespace names another process, or none, in a
  // /proc of another (unshare -p without a /proc of its own), and one with no fdinfo cannot say.
  if (child.pidfd < 0) return false;
  char info[64], text[512];
  snprintf(info, sizeof info, "/proc/self/fdinfo/%d", child.pidfd);
  if (!ReadProcText(info, text, sizeof text)) return false;
  const char *field = strstr(text, "\nPid:");
  long pid = field ? strtol(field + 5, nullptr, 10) : -1;
  if (pid <= 0) return false;  // -1: exited (HasExited says so); 0: not in this /proc's namespace
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%ld/task", pid);
  DIR *tasks = opendir(dir);
  if (!tasks) return false;
  bool seen = false, stuck = false;
  while (struct dirent *e = readdir(tasks)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[sizeof dir + 1 + sizeof e->d_name + 5], stat[512];
    snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
    if (!ReadProcText(path, stat, sizeof stat)) continue;  // a thread that has just gone
    // "tid (comm) S ...": the state follows the last ')' (comm may hold any bytes, ')' too).
    const char *end = strrchr(stat, ')');
    if (!end || end[1] != ' ') continue;
    seen = true;
    if (end[2] == 'D' || end[2] == 'I') {
      stuck = true;
      break;
    }
  }
  closedir(tasks);
  return seen && !stuck;
}

bool Reap(pid_t pid, int &status, struct rusage &usage) {
  pid_t r;
  do {
    r = wait4(pid, &status, 0, &usage);
  } while (r < 0 && errno == EINTR);
  return r == pid;
}

ReapResult TryReap(pid_t pid, int &status, struct rusage &usage) {
  pid_t r;
  do {
    r = wait4(pid, &status, WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  return r == pid ? ReapResult::Reaped : r == 0 ? ReapResult::NotYet : ReapResult::Gone;
}

namespace {

// struct pidfd_info up to exit_code (its first size, PIDFD_INFO_SIZE_VER0); the kernel headers
// this builds against may predate it.
struct PidfdInfo {
  uint64_t mask, cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exitCode;
};
static_assert(sizeof(PidfdInfo) == 64, "PIDFD_INFO_SIZE_VER0");
constexpr uint64_t kInfoPid = 1u << 0;   // PIDFD_INFO_PID: pid, tgid, ppid
constexpr uint64_t kInfoExit = 1u << 3;  // PIDFD_INFO_EXIT
constexpr unsigned long kGetInfo = _IOWR(0xFF, 11, PidfdInfo);  // PIDFD_GET_INFO

// PIDFD_GET_INFO for `mask`: false on a kernel before 6.13, or when the pidfd cannot tell.
bool PidfdInfoOf(int pidfd, uint64_t mask, PidfdInfo &info) {
  if (pidfd < 0) return false;
  info = PidfdInfo{};
  info.mask = mask;
  return ioctl(pidfd, kGetInfo, &info) == 0 && (info.mask & mask) == mask;
}

}  // namespace

bool PidfdExitStatus(int pidfd, int &status) {
  PidfdInfo info;
  if (!PidfdInfoOf(pidfd, kInfoExit, info)) return false;
  status = info.exitCode;
  return true;
}

pid_t PidfdParent(int pidfd, pid_t pid) {
  PidfdInfo info;
  if (PidfdInfoOf(pidfd, kInfoPid, info)) return static_cast<pid_t>(info.ppid);
  // /proc/<pid>/stat: its fourth field, after the command name in parentheses (which may hold
  // anything, ')' included: the last ')' ends it).
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  if (!ReadProcText(path, text, sizeof text)) return -1;
  const char *end = strrchr(text, ')');
  char state;
  int ppid;
  if (end == nullptr || sscanf(end + 1, " %c %d", &state, &ppid) != 2) return -1;
  // Read while the pidfd's process was running: the pid was still its own, so the file was too.
  struct pollfd p = {pidfd, POLLIN, 0};
  if (poll(&p, 1, 0) != 0) return -1;
  return ppid;
}

bool ChildrenAutoReaped() {
  struct sigaction current;
  if (sigaction(SIGCHLD, nullptr, &current) != 0) return false;
  return current.sa_handler == SIG_IGN || (current.sa_flags & SA_NOCLDWAIT) != 0;
}

int ExitCodeForSpawnFailure(Stage stage, int err) {
  return (stage == Stage::Exec || stage == Stage::Helper) && err == ENOENT ? 127 : 126;
}

void CloseFd(int &fd) {
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
}

namespace {

// Records a launch failure in `out`; false, so that a step can `return Fail(...)`.
bool Fail(Launched &out, Stage stage, int err, int detail = -1) {
  out.stage = stage;
  out.err = err;
  out.detail = detail;
  return false;
}

// Owns a set of fds for the duration of Launch; whatever is not released is closed.
struct FdGuard {
  std::vector<int *> fds;
  ~FdGuard() {
    for (int *fd : fds) CloseFd(*fd);
  }
};

// A child's fds 0-2 blocking, as every program expects of its stdio. O_NONBLOCK lives on the open
// file description, which an inherited or given fd shares with this process, and Node sets it on
// its own stdio pipes: a child writing to such a stdout saw EAGAIN ("head: error writing 'standard
// output': Resource temporarily unavailable"). libuv clears it in its children for the same
// reason, so the parent's description is changed as child_process changes it. Async-signal-safe.
void ClearNonblock(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

// Moves fd to a number >= 3 (close-on-exec), so that the dup2 onto 0..2 in the child can never
// overwrite a source it has yet to use: with every source above 2, the targets can be filled in
// order 0, 1, 2 with no shuffle.
bool LiftAboveStdio(int &fd, int lowest = 3) {
  if (fd >= lowest) return true;
  int lifted = fcntl(fd, F_DUPFD_CLOEXEC, lowest);
  if (lifted < 0) return false;
  close(fd);
  fd = lifted;
  return true;
}

// Both ends land at 3 or above (see LiftAboveStdio).
bool MakePipe(int &readEnd, int &writeEnd) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return false;
  readEnd = p[0];
  writeEnd = p[1];
  if (!LiftAboveStdio(readEnd) || !LiftAboveStdio(writeEnd)) {
    int e = errno;
    CloseFd(readEnd);
    CloseFd(writeEnd);
    errno = e;
    return false;
  }
  return true;
}

// A close-on-exec copy of fd at a number that no child fd above 2 takes (`keep`, ascending), so
// that no dup2 in the child overwrites it before its use and none is its own target (a dup2 onto
// itself would keep close-on-exec): at `above` or higher, past them all, when the fd limit leaves
// room there; else (a target at the limit's top, 1023 under the common 1024) the lowest free
// number that is not one of them. With every number below the limit a child fd or taken, there is
// no room for the copy: EMFILE (F_DUPFD's own EINVAL, for a start at the limit, said "Couldn't
// redirect fd 3: Invalid argument" for 1,021 child fds under a limit of 1,024).
int CopyOutside(int fd, int above, const std::vector<int> &keep) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, above);
  if (copy >= 0 || (errno != EINVAL && errno != EMFILE)) return copy;
  for (int lowest = 3;;) {
    copy = fcntl(fd, F_DUPFD_CLOEXEC, lowest);
    if (copy < 0) {
      if (errno == EINVAL) errno = EMFILE;
      return copy;
    }
    if (!std::binary_search(keep.begin(), keep.end(), copy)) return copy;
    close(copy);
    lowest = copy + 1;
  }
}

// Whether this process has an fd at `first` or above that an exec would keep (no FD_CLOEXEC).
bool InheritableFrom(int first) {
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return true;  // cannot tell: as if there were
  bool found = false;
  int own = dirfd(dir);
  while (struct dirent *entry = readdir(dir)) {
    char *end;
    long fd = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || end == entry->d_name || fd < first || fd == own) continue;
    int flags = fcntl(static_cast<int>(fd), F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) found = true;
  }
  closedir(dir);
  return found;
}

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

bool ExecErrorContinuesSearch(int err) { return th_exec_error_continues_search(err) != 0; }

// The list of paths exec will try, by execvp's rules (exec-search.h), in the child's environment.
// A candidate longer than PATH_MAX is kept: exec itself then says ENAMETOOLONG.
StringList CandidatePaths(const LaunchSpec &spec) {
  StringList out;
  if (spec.file.find('/') != std::string::npos) {
    out.Add(spec.file.c_str(), spec.file.size());
    return out;
  }
  const char *path = nullptr;
  for (size_t i = 0; i < spec.env.size(); i++)
    if (strncmp(spec.env[i], "PATH=", 5) == 0) path = spec.env[i] + 5;
  const char *cursor = path ? path : TH_DEFAULT_PATH;
  std::string buf(spec.file.size() + (path ? strlen(path) : sizeof TH_DEFAULT_PATH) + 2, '\0');
  for (;;) {
    int r = th_next_candidate(&cursor, spec.file.c_str(), &buf[0], buf.size());
    if (r <= 0) break;
    out.Add(buf.c_str());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The fork path's child.
//
// Contract (what may run between clone(CLONE_VM|CLONE_VFORK) and exec): the child shares the
// parent's memory and runs on a stack the parent lent it, while the parent thread is suspended.
// So it may only make system calls through async-signal-safe libc wrappers, read the plan the
// parent prepared, and write to its own stack. It must not allocate, take a lock, throw, touch
// stdio, or return into the parent's frames. Signals are blocked across the clone (the parent's
// handlers would otherwise run on the child's stack, against the parent's memory); the child
// resets every disposition to SIG_DFL before it unblocks anything.
// ---------------------------------------------------------------------------------------------

enum class IoAction : int { Keep, Dup2, Open, Close, MergeStdout };

// Keep: not touched. Clear: setgroups(0, NULL) with a uid or gid but no groups given, its failure
// ignored (an unprivileged caller cannot, and has none to shed), as libuv does for Node's uid/gid.
// Set: the groups given, a failure reported.
enum class GroupsAction : int { Keep, Clear, Set };

struct ChildIo {
  IoAction action = IoAction::Keep;
  int fd = -1;               // Dup2 source
  const char *path = nullptr;  // Open
  int flags = 0;
};

// The child's failure, written where the parent reads it once clone returns: the child shares the
// parent's memory (CLONE_VM), and the parent thread stays suspended (CLONE_VFORK) until the child
// has exec'd or exited, so the report is complete before it is read (glibc's posix_spawn hands its
// exec error back the same way). A report's magic tells a failure from a child that exec'd
// without writing one. Without it the parent could only guess from exit code 127 whether the
// program was missing or the program itself exited 127.
constexpr uint32_t kChildReportMagic = 0x54484346;  // "THCF"
struct ChildReport {
  uint32_t magic;
  int32_t stage;
  int32_t err;
  int32_t detail;
};

struct ChildPlan {
  char *const *argv;
  char *const *envp;
  const char *const *candidates;
  size_t candidateCount;
  const char *cwd;  // nullptr: stay
  ChildIo io[3];
  bool setsid;
  bool controllingTerminal;  // after setsid: fd 0, the terminal's slave, becomes the controlling tty
  pid_t processGroup;  // -1: stay; 0: lead a new group; else join it
  bool setAffinity;
  cpu_set_t cpus;
  bool setUmask;
  mode_t umask;
  // Credentials, applied in the order that cannot leave privileges behind: groups, gid, uid.
  GroupsAction groupsAction;
  const gid_t *groups;
  size_t groupCount;
  bool setGid;
  gid_t gid;
  bool setUid;
  uid_t uid;
  bool deathSignal;
  pid_t parentPid;
  const struct rlimit *limits;
  const int *limitResources;
  size_t limitCount;
  int reportFd;     // measure: the report pipe's write end, to be placed at reportTarget; else -1
  int reportTarget;
  // Extra fds (`fds`): extraSrc[i] goes to extraTargets[i]. Every source sits above every child fd
  // (PreparePipesAndFds), so no dup2 can clobber a source still to be used.
  const int *extraTargets;
  const int *extraSrc;
  size_t extraCount;
  // The child fds above 2 that survive (extra targets and the report fd), ascending: everything
  // between and above them is closed.
  const int *keep;
  size_t keepCount;
  struct sigaction defaultAction;
  sigset_t emptyMask;
  ChildReport *report;  // in the parent's frame: where ChildFail writes
};

[[noreturn]] void ChildFail(const ChildPlan *plan, Stage stage, int err, int detail = -1) {
  volatile ChildReport *report = plan->report;
  report->stage = static_cast<int32_t>(stage);
  report->err = err;
  report->detail = detail;
  report->magic = kChildReportMagic;
  _exit(ExitCodeForSpawnFailure(stage, err));
}

// PR_SET_PDEATHSIG: a SIGKILLed parent leaves no orphan. Check the parent is still the one that
// cloned us: it may have died before the prctl took effect.
void TakeDeathSignal(const ChildPlan *plan) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan->parentPid) _exit(ExitCodeForSpawnFailure(Stage::Signal, ESRCH));
}

// Marks first..last close-on-exec (close_range), or, on a kernel without it, closes them.
void CloseOnExec(unsigned first, unsigned last) {
  if (syscall(SYS_close_range, first, last, CLOSE_RANGE_CLOEXEC) == 0) return;
  for (unsigned fd = first; fd <= last && fd < 65536; fd++) close(static_cast<int>(fd));
}

__attribute__((noinline)) int ChildMain(void *arg) {
  const ChildPlan *plan = static_cast<const ChildPlan *>(arg);

  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &plan->defaultAction, nullptr);  // glibc's internal signals refuse: harmless
  }
  if (sigprocmask(SIG_SETMASK, &plan->emptyMask, nullptr) < 0) ChildFail(plan, Stage::Signal, errno);

  if (plan->deathSignal) TakeDeathSignal(plan);

  // Pass 1, redirections, in order 0, 1, 2. Every Dup2 source is >= 3 (LiftAboveStdio), so no
  // target can clobber a source still to be used.
  for (int target = 0; target < 3; target++) {
    const ChildIo &io = plan->io[target];
    switch (io.action) {
      case IoAction::Keep:
        // Inherit: the parent's fd as it is. Node opens its own 0-2 close-on-exec, so clear the
        // flag or exec would close the very fd the caller asked the child to inherit.
        fcntl(target, F_SETFD, 0);
        break;
      case IoAction::Dup2:
        if (dup2(io.fd, target) < 0) ChildFail(plan, Stage::Dup2, errno, target);
        break;
      case IoAction::Open: {
        int fd = open(io.path, io.flags | O_CLOEXEC, 0666);
        if (fd < 0) ChildFail(plan, Stage::Open, errno, target);
        if (fd != target) {
          if (dup2(fd, target) < 0) ChildFail(plan, Stage::Dup2, errno, target);
          close(fd);
        } else {
          fcntl(fd, F_SETFD, 0);
        }
        break;
      }
      case IoAction::Close:
        close(target);
        break;
      case IoAction::MergeStdout:
        if (dup2(1, 2) < 0) ChildFail(plan, Stage::Dup2, errno, 2);
        break;
    }
  }

  for (int target = 0; target < 3; target++)
    if (plan->io[target].action != IoAction::Close) ClearNonblock(target);

  // Pass 2, the fds above 2: the extra fds, then the report fd. After 0..2 are in place, so they
  // cannot disturb a source those needed; every source here is above every target, so none is
  // its own target (dup2 onto itself would keep close-on-exec) and none is overwritten before use.
  for (size_t i = 0; i < plan->extraCount; i++)
    if (dup2(plan->extraSrc[i], plan->extraTargets[i]) < 0) ChildFail(plan, Stage::Dup2, errno, plan->extraTargets[i]);
  if (plan->reportFd >= 0 && dup2(plan->reportFd, plan->reportTarget) < 0)
    ChildFail(plan, Stage::Dup2, errno, plan->reportTarget);

  if (plan->cwd && chdir(plan->cwd) < 0) ChildFail(plan, Stage::Chdir, errno);

  for (size_t i = 0; i < plan->limitCount; i++)
    if (setrlimit(static_cast<__rlimit_resource>(plan->limitResources[i]), &plan->limits[i]) < 0)
      ChildFail(plan, Stage::Rlimit, errno, plan->limitResources[i]);

  if (plan->setsid && setsid() < 0) ChildFail(plan, Stage::Setsid, errno);
  // A session leader with no controlling terminal takes the one on fd 0 (the slave was opened
  // O_NOCTTY in the parent, so nothing took it before; TIOCSCTTY's 0: steal from no one).
  if (plan->controllingTerminal && ioctl(0, TIOCSCTTY, 0) < 0) ChildFail(plan, Stage::Terminal, errno);
  if (plan->processGroup >= 0 && setpgid(0, plan->processGroup) < 0) ChildFail(plan, Stage::Setpgid, errno);
  if (plan->setAffinity && sched_setaffinity(0, sizeof plan->cpus, &plan->cpus) < 0) ChildFail(plan, Stage::Affinity, errno);
  if (plan->setUmask) umask(plan->umask);

  // Credentials, last before exec (rlimits above may need root to raise a hard limit): groups,
  // then gid, then uid, the one order that cannot leave privileges behind (after setuid, neither
  // of the others is allowed any more). Raw system calls, not glibc's wrappers: in a process it
  // believes multi-threaded, glibc's setuid/setgid/setgroups signal every thread of the parent
  // (SIGSETXID) and wait for them under a lock, which this child, sharing the parent's memory
  // but not its threads, must never do. The raw call changes this one thread, which is all the
  // child is. (CPython refuses vfork for these for the same reason; we keep it, without glibc.)
  if (plan->groupsAction == GroupsAction::Clear) {
    syscall(SYS_setgroups, 0, nullptr);
  } else if (plan->groupsAction == GroupsAction::Set && syscall(SYS_setgroups, plan->groupCount, plan->groups) < 0) {
    ChildFail(plan, Stage::Setgroups, errno);
  }
  if (plan->setGid && syscall(SYS_setgid, plan->gid) < 0) ChildFail(plan, Stage::Setgid, errno);
  if (plan->setUid && syscall(SYS_setuid, plan->uid) < 0) ChildFail(plan, Stage::Setuid, errno);
  // A change of credentials clears the death signal (prctl(2)): take it again as the new user.
  if (plan->deathSignal && (plan->setGid || plan->setUid)) TakeDeathSignal(plan);

  // Pass 3: only 0..2, the extra fds and the report fd survive exec: the gaps between the kept
  // fds, then everything above the last.
  unsigned next = 3;
  for (size_t i = 0; i < plan->keepCount; i++) {
    unsigned kept = static_cast<unsigned>(plan->keep[i]);
    if (kept > next) CloseOnExec(next, kept - 1);
    next = kept + 1;
  }
  CloseOnExec(next, ~0U);

  bool sawEacces = false;
  int last = ENOENT;
  for (size_t i = 0; i < plan->candidateCount; i++) {
    execve(plan->candidates[i], plan->argv, plan->envp);
    int err = errno;
    if (plan->candidateCount == 1 || !ExecErrorContinuesSearch(err)) ChildFail(plan, Stage::Exec, err);
    if (err == EACCES) sawEacces = true;
    last = err;
  }
  ChildFail(plan, Stage::Exec, sawEacces ? EACCES : last);
}

// C strings pointing into the spec, kept alive for the duration of Launch.
struct CStrings {
  StringList candidateStore;
  std::vector<char *> argv, envp, candidates;  // candidates: null-ended too (not counted)

  explicit CStrings(const LaunchSpec &spec)
      : candidateStore(CandidatePaths(spec)), argv(spec.argv.Pointers()), envp(spec.env.Pointers()), candidates(candidateStore.Pointers()) {}
  CStrings(const CStrings &) = delete;  // candidates point into candidateStore, which may be inline
  CStrings &operator=(const CStrings &) = delete;
  char *const *Envp() const { return envp.data(); }
};

// Parent-side fds for the three streams: for Pipe, the child's end; for Fd, the caller's fd
// lifted above 2. The parent's ends of pipes land in Launched. Then the fds above 2: the extra
// fds' sources and the report pipe's write end, all above `above`.
struct ChildFds {
  int src[3] = {-1, -1, -1};
  int owned[3] = {-1, -1, -1};  // fds Launch created and must close after the spawn
  int reportW = -1;             // measure: the child's end of the report pipe
  int terminalSlave = -1;       // terminal: the slave, the source of all of 0-2
  std::vector<int> extraTargets;
  std::vector<int> extraSrc;    // copies of the caller's fds, owned: closed after the spawn
  std::vector<int> keep;        // the child fds above 2 that survive, ascending
  int above = 3;                // the lowest number above every child fd: where sources go
};

// terminal: a new pseudo-terminal, prepared whole in the parent (the child only dup2s and makes
// an ioctl). The master is this process's: close-on-exec, non-blocking, in out.stdoutR (what the
// child writes is read there) and copied to out.stdinW (the child's input is written there); two
// fds so that each can be watched on its own (one uv_poll per fd). The slave is opened O_NOCTTY,
// so it never becomes this process's controlling terminal, and lifted above 2 like any source.
bool OpenTerminal(const LaunchSpec &spec, Launched &out, ChildFds &fds, FdGuard &guard) {
  out.stdoutR = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);  // closed by Launch on a failure
  if (out.stdoutR < 0 || !LiftAboveStdio(out.stdoutR)) return Fail(out, Stage::Terminal, errno);
  if (grantpt(out.stdoutR) < 0 || unlockpt(out.stdoutR) < 0) return Fail(out, Stage::Terminal, errno);
  char name[64];
  int err = ptsname_r(out.stdoutR, name, sizeof name);
  if (err != 0) return Fail(out, Stage::Terminal, err);
  struct winsize size = {spec.rows, spec.columns, 0, 0};
  if (ioctl(out.stdoutR, TIOCSWINSZ, &size) < 0) return Fail(out, Stage::Terminal, errno);
  fds.terminalSlave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fds.terminalSlave < 0) return Fail(out, Stage::Terminal, errno);
  guard.fds.push_back(&fds.terminalSlave);
  if (!LiftAboveStdio(fds.terminalSlave)) return Fail(out, Stage::Terminal, errno);
  out.stdinW = fcntl(out.stdoutR, F_DUPFD_CLOEXEC, 3);
  if (out.stdinW < 0) return Fail(out, Stage::Terminal, errno);
  out.terminal = true;
  fcntl(out.stdoutR, F_SETFL, fcntl(out.stdoutR, F_GETFL) | O_NONBLOCK);  // the copy shares the flag
  return true;
}

bool PreparePipesAndFds(const LaunchSpec &spec, Launched &out, ChildFds &fds, FdGuard &guard) {
  // The child fds above 2, ascending (spec.extraFds is sorted, the report fd is none of them).
  for (const ExtraFd &e : spec.extraFds) fds.keep.push_back(e.target);
  if (spec.measure) fds.keep.insert(std::lower_bound(fds.keep.begin(), fds.keep.end(), spec.reportFd), spec.reportFd);
  if (!fds.keep.empty()) fds.above = fds.keep.back() + 1;

  // Sources of the fds above 2 are copied where no target is (CopyOutside: above them all where
  // the fd limit allows), so that the child's dup2s can be done in any order: with {3: 4, 4: 3},
  // dup2(4, 3) would otherwise destroy the 3 still to be moved to 4. Always a copy, even of an fd
  // that already sits apart: a caller's fd closed since normalize.ts checked it then fails here,
  // stage dup2, before any child exists (inside posix_spawn it would come back as exec's EBADF).
  // A target the child cannot have (at or above the fd limit, which it has from here) fails here,
  // on either path, with dup2's errno for it: EBADF (glibc's file actions would refuse it too).
  // One copy per caller's fd, however many child fds it is given to: a copy each took as many of
  // this process's fds as there were targets, and 900 child fds from one fd failed with EMFILE
  // under a limit of 1,024 that every one of them was below. The guard closes each copy once.
  size_t n = spec.extraFds.size();
  fds.extraSrc.assign(n, -1);  // sized once: the guard keeps pointers into it
  int limit = n > 0 ? getdtablesize() : 0;
  std::unordered_map<int, size_t> copied;  // the caller's fd -> the entry holding its copy
  for (size_t i = 0; i < n; i++) {
    const ExtraFd &e = spec.extraFds[i];
    if (e.target >= limit) return Fail(out, Stage::Dup2, EBADF, e.target);
    fds.extraTargets.push_back(e.target);
    auto same = copied.find(e.fd);
    if (same != copied.end()) {
      fds.extraSrc[i] = fds.extraSrc[same->second];
      continue;
    }
    fds.extraSrc[i] = CopyOutside(e.fd, fds.above, fds.keep);
    if (fds.extraSrc[i] < 0) return Fail(out, Stage::Dup2, errno, e.target);
    guard.fds.push_back(&fds.extraSrc[i]);
    copied.emplace(e.fd, i);
  }
  if (spec.measure) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return Fail(out, Stage::Pipe, errno);
    out.reportR = p[0];
    fds.reportW = p[1];
    guard.fds.push_back(&fds.reportW);
    if (!LiftAboveStdio(out.reportR)) return Fail(out, Stage::Pipe, errno);
    // The write end is a source like the extra fds': placed where no target is.
    fds.reportW = CopyOutside(p[1], fds.above, fds.keep);
    int err = errno;
    close(p[1]);
    if (fds.reportW < 0) return Fail(out, Stage::Pipe, err);
    fcntl(out.reportR, F_SETFL, fcntl(out.reportR, F_GETFL) | O_NONBLOCK);
    // The target's pidfd is opened only when the helper reports the target, by when this process
    // may have no fd left: its place is held from now (a failure here starts nothing).
    out.targetSlot = fcntl(out.reportR, F_DUPFD_CLOEXEC, 3);
    if (out.targetSlot < 0) return Fail(out, Stage::Pipe, errno);
  }
  if (spec.io[0].kind == StdioKind::Terminal && !OpenTerminal(spec, out, fds, guard)) return false;
  for (int target = 0; target < 3; target++) {
    const StdioSpec &io = spec.io[target];
    if (io.kind == StdioKind::Terminal) {
      fds.src[target] = fds.terminalSlave;
    } else if (io.kind == StdioKind::Pipe) {
      int r, w;
      if (!MakePipe(r, w)) return Fail(out, Stage::Pipe, errno);
      int &parentEnd = target == 0 ? out.stdinW : (target == 1 ? out.stdoutR : out.stderrR);
      parentEnd = target == 0 ? w : r;
      fds.owned[target] = target == 0 ? r : w;
      fds.src[target] = fds.owned[target];
      guard.fds.push_back(&fds.owned[target]);
      fcntl(parentEnd, F_SETFL, fcntl(parentEnd, F_GETFL) | O_NONBLOCK);
    } else if (io.kind == StdioKind::Fd || io.kind == StdioKind::Path) {  // Path: opened already
      if (io.fd >= 3) {
        fds.src[target] = io.fd;
      } else {
        int lifted = fcntl(io.fd, F_DUPFD_CLOEXEC, 3);
        if (lifted < 0) return Fail(out, Stage::Dup2, errno, target);
        fds.owned[target] = lifted;
        fds.src[target] = lifted;
        guard.fds.push_back(&fds.owned[target]);
      }
    }
  }
  return true;
}

// ----- posix_spawn path ------------------------------------------------------------------------

// Owns the posix_spawn attribute objects; ok() is false when glibc could not allocate them.
struct SpawnAttrs {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int err = 0;
  bool haveActions = false, haveAttr = false;
  SpawnAttrs() {
    err = posix_spawn_file_actions_init(&actions);
    haveActions = err == 0;
    if (haveActions) {
      err = posix_spawnattr_init(&attr);
      haveAttr = err == 0;
    }
  }
  ~SpawnAttrs() {
    if (haveActions) posix_spawn_file_actions_destroy(&actions);
    if (haveAttr) posix_spawnattr_destroy(&attr);
  }
  // Records the first failure of a posix_spawn_* call (ENOMEM, or EBADF for a bad fd number).
  void Check(int rc) {
    if (rc != 0 && err == 0) err = rc;
  }
};

// posix_spawn reports a failing file action with the same bare errno as a failing exec, so
// everything that can fail for a reason other than exec is done here in the parent first: redirect
// files were opened before Launch (path-open.h), /dev/null is opened here (or an fd table that is
// full would come back as "exec: EMFILE"), a stderr merge into a stdout the child will not have is
// refused, and the cwd is opened and checked for search permission. What is left to fail inside
// posix_spawn is creating the child (EAGAIN: the process table or RLIMIT_NPROC) and exec.
void LaunchPosixSpawn(const LaunchSpec &spec, const CStrings &cs, ChildFds &fds, Launched &out) {
  SpawnAttrs sa;
  if (sa.err) {
    Fail(out, Stage::Spawn, sa.err);
    return;
  }
  int opened[3] = {-1, -1, -1};
  int cwdFd = -1;
  FdGuard localGuard;
  localGuard.fds = {&opened[0], &opened[1], &opened[2], &cwdFd};

  for (int target = 0; target < 3; target++) {
    const StdioSpec &io = spec.io[target];
    switch (io.kind) {
      case StdioKind::Inherit:
        // dup2(fd, fd) as a file action clears FD_CLOEXEC (glibc >= 2.29): Node opens its own
        // 0-2 close-on-exec. Only for an open fd, or posix_spawn would fail with EBADF.
        // No file action can clear O_NONBLOCK, so it is cleared here, on the description the child
        // shares (ClearNonblock).
        if (fcntl(target, F_GETFD) >= 0) {
          ClearNonblock(target);
          sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, target, target));
        }
        break;
      case StdioKind::Closed:
        sa.Check(posix_spawn_file_actions_addclose(&sa.actions, target));
        break;
      case StdioKind::Fd:
        ClearNonblock(fds.src[target]);  // the caller's description, as for 'inherit'
        sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, fds.src[target], target));
        break;
      case StdioKind::Pipe:
      case StdioKind::Path:
      case StdioKind::Terminal:  // the slave as plain fds: never a controlling terminal here (UsesForkPath)
        sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, fds.src[target], target));
        break;
      case StdioKind::Ignore:
        opened[target] = open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (opened[target] < 0 || !LiftAboveStdio(opened[target])) {
          Fail(out, Stage::Open, errno, target);
          return;
        }
        sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, opened[target], target));
        break;
      case StdioKind::MergeStdout: {
        // dup2(1, 2) fails with EBADF when the child has no fd 1: stdout closed, or inherited
        // from a parent whose fd 1 is closed. The fork path reports that as dup2; so do we.
        bool noStdout = spec.io[1].kind == StdioKind::Closed || (spec.io[1].kind == StdioKind::Inherit && fcntl(1, F_GETFD) < 0);
        if (noStdout) {
          Fail(out, Stage::Dup2, EBADF, 2);
          return;
        }
        sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, 1, 2));
        break;
      }
    }
  }

  if (spec.hasCwd) {
    // Above 2, as every source is: with this process's fd 0, 1 or 2 closed, open() hands out that
    // number, which the stdio dup2s above overwrite in the child before its fchdir.
    cwdFd = open(spec.cwd.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cwdFd < 0 || !LiftAboveStdio(cwdFd) || faccessat(cwdFd, ".", X_OK, AT_EACCESS) < 0) {
      Fail(out, Stage::Chdir, errno);
      return;
    }
    sa.Check(posix_spawn_file_actions_addfchdir_np(&sa.actions, cwdFd));
  }
  // The fds above 2, after 0..2 and the fchdir (which may use an fd a target overwrites): the
  // extra fds, the report fd, then the gaps between them closed and everything above. Every
  // source sits above every target (PreparePipesAndFds).
  for (size_t i = 0; i < fds.extraSrc.size(); i++) sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, fds.extraSrc[i], fds.extraTargets[i]));
  if (fds.reportW >= 0) sa.Check(posix_spawn_file_actions_adddup2(&sa.actions, fds.reportW, spec.reportFd));
  int next = 3;
  for (int kept : fds.keep) {
    for (; next < kept; next++) sa.Check(posix_spawn_file_actions_addclose(&sa.actions, next));
    next = kept + 1;
  }
  // glibc's file actions take only fds below the fd limit: with a target at its top (1023 under
  // 1024) there is nothing from `next` up to close, unless fds above the limit were opened before
  // it was lowered, which only close_range (the fork path) can reach.
  if (fds.keep.empty() || next < getdtablesize() || InheritableFrom(next)) sa.Check(posix_spawn_file_actions_addclosefrom_np(&sa.actions, next));

  // Every signal to SIG_DFL in the child. sigfillset leaves out glibc's two internal signals
  // (SIGRTMIN-2 and -1, i.e. 32 and 33), and for signals not in the set glibc's child sets those
  // two to SIG_IGN, which exec keeps: so add them to the set bit by bit, as sigaddset refuses to.
  sigset_t all, none;
  sigfillset(&all);
  for (int sig : {32, 33}) {
    constexpr size_t kBits = 8 * sizeof(all.__val[0]);
    all.__val[(sig - 1) / kBits] |= 1UL << ((sig - 1) % kBits);
  }
  sigemptyset(&none);
  sa.Check(posix_spawnattr_setsigdefault(&sa.attr, &all));
  sa.Check(posix_spawnattr_setsigmask(&sa.attr, &none));
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (spec.setsid) flags |= POSIX_SPAWN_SETSID;
  if (spec.processGroup >= 0) {
    flags |= POSIX_SPAWN_SETPGROUP;
    sa.Check(posix_spawnattr_setpgroup(&sa.attr, spec.processGroup));
  }
  sa.Check(posix_spawnattr_setflags(&sa.attr, flags));
  if (sa.err) {
    // A file action or attribute glibc refused (ENOMEM; EBADF for an fd beyond the table): the
    // child would not be the one asked for, so none is started.
    Fail(out, Stage::Spawn, sa.err);
    return;
  }

  // Walk the candidates as execvp would. A candidate that does not resolve is skipped with the
  // errno the kernel's path walk gave (fstatat walks the same path exec would, relative to the
  // child's cwd), so a miss costs a stat rather than a clone.
  int dirFd = cwdFd >= 0 ? cwdFd : AT_FDCWD;
  bool sawEacces = false;
  int last = ENOENT;
  size_t n = cs.candidateStore.size();
  for (size_t i = 0; i < n; i++) {
    int err;
    struct stat st;
    if (n > 1 && fstatat(dirFd, cs.candidates[i], &st, 0) < 0) {
      err = errno;
    } else {
      pid_t pid;
      do {
        err = posix_spawn(&pid, cs.candidates[i], &sa.actions, &sa.attr, cs.argv.data(), cs.Envp());
      } while (err == EINTR);
      if (err == 0) {
        out.pid = pid;
        return;
      }
      if (err == EAGAIN) {
        // Not exec's error but clone's (RLIMIT_NPROC, or the process table is full): no child
        // was created. Reported as the fork path reports its own clone failing.
        Fail(out, Stage::Fork, err);
        return;
      }
      if (err == EPERM && spec.processGroup > 0) {
        // glibc's child reports a failing setpgid as it reports exec. Joining a group fails with
        // EPERM (no such group in this session), which exec gives only for a set-user-ID program
        // on a nosuid mount or a traced child: taken as the join's.
        Fail(out, Stage::Setpgid, err);
        return;
      }
    }
    if (n == 1 || !ExecErrorContinuesSearch(err)) {
      Fail(out, Stage::Exec, err);
      return;
    }
    if (err == EACCES) sawEacces = true;
    last = err;
  }
  Fail(out, Stage::Exec, sawEacces ? EACCES : last);
}

// ----- fork path -------------------------------------------------------------------------------

void LaunchFork(const LaunchSpec &spec, const CStrings &cs, ChildFds &fds, Launched &out) {
  std::vector<struct rlimit> limits;
  std::vector<int> resources;
  for (const RlimitSetting &r : spec.rlimits) {
    limits.push_back({r.soft, r.hard});
    resources.push_back(r.resource);
  }

  ChildPlan plan{};
  plan.argv = cs.argv.data();
  plan.envp = cs.Envp();
  plan.candidates = cs.candidates.data();
  plan.candidateCount = cs.candidateStore.size();
  plan.cwd = spec.hasCwd ? spec.cwd.c_str() : nullptr;
  for (int target = 0; target < 3; target++) {
    const StdioSpec &io = spec.io[target];
    ChildIo &cio = plan.io[target];
    switch (io.kind) {
      case StdioKind::Inherit: cio.action = IoAction::Keep; break;
      case StdioKind::Ignore:
        cio.action = IoAction::Open;
        cio.path = "/dev/null";
        cio.flags = target == 0 ? O_RDONLY : O_WRONLY;
        break;
      case StdioKind::Closed: cio.action = IoAction::Close; break;
      case StdioKind::Pipe:
      case StdioKind::Fd:
      case StdioKind::Path:
      case StdioKind::Terminal:
        cio.action = IoAction::Dup2;
        cio.fd = fds.src[target];
        break;
      case StdioKind::MergeStdout: cio.action = IoAction::MergeStdout; break;
    }
  }
  plan.setsid = spec.setsid;
  plan.controllingTerminal = spec.controllingTerminal;
  plan.processGroup = spec.processGroup;
  plan.setAffinity = !spec.cpus.empty();
  CPU_ZERO(&plan.cpus);
  for (int cpu : spec.cpus) CPU_SET(cpu, &plan.cpus);  // each < CPU_SETSIZE (normalize.ts)
  plan.setUmask = spec.hasUmask;
  plan.umask = spec.umask;
  plan.groupsAction = spec.hasGroups ? GroupsAction::Set : (spec.hasUid || spec.hasGid ? GroupsAction::Clear : GroupsAction::Keep);
  plan.groups = spec.groups.data();
  plan.groupCount = spec.groups.size();
  plan.setGid = spec.hasGid;
  plan.gid = spec.gid;
  plan.setUid = spec.hasUid;
  plan.uid = spec.uid;
  plan.deathSignal = spec.deathSignal;
  plan.parentPid = getpid();
  plan.limits = limits.data();
  plan.limitResources = resources.data();
  plan.limitCount = limits.size();
  plan.reportFd = fds.reportW;
  plan.reportTarget = spec.reportFd;
  plan.extraTargets = fds.extraTargets.data();
  plan.extraSrc = fds.extraSrc.data();
  plan.extraCount = fds.extraSrc.size();
  plan.keep = fds.keep.data();
  plan.keepCount = fds.keep.size();
  memset(&plan.defaultAction, 0, sizeof plan.defaultAction);
  plan.defaultAction.sa_handler = SIG_DFL;
  sigemptyset(&plan.defaultAction.sa_mask);
  sigemptyset(&plan.emptyMask);
  ChildReport report{};
  plan.report = &report;

  // The child's stack, lent from this frame: the parent thread is suspended (CLONE_VFORK) for as
  // long as the child uses it.
  constexpr size_t kStackSize = 64 * 1024;
  alignas(64) char stack[kStackSize];

  // The pidfd, when wanted, comes with the clone (CLONE_PIDFD, close-on-exec, Linux 5.2): one
  // system call fewer than pidfd_open afterwards. A kernel without it refuses the flag (EINVAL),
  // and Launch opens the pidfd the other way.
  static std::atomic<bool> clonePidfd{true};
  int pidfd = -1;
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
  bool withPidfd = spec.wantPidfd && clonePidfd.load(std::memory_order_relaxed);

  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(ChildMain, stack + kStackSize, flags | (withPidfd ? CLONE_PIDFD : 0), &plan, &pidfd);
  if (pid < 0 && withPidfd && errno == EINVAL) {
    clonePidfd.store(false, std::memory_order_relaxed);
    pidfd = -1;
    pid = clone(ChildMain, stack + kStackSize, flags, &plan);
  }
  int cloneErr = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    // EMFILE, ENFILE: no fd for the pidfd (a clone makes no other fd). No child exists: one that
    // could not be tracked is not started, rather than started and killed.
    bool noPidfd = withPidfd && (cloneErr == EMFILE || cloneErr == ENFILE);
    Fail(out, noPidfd ? Stage::Spawn : Stage::Fork, cloneErr);
    return;
  }
  out.pid = pid;
  out.pidfd = pidfd;
  // Back here once the child exec'd (or exited): a report says what failed before or in exec.
  if (report.magic != kChildReportMagic) return;
  CloseFd(out.pidfd);
  if (report.stage > static_cast<int32_t>(Stage::None) && report.stage < kStageCount) {
    Fail(out, static_cast<Stage>(report.stage), report.err, report.detail);
  } else {
    Fail(out, Stage::Spawn, EPROTO);  // cannot happen (ChildFail writes only Stage values): not left to run
    kill(pid, SIGKILL);
  }
  // Reaped here, for its status and rusage; unless the kernel has reaped it already (this process
  // ignores SIGCHLD): then there is neither, and the result says what failed as posix_spawn's does.
  out.reaped = Reap(pid, out.status, out.usage);
}

}  // namespace

// A controlling terminal takes the fork path. posix_spawn could give one only by opening the
// slave by name as fd 0 in its child, after POSIX_SPAWN_SETSID (glibc 2.36 runs setsid before the
// file actions): an open in the child whose failure comes back as exec's bare errno, and an
// ordering glibc does not document. The fork path's child does it with TIOCSCTTY on the slave the
// parent opened, and reports a failure as stage terminal. (A terminal implies setsid, which
// takes the fork path under 'auto' anyway; normalize.ts refuses a forced 'posix_spawn'.)
bool UsesForkPath(const LaunchSpec &spec) {
  if (spec.launcher != LauncherChoice::Auto) return spec.launcher == LauncherChoice::Fork;
  bool needsFork = spec.deathSignal || spec.setsid || !spec.rlimits.empty() || spec.hasUid || spec.hasGid ||
                   spec.hasGroups || spec.hasUmask || !spec.cpus.empty() || spec.controllingTerminal;
  // When the kernel reaps this process's children itself (SIGCHLD ignored), a posix_spawn child
  // that exits at once can be gone before its pidfd is opened, and its status with it; the fork
  // path's pidfd comes with the clone. So 'auto' takes the fork path then, whenever a pidfd is
  // wanted (the result's launcher says so, also for a launch whose { path } opens failed).
  return needsFork || (spec.wantPidfd && ChildrenAutoReaped());
}

Launched Launch(const LaunchSpec &spec) {
  Launched out;
  out.usedFork = UsesForkPath(spec);
  {
    ChildFds fds;
    FdGuard guard;  // the child's pipe ends and lifted fds: closed once the child has its copies
    if (PreparePipesAndFds(spec, out, fds, guard)) {
      CStrings cs(spec);
      if (out.usedFork)
        LaunchFork(spec, cs, fds, out);
      else
        LaunchPosixSpawn(spec, cs, fds, out);
    }
  }
  if (out.stage == Stage::None && spec.wantPidfd && out.pidfd < 0) {
    out.pidfd = PidfdOpen(out.pid);
    if (out.pidfd < 0 && errno == ESRCH) {
      // posix_spawn returned, so the program was exec'd; it has already exited and been reaped by
      // someone else (Launched::gone). Nothing to kill or reap: its pid may be reused already.
      out.pidfd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
      if (out.pidfd >= 0)
        out.gone = true;
      else
        Fail(out, Stage::Spawn, errno);
    } else if (out.pidfd < 0) {
      // Without a pidfd the child cannot be waited for safely: end it now rather than lose it.
      Fail(out, Stage::Spawn, errno);
      kill(out.pid, SIGKILL);
      Reap(out.pid, out.status, out.usage);
      out.reaped = true;
    }
  }
  // Measured, the launch runs the measuring helper, not the program (whose own exec failure comes
  // in the helper's report): an exec that failed here is the helper's, unless it was the argv and
  // environment it carries for the program that were too big (E2BIG: the program's own failure).
  if (spec.measure && out.stage == Stage::Exec && out.err != E2BIG) out.stage = Stage::Helper;
  if (out.stage != Stage::None) {
    CloseFd(out.stdinW);
    CloseFd(out.stdoutR);
    CloseFd(out.stderrR);
    CloseFd(out.reportR);
    CloseFd(out.targetSlot);
  }
  return out;
}

}  // namespace th
