// The async waiter: the same launcher, watched from the environment's libuv loop. The child's
// exit is a pidfd becoming readable (uv_poll), its pipes are uv_polls, the deadline and the kill
// escalation are uv_timers: nothing runs on the libuv threadpool and no thread waits per child
// (one process-wide thread, the exit clock, stamps when each pidfd became readable, so that a
// busy loop does not lengthen durationMs). When the pidfd fires, the child is reaped with wait4 for its status and rusage, exactly as the
// sync path does (CollectExit), and the run's facts go to the JS callback.
//
// Everything here that calls into JavaScript runs from a libuv callback, so it goes through
// js-call.h: a throwing listener is an uncaught exception, and an environment that is shutting
// down (a worker exiting or terminated at any moment) is never called into. Its children are
// still killed and reaped, from its cleanup hook.
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <uv.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>
#include <algorithm>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#include "addon.h"
#include "exit-clock.h"
#include "js-call.h"
#include "launch-thread.h"
#include "path-open.h"

namespace th {
namespace {

class AsyncChild;
class ChildHandle;

// How long an environment's teardown waits, in all, for its SIGKILLed children to exit before
// it hands those left to the reaper thread (AsyncChild::Abandon).
constexpr double kAbandonWaitMs = 1000;
// Chunks handed to a stream's reader per turn of the loop, while the child runs (DrainStream).
constexpr int kChunksPerTurn = 32;
// How long the process's exit waits for launches under way on the launcher threads (a launch ends
// once its child has exec'd: well under a millisecond, unless its exec is stuck on a file system).
constexpr double kExitLaunchWaitMs = 1000;
void DetachHandle(ChildHandle *handle);
void OnLaunchesBack(uv_async_t *async);

// The children of one Node environment (main thread or worker), for its teardown. Lives until
// the environment's cleanup hook has run and the last child's handles have closed.
struct EnvChildren {
  std::set<AsyncChild *> live;  // running (or opening their { path } targets)
  size_t alive = 0;             // AsyncChild objects not yet deleted
  napi_async_cleanup_hook_handle hook = nullptr;
  bool tearingDown = false;
  napi_ref numbers = nullptr;  // the results' Float64Array (Numbers); freed with the environment

  // The environment's result array, into which every child's numbers are written as it is
  // handed over (a fresh ArrayBuffer per child was a V8 allocation on every exit): whoever gets
  // it reads it at once (async.ts's finish, before anything else runs), as the next result
  // overwrites it. One whose buffer was detached (transferred away) is replaced. Null when N-API
  // refused (the environment is going away).
  double *Numbers(napi_env env, napi_value *out) {
    if (numbers && napi_get_reference_value(env, numbers, out) == napi_ok && *out) {
      if (double *data = Float64Elements(env, *out, kResultLength)) return data;
    }
    void *data = nullptr;
    napi_value buffer;
    if (napi_create_arraybuffer(env, kResultLength * sizeof(double), &data, &buffer) != napi_ok ||
        napi_create_typedarray(env, napi_float64_array, kResultLength, buffer, 0, out) != napi_ok)
      return nullptr;
    if (numbers) napi_delete_reference(env, numbers);
    if (napi_create_reference(env, *out, 1, &numbers) != napi_ok) numbers = nullptr;
    return static_cast<double *>(data);
  }

  // Launches on the launcher thread (launch-thread.h). The thread gives each job back into
  // `launchedBack` and wakes the loop through `launchAsync`; `launching` counts those not back
  // yet, for the teardown, which waits for them. `awaiting`, the loop's own count of jobs not yet
  // taken, holds the loop alive meanwhile (launchAsync is referenced only then).
  std::mutex launchMutex;
  std::condition_variable launchBack;
  std::vector<LaunchJob *> launchedBack;
  size_t launching = 0;
  size_t awaiting = 0;
  uv_async_t launchAsync{};
  bool launchAsyncOpen = false;
  // Launches waiting for their turn on the launcher threads (LaunchOffLoopIfBusy), in call order.
  std::deque<AsyncChild *> parked;

  // launchAsync, made on the loop's thread when the first launch leaves it. It counts as a child
  // for the teardown: the environment goes once it is closed.
  bool OpenLaunchAsync(uv_loop_t *loop) {
    if (launchAsyncOpen) return true;
    if (uv_async_init(loop, &launchAsync, OnLaunchesBack) != 0) return false;
    launchAsync.data = this;
    uv_unref(reinterpret_cast<uv_handle_t *>(&launchAsync));
    launchAsyncOpen = true;
    alive++;
    return true;
  }
  static void OnLaunchAsyncClosed(uv_handle_t *h) {
    EnvChildren *self = static_cast<EnvChildren *>(h->data);
    self->alive--;
    self->MaybeFinishTeardown();
  }

  // The hook is done once no child is left: tell Node, and go.
  void MaybeFinishTeardown() {
    if (!tearingDown || alive > 0) return;
    napi_remove_async_cleanup_hook(hook);
    delete this;
  }
};

// killOnExit: the running children to kill when the process exits, whichever environment
// started them. Killed from an atexit handler, which runs on every exit through exit(3):
// process.exit(), the end of the event loop, an uncaught exception; whatever 'exit' listeners
// did or threw before it. (The fork path also has PR_SET_PDEATHSIG, for a parent SIGKILLed.)
struct ExitKillList {
  std::mutex mutex;
  std::map<const void *, ChildRef> children;
};
ExitKillList &KillOnExit() {
  static ExitKillList *list = new ExitKillList();  // never destroyed: used from atexit
  return *list;
}
void KillAllAtExit() {
  // A launch under way on a launcher thread ends with its child on the list (OnLaunchedOffLoop).
  HoldLaunchesForExit(kExitLaunchWaitMs);
  ExitKillList &list = KillOnExit();
  if (!list.mutex.try_lock()) return;  // another thread is mid-update while the process exits
  for (const auto &entry : list.children) SignalChild(entry.second, SIGKILL);
  list.mutex.unlock();
}

class AsyncChild {
 public:
  AsyncChild(napi_env env, EnvChildren *owner) : env_(env), owner_(owner) {}

  enum class Started { Running, Failed };

  // Converts the spec (may throw: we are inside the JS call) and starts the launch. Failed: the
  // launch failed at once, the result is ready (Raw). Running: the child runs, or its { path }
  // targets are being opened; the result comes through onDone.
  Started Start(Napi::Object spec, Napi::Value numbers, Napi::Value input, Napi::Value onDone, Napi::Value onData,
                Napi::Value onStdin, Napi::Value onWritable, bool wantHandle) {
    size_t maxBuffer = SIZE_MAX;
    ParseSpec(Napi::Env(env_), spec, numbers, input, spec_, opts_, maxBuffer);
    // This waiter watches the child's pidfd for its exit, always.
    spec_.wantPidfd = true;
    terminal_ = spec_.io[0].kind == StdioKind::Terminal;
    outcome_.out.limit = maxBuffer;
    outcome_.err.limit = maxBuffer;
    // Before anything is started: a failure here leaves nothing running.
    if (!onDone_.Hold(env_, onDone, "tileharness:child")) throw Napi::Error::New(Napi::Env(env_), "spawnAsync: cannot hold the callback");
    onData_.Hold(env_, onData, "tileharness:child");
    onStdin_.Hold(env_, onStdin, "tileharness:child");
    onWritable_.Hold(env_, onWritable, "tileharness:child");
    start_ = NowNs();
    uv_loop_t *loop = nullptr;
    napi_get_uv_event_loop(env_, &loop);
    loop_ = loop;
    std::unique_ptr<PathOpener> opener;
    if (PathOpener::Needed(spec_)) {
      if (HoldCallerFds()) opener = PathOpener::Start(spec_, child_);
      if (!opener) {
        ReleaseCallerFds();
        SettleFailedLaunch(child_, outcome_);
        return Started::Failed;
      }
    } else if (!LaunchOffLoopIfBusy(wantHandle) && !LaunchNow()) {
      SettleFailedLaunch(child_, outcome_);
      return Started::Failed;
    }

    // From here on the object is owned by its uv handles.
    owner_->alive++;
    owner_->live.insert(this);
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    uv_timer_init(loop, &killTimer_);
    killTimer_.data = this;
    handles_ += 2;
    // uv timers count from the loop's cached time, which can lag: refresh it so that a deadline
    // is never earlier than `timeout` after the call.
    uv_update_time(loop);
    // A measured child's deadline is armed when its target exists (BeginStart, EndStart); with
    // { path } targets, the opening counts first, as on the sync path.
    if (opts_.timeoutMs > 0 && (opener || !spec_.measure) && !launching_) uv_timer_start(&timer_, OnDeadline, Ms(opts_.timeoutMs), 0);
    if (opener) {
      opener_ = std::move(opener);
      Watch(&openPoll_, opener_->fd(), UV_READABLE, OnOpened);
      openPolling_ = true;
    } else if (launching_) {
      // Watched once the launcher thread gives it back (AdoptLaunch).
    } else {
      WatchChild();
    }
    return Started::Running;
  }

  // The run's facts into the environment's result array (EnvChildren::Numbers) and its buffers:
  // [numbers, buffers], or false when N-API refused (the environment is going away).
  bool Result(napi_value out[2]) {
    double *data = owner_->Numbers(env_, &out[0]);
    if (!data) return false;
    WriteNumbers(data, child_, outcome_, start_, NowNs());
    out[1] = TakeBuffers(env_, outcome_);
    return out[1] != nullptr;
  }

  // The JS handle stays alive (strong reference) while the child runs, and is detached when it
  // ends, so a late kill() is a no-op rather than a use-after-free.
  void Attach(ChildHandle *handle, Napi::Object object) {
    handle_ = handle;
    if (napi_create_reference(env_, object, 1, &handleRef_) != napi_ok) handleRef_ = nullptr;
  }
  // The child's pid; with measure, the target's (the process running the program), 0 until the
  // helper has reported it (or when it never ran).
  pid_t pid() const { return spec_.measure ? child_.targetPid : child_.pid; }

  // The handle's pid, asked for from JavaScript: a measured child whose helper has not reported
  // yet is waited for here, as a sync launch waits (startChild's caller reads child.pid at once;
  // spawnChild never does, and its loop is not held up). Only a start is taken here: anything
  // else the report says is left for the loop to settle, which calls into JavaScript.
  pid_t AwaitPid() {
    TakeStart(startDeadlineNs_);
    return pid();
  }

  // The helper's first report, if it comes by deadlineNs (NowNs(): only if it is there now). A
  // start is acted on here (EndStart); anything else is kept and settled from the loop, at once.
  void TakeStart(double deadlineNs) {
    if (!starting_ || stashed_) return;
    int rc = PollReadableUntil(child_.reportR, deadlineNs);
    if (rc == 1 && ReadHelperReport(child_.reportR, stash_)) {
      if (stash_.kind == TH_REPORT_STARTED) {
        EndStart(1, &stash_);
      } else {
        stashed_ = true;  // settled from the loop, at once
        uv_timer_start(&killTimer_, OnHelperSilent, 0, 0);
      }
    }
  }

  // kill(signal): the signal now, and SIGKILL after forceKillAfterDelay when it is gentler.
  // While the { path } targets are still being opened there is no child yet: the opening is
  // given up and the result says so.
  bool Kill(int sig) {
    if (done_ || exited_) return false;
    if (opener_) {
      if (sig == 0) return true;
      opener_->GiveUp(child_, ECANCELED);
      DropOpener();
      SettleFailedLaunch(child_, outcome_);
      Finish();
      return true;
    }
    // A measured child whose helper has reported while the loop was busy: the report is taken
    // now, so that a target that has exited since is seen to have (kill() is then false, as for
    // an unmeasured child), and one whose launch failed is not killed.
    TakeStart(NowNs());
    if (done_ || stashed_) return false;
    // kill(0), the probe, answers for the target as `pid` does: it waits for the helper's report
    // (a target that never ran, a program not found, is no child that runs: false).
    if (sig == 0 && starting_) {
      TakeStart(startDeadlineNs_);
      if (done_ || stashed_) return false;
    }
    // A measured child whose target is not reported yet: its signals wait for it (the helper is
    // not theirs to get), and go in order the moment it is.
    if (starting_) {
      if (sig != 0) pendingSignals_.push_back(sig);
      return true;
    }
    // kill() is true only when the signal reaches a child that is still running: one that has
    // exited and waits to be reaped was not killed by it (and its result will not say aborted).
    if (HasExited(ref_)) {
      ResumeHelper(child_);  // measured: a helper its gone target stopped still owes its report
      return false;
    }
    Signal(sig);
    // kill()'s own escalation, on a timer of its own: the deadline keeps running beside it, and
    // whichever comes first acts (the result says timedOut only when the deadline did).
    if (sig != SIGKILL && sig != 0 && opts_.forceKillAfterMs > 0 && !killEscalating_) {
      killEscalating_ = true;
      uv_update_time(loop_);
      uv_timer_start(&killTimer_, OnKillEscalation, Ms(opts_.forceKillAfterMs), 0);
    }
    return true;
  }

  // startChild's terminal: writes `data` to the master (the child's input). 1: all written now;
  // 0: the rest is kept and written as the terminal takes it, and onWritable() is called once it
  // is all out (the Writable's callback waits for that: the backpressure); -1: not written, the
  // terminal is gone (the child exited and its last slave fd closed, or the result is settled).
  int WriteTerminal(const char *data, size_t len) {
    if (done_ || !terminal_ || child_.stdinW < 0 || termOffset_ < termPending_.size()) return -1;
    if (len == 0) return 1;  // nothing (a detached buffer reads as empty): nothing to keep
    if (typingInput_) {
      // `input` is still being typed: this follows it (OnStdin starts it once the input is out).
      termPending_.assign(data, len);
      termOffset_ = 0;
      return 0;
    }
    size_t offset = 0;
    if (PumpInput(child_.stdinW, data, len, offset)) return offset == len ? 1 : -1;
    termPending_.assign(data + offset, len - offset);
    termOffset_ = 0;
    uv_poll_start(&inPoll_, UV_WRITABLE, OnTerminalWritable);
    return 0;
  }

  // startChild's terminal: a new size (TIOCSWINSZ on the master); the kernel sends SIGWINCH to
  // the terminal's foreground process group when the size changes. False once the child exited.
  bool ResizeTerminal(unsigned short columns, unsigned short rows) {
    if (done_ || exited_ || !terminal_) return false;
    int fd = child_.stdinW >= 0 ? child_.stdinW : child_.stdoutR;
    struct winsize size = {rows, columns, 0, 0};
    return fd >= 0 && ioctl(fd, TIOCSWINSZ, &size) == 0;
  }

  // Teardown of the environment (worker exit, process exit), in two passes over its children so
  // that they die together: Doom() kills each running one, then Abandon() reaps each, waiting for
  // its pidfd at most until deadlineNs (shared by all). One not reaped by then (stuck in the
  // kernel, or traced by another process) goes to the reaper thread: a teardown never hangs on a
  // child. No JS.
  void Doom() {
    LeaveKillList();
    if (!done_ && !opener_ && !exited_) SignalChild(ref_, SIGKILL);
  }
  void Abandon(double deadlineNs) {
    LeaveKillList();
    if (!done_) {
      done_ = true;
      if (opener_) {
        DropOpener();
      } else if (!reaped_ && !child_.gone) {
        if (!exited_) SignalChild(ref_, SIGKILL);
        int status;
        struct rusage usage;
        ReapResult r = TryReap(child_.pid, status, usage);
        if (r == ReapResult::NotYet && child_.pidfd >= 0 && PollReadableUntil(child_.pidfd, deadlineNs) == 1)
          r = TryReap(child_.pid, status, usage);
        if (r == ReapResult::NotYet) {
          if (child_.pidfd >= 0) {
            // The reaper watches the pidfd from now on: the poll handle goes, the fd stays open.
            uv_close(reinterpret_cast<uv_handle_t *>(&pidPoll_), OnClosed);
            HandToReaper(child_.pid, child_.pidfd);
            child_.pidfd = -1;
          } else {
            HandToReaper(child_.pid, -1);
          }
        }
      }
    }
    onDone_.Reset();
    onData_.Reset();
    onStdin_.Reset();
    onWritable_.Reset();
    Detach();
    CloseAll();
  }

 private:
  // Whole milliseconds, rounded up, plus one: libuv's loop clock is truncated to the millisecond,
  // so a timer started at 10.9 ms for 150 ms would fire at 160 ms, 0.9 ms early. A timer may fire
  // late, never early.
  static uint64_t Ms(double ms) { return (ms < 1 ? 1 : static_cast<uint64_t>(ms + 0.999999)) + 1; }

  void Watch(uv_poll_t *poll, int fd, int events, uv_poll_cb cb) {
    uv_poll_init(loop_, poll, fd);
    poll->data = this;
    handles_++;
    uv_poll_start(poll, events, cb);
  }

  // Launches the opened spec. A measured child's helper reports its target once the target has
  // exec'd (BeginStart watches for that on the loop).
  bool LaunchNow() {
    child_ = Launch(spec_);
    if (child_.stage == Stage::Chdir && job_.pinnedCwd) {
      // The directory of the call (LaunchOffLoopIfBusy) cannot be entered now (the fd limit,
      // removed since): made without it, as it would have been made at the call.
      UnpinCwd();
      start_ = NowNs();
      child_ = Launch(spec_);
    }
    CloseOpenedPaths(spec_);
    ReleaseCallerFds();
    return child_.stage == Stage::None;
  }

  // With other children of this environment in flight, the launch goes to the launcher thread
  // (launch-thread.h), and the loop gets on with theirs meanwhile; alone, it is made here, where
  // it costs no hand-over between threads (a sequence of awaited spawns waits for each anyway).
  // Only a child nothing in JavaScript can reach before its result: no handle (so no kill(),
  // abort, pid or stream), no measuring helper, no terminal. The caller's fds it is given are
  // copied first, as for a { path } opening: the call returns before the launch. True when the
  // launch has left; false: launch here.
  bool LaunchOffLoopIfBusy(bool wantHandle) {
    if (wantHandle || spec_.measure || terminal_ || owner_->live.empty() || owner_->tearingDown) return false;
    // A caller unlike the launcher threads is launched here, now, with its traits of the call: a
    // launch declined or waiting, made here later, would have this thread's by then.
    job_.caller = CurrentThreadTraits();
    if (!job_.caller.read || !LaunchersLike(job_.caller)) return false;
    if (!owner_->OpenLaunchAsync(loop_)) return false;
    // The caller's own fds again, and no cwd, for a launch made here after all.
    StdioSpec io[3] = {spec_.io[0], spec_.io[1], spec_.io[2]};
    std::vector<ExtraFd> extraFds = spec_.extraFds;
    auto restore = [&] {
      ReleaseCallerFds();
      for (int i = 0; i < 3; i++) spec_.io[i] = io[i];
      spec_.extraFds = extraFds;
      UnpinCwd();
      child_ = Launched();
    };
    // With no cwd the child would be in whatever directory the process is in by the launch (and
    // find there what a relative PATH entry names): it is given the directory of the call.
    job_.pinnedCwd = !spec_.hasCwd;
    if (job_.pinnedCwd) {
      char here[PATH_MAX];
      if (!getcwd(here, sizeof here)) return false;  // gone, or too long to name: inherited, here
      spec_.hasCwd = true;
      spec_.cwd = here;
    }
    if (!HoldCallerFds()) {
      restore();
      return false;
    }
    job_.spec = &spec_;
    job_.closeAfter = &held_;
    job_.context = this;
    job_.done = OnLaunchedOffLoop;
    // As many launches of an environment on the launcher threads at once (queued, under way, or
    // back and not yet taken) as there are threads; more wait here, each sent when one is taken
    // back. So children start no faster than the loop takes them: a burst of a hundred started at
    // once, on two CPUs, held the loop from its timers for 2.5-4 ms at the 99th percentile, where
    // launches on the loop itself had held it for 1.5 ms (row 8 of bench/RESULTS.md).
    if (owner_->awaiting >= LaunchConcurrency()) {
      // Copies of the caller's fds are not kept waiting here (a burst would take the fd table).
      if (!held_.empty()) {
        restore();
        return false;
      }
      owner_->live.insert(this);
      owner_->parked.push_back(this);
      launching_ = true;
      return true;
    }
    // Among the environment's children before the job can run: nothing that may throw comes after.
    owner_->live.insert(this);
    if (!SubmitLaunch()) {
      owner_->live.erase(this);
      restore();
      return false;
    }
    launching_ = true;
    return true;
  }

  void UnpinCwd() {
    if (!job_.pinnedCwd) return;
    job_.pinnedCwd = false;
    spec_.hasCwd = false;
    spec_.cwd.clear();
  }

  // job_ to the launcher threads; false when they cannot take it.
  bool SubmitLaunch() {
    {
      std::lock_guard<std::mutex> lock(owner_->launchMutex);
      owner_->launching++;
    }
    if (!LaunchOffLoop(&job_)) {
      std::lock_guard<std::mutex> lock(owner_->launchMutex);
      owner_->launching--;
      return false;
    }
    owner_->awaiting++;
    uv_ref(reinterpret_cast<uv_handle_t *>(&owner_->launchAsync));
    return true;
  }

 public:
  // A parked launch (LaunchOffLoopIfBusy) whose turn has come: sent, or made here when the
  // launcher threads cannot take it. In a teardown nothing is started.
  void LaunchParked(bool tearingDown) {
    if (tearingDown) {
      launching_ = false;
      done_ = true;
      return;
    }
    if (!SubmitLaunch()) TakeLaunch(false, true);
  }

 private:

  // On the launcher thread: the job is back to the environment's loop (OnLaunchesBack). Only the
  // environment's launch state is touched here, under its lock.
  static void OnLaunchedOffLoop(LaunchJob *job) {
    AsyncChild *self = static_cast<AsyncChild *>(job->context);
    EnvChildren *owner = self->owner_;
    // killOnExit from the moment the child exists: the process may exit before the loop takes it
    // (KillAllAtExit waits for this). WatchChild puts it there again, the same entry.
    if (!job->declined && job->result.stage == Stage::None && self->spec_.deathSignal) {
      std::lock_guard<std::mutex> lock(KillOnExit().mutex);
      KillOnExit().children[self] = SignalTarget(job->result, self->opts_.group);
    }
    std::lock_guard<std::mutex> lock(owner->launchMutex);
    owner->launchedBack.push_back(job);
    owner->launching--;
    uv_async_send(&owner->launchAsync);
    owner->launchBack.notify_all();
  }

 public:
  // On the loop's thread, the launch is back: the child is watched as one launched here would
  // have been, and a deadline that came meanwhile acts now. In the environment's teardown
  // (tearingDown) nothing calls into JavaScript: a child that runs is watched, for the teardown
  // to kill and reap; a launch that failed has no result to give.
  void AdoptLaunch(bool tearingDown) {
    // The launcher thread is not like this one (its nice value changed since it was made, by
    // renice on its thread id, say): launched here, as if it had never been queued.
    // Failed at the cwd given it (an fd limit reached by the open of it, the directory removed
    // since the call): made here without it, as it would have been.
    if (job_.retryHere) UnpinCwd();
    TakeLaunch(tearingDown, job_.declined || job_.retryHere);
  }

  // The launch's end on the loop: the launcher thread's (`here` false), or made here now. In a
  // teardown nothing is started, and a launch that failed has no result to give: done.
  void TakeLaunch(bool tearingDown, bool here) {
    launching_ = false;
    double endNs = job_.endNs;
    if (here) {
      if (tearingDown) {
        done_ = true;
        return;
      }
      start_ = NowNs();
      LaunchNow();
      endNs = NowNs();
    } else {
      child_ = job_.result;
      exitKey_ = job_.exitKey;
      start_ = job_.startNs;  // durationMs and the deadline count from the launch, not the queue
    }
    if (child_.stage != Stage::None) {
      if (tearingDown) {
        done_ = true;
        return;
      }
      SettleFailedLaunch(child_, outcome_);
      Finish();
      return;
    }
    WatchChild();
    // The deadline, from the launch's end as on the loop (a loop busy since has used some of it).
    if (!tearingDown && opts_.timeoutMs > 0) {
      uv_update_time(loop_);
      uv_timer_start(&timer_, OnDeadline, Ms(std::max(0.0, opts_.timeoutMs - (NowNs() - endNs) / 1e6)), 0);
    }
  }

 private:

  // With { path } targets the launch waits for their opens, and the caller's JavaScript runs on
  // meanwhile: it may close the fds it gave (stdio fds, `fds` entries) as soon as the call has
  // returned, as child_process allows, and open others that get the same numbers. The child is
  // given the files as they were at the call: copies, taken now, closed once it is launched (or
  // the launch is given up). False when a copy cannot be made: the launch fails as it would have
  // (stage dup2, the errno, the child fd).
  bool HoldCallerFds() {
    std::vector<std::pair<int, int>> copies;  // the caller's fd, its copy: one copy per fd
    for (int target = 0; target < 3; target++)
      if (spec_.io[target].kind == StdioKind::Fd && !HoldCopy(spec_.io[target].fd, target, copies)) return false;
    for (ExtraFd &e : spec_.extraFds)
      if (!HoldCopy(e.fd, e.target, copies)) return false;
    return true;
  }
  bool HoldCopy(int &fd, int target, std::vector<std::pair<int, int>> &copies) {
    for (const auto &c : copies) {
      if (c.first == fd) {
        fd = c.second;
        return true;
      }
    }
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) {
      child_.usedFork = UsesForkPath(spec_);
      child_.stage = Stage::Dup2;
      child_.err = errno;
      child_.detail = target;
      return false;
    }
    held_.push_back(copy);
    copies.emplace_back(fd, copy);
    fd = copy;
    return true;
  }
  void ReleaseCallerFds() {
    for (int &fd : held_) CloseFd(fd);
    held_.clear();
  }

  // measure: the helper's STARTED report is watched for on the loop, not waited for here (the
  // helper's exec, its fork and the target's exec: most of a millisecond the loop would be held
  // for every measured child). Until it comes, signals wait (Kill), the deadline is not armed,
  // and pid is 0; the helper's pidfd and the pipes are watched meanwhile as for any child, and
  // kHelperStartMs bounds the wait as on the sync path.
  void BeginStart() {
    starting_ = true;
    startDeadlineNs_ = NowNs() + kHelperStartMs * 1e6;
    Watch(&startPoll_, child_.reportR, UV_READABLE, OnHelperReport);
    uv_update_time(loop_);
    uv_timer_start(&killTimer_, OnHelperSilent, Ms(kHelperStartMs), 0);  // kill() is not armed yet
  }

  static void OnHelperReport(uv_poll_t *p, int status, int) {
    static_cast<AsyncChild *>(p->data)->EndStart(status < 0 ? -1 : 1);
  }
  // The bound on the helper's first report has passed, or a stashed report is to be settled. A
  // report that came in time may be waiting unread: a loop held up past the bound (by JavaScript,
  // or by many launches on a loaded machine) runs its timers before it polls. Such a report is
  // taken, as the poll would have taken it; only a helper that has said nothing is silent.
  static void OnHelperSilent(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (!self->stashed_ && self->starting_ && PollReadableUntil(self->child_.reportR, NowNs()) == 1) {
      self->EndStart(1);
      return;
    }
    self->EndStart(0);
  }

  // The helper's first report (`given`, else read now when rc is 1) acted on. True when the
  // target runs: signals now go to it, the deadline is armed, waiting signals are sent. Else the
  // launch failed (the helper is reaped, the stage says why) and the result is settled.
  bool EndStart(int rc, const th_helper_report *given = nullptr) {
    if (done_) return false;
    if (!starting_) return true;
    StopStartPoll();
    uv_timer_stop(&killTimer_);
    th_helper_report read;
    const th_helper_report *report = given;
    if (stashed_) report = &stash_;
    else if (!report && rc == 1 && ReadHelperReport(child_.reportR, read)) report = &read;
    stashed_ = false;
    if (!AdoptHelperStart(child_, rc, report, false)) {
      SettleFailedLaunch(child_, outcome_);
      Finish();
      return false;
    }
    ref_ = SignalTarget(child_, opts_.group);
    if (onKillList_) {
      std::lock_guard<std::mutex> lock(KillOnExit().mutex);
      KillOnExit().children[this] = ref_;
    }
    if (opts_.timeoutMs > 0 && !exited_) {
      uv_update_time(loop_);
      uv_timer_start(&timer_, OnDeadline, Ms(std::max(0.0, opts_.timeoutMs - opensMs_)), 0);
    }
    std::vector<int> signals;
    signals.swap(pendingSignals_);
    for (int sig : signals) Kill(sig);
    return true;
  }

  // The start is over (taken, or the child is being settled): its poll goes.
  void StopStartPoll() {
    if (!starting_) return;
    starting_ = false;
    uv_close(reinterpret_cast<uv_handle_t *>(&startPoll_), OnClosed);
  }

  void WatchChild() {
    // measure, before the target is reported: the helper (SignalTarget), which only teardown and
    // killOnExit signal; kill() waits for the target (Kill).
    ref_ = SignalTarget(child_, opts_.group);
    if (spec_.deathSignal) {
      std::lock_guard<std::mutex> lock(KillOnExit().mutex);
      KillOnExit().children[this] = ref_;
      onKillList_ = true;
    }
    Watch(&pidPoll_, child_.pidfd, UV_READABLE, OnPidfd);
    // The exit clock is for the lifetime of an unmeasured child; a measured one's is its helper's
    // figure, clocked beside the target, so its exit needs no stamp (and costs no thread wake-up).
    if (!spec_.measure && exitKey_ == 0) exitKey_ = WatchExit(child_.pidfd);
    if (child_.stdoutR >= 0) Watch(&outPoll_, child_.stdoutR, UV_READABLE, OnStdout);
    if (child_.stderrR >= 0) Watch(&errPoll_, child_.stderrR, UV_READABLE, OnStderr);
    // measure: the wait for the helper's report begins before anything below can call into
    // JavaScript. Handing stdin over does, and from the loop (a launch after { path } opens) its
    // callback runs the nextTick queue too: a kill() or an abort there found no start under way
    // and signalled the helper itself, whose report then said the launch had failed (EPROTO).
    if (spec_.measure) BeginStart();
    if (child_.stdinW >= 0) {
      if (!opts_.input.empty()) {
        typingInput_ = terminal_;
        Watch(&inPoll_, child_.stdinW, UV_WRITABLE, OnStdin);
      } else if (terminal_) {
        // The master's copy, for WriteTerminal: watched only while a write waits for room.
        uv_poll_init(loop_, &inPoll_, child_.stdinW);
        inPoll_.data = this;
        handles_++;
      } else if (!HandOverStdin()) {
        CloseFd(child_.stdinW);
      }
    }
  }

  // Stops watching the opener's eventfd and lets the opener go (cancelling it if it has not
  // finished): its fd is closed by then, so it must leave the loop first.
  void DropOpener() {
    if (openPolling_) {
      openPolling_ = false;
      uv_close(reinterpret_cast<uv_handle_t *>(&openPoll_), OnClosed);
    }
    opener_.reset();
  }

  static void OnOpened(uv_poll_t *p, int, int) {
    AsyncChild *self = static_cast<AsyncChild *>(p->data);
    if (self->done_ || !self->opener_) return;
    bool opened = self->opener_->Take(self->spec_, self->child_);
    self->DropOpener();
    if (opened) {
      double launchNs = NowNs();
      if (self->spec_.measure) {
        // The opening counted against the deadline; the rest of it is armed once the target runs.
        self->opensMs_ = (launchNs - self->start_) / 1e6;
        uv_timer_stop(&self->timer_);
      }
      // durationMs is the child's lifetime, from its launch: the opens (a FIFO waiting for its
      // reader, say) came before it, as on the sync path. The deadline still counts them.
      self->start_ = launchNs;
    }
    if (!opened || !self->LaunchNow()) {
      SettleFailedLaunch(self->child_, self->outcome_);
      self->Finish();
      return;
    }
    self->WatchChild();  // and, measured, BeginStart
  }

  // startChild's writable stdin: the pipe's write end becomes JavaScript's (a net.Socket then owns
  // and closes it). Ownership is what JavaScript says through take(), called the moment it holds
  // the fd, not the call's outcome: napi_make_callback also fails after the function has returned
  // (a nextTick callback that throws on its way out, a worker terminated meanwhile), and an fd
  // taken by then was closed here as well, under a Socket that later wrote to and closed whatever
  // had its number (another file's bytes; in a worker's teardown, a uv_poll on a closed fd: abort).
  // False when nobody asked for it or it was not taken: the fd is still ours to close.
  bool HandOverStdin() {
    if (!onStdin_.held()) return false;
    JsScope scope(env_);
    napi_value args[2];
    if (scope.ok() && napi_create_int32(env_, child_.stdinW, &args[0]) == napi_ok &&
        napi_create_function(env_, "take", NAPI_AUTO_LENGTH, TakeStdin, nullptr, &args[1]) == napi_ok) {
      AsyncChild *outer = handingOver_;
      handingOver_ = this;
      onStdin_.Call(2, args);
      handingOver_ = outer;
    }
    onStdin_.Reset();
    return child_.stdinW < 0;
  }

  // take(): the stdin being handed over on this thread (HandOverStdin) is JavaScript's from now
  // on. True once; outside a hand-over (a take() kept and called later) it does nothing.
  static napi_value TakeStdin(napi_env env, napi_callback_info) {
    AsyncChild *self = handingOver_;
    bool took = self != nullptr && self->child_.stdinW >= 0;
    if (took) self->child_.stdinW = -1;
    napi_value result = nullptr;
    napi_get_boolean(env, took, &result);
    return result;
  }

  static bool EmitChunk(void *ctx, const char *data, size_t len) {
    auto *sink = static_cast<std::pair<AsyncChild *, int> *>(ctx);
    return sink->first->Emit(sink->second, data, len);
  }

  // Hands a chunk to the stream's reader; false when it wants no more for now (its Readable's
  // push() returned false: backpressure).
  bool Emit(int stream, const char *data, size_t len) {
    if (!onData_.held()) return true;
    JsScope scope(env_);
    if (!scope.ok()) return true;
    napi_value args[2], result = nullptr;
    void *copy;
    if (napi_create_int32(env_, stream, &args[0]) != napi_ok ||
        napi_create_buffer_copy(env_, len, data, &copy, &args[1]) != napi_ok)
      return true;
    // The reader may ask for more before the call returns: napi_make_callback runs the
    // nextTick queue on its way out, where the Readable's flow() calls read(), so Resume can
    // come before this push's `false` is known here. That request wins (see Resume).
    emitting_[stream] = true;
    wantMore_[stream] = false;
    bool called = onData_.Call(2, args, &result);
    emitting_[stream] = false;
    if (!called || result == nullptr) return true;
    bool more = true;
    napi_valuetype type;
    if (napi_typeof(env_, result, &type) == napi_ok && type == napi_boolean) napi_get_value_bool(env_, result, &more);
    more = more || wantMore_[stream] || drainAll_[stream];
    full_[stream] = !more;
    return more;
  }

  uv_poll_t *PollOf(int stream) { return stream == 1 ? &outPoll_ : &errPoll_; }
  int &FdOf(int stream) { return stream == 1 ? child_.stdoutR : child_.stderrR; }

  void DrainStream(int stream) {
    int &fd = FdOf(stream);
    if (fd < 0 || paused_[stream]) return;
    Capture &capture = stream == 1 ? outcome_.out : outcome_.err;
    std::pair<AsyncChild *, int> sink{this, stream};
    // Each chunk a reader is handed runs its JavaScript: while the child runs, at most 32 of them
    // per turn of the loop (as libuv reads a stream), whatever the reader takes each time.
    DrainResult r = onData_.held() ? Drain(fd, capture, EmitChunk, &sink, exited_ ? 1 << 30 : kChunksPerTurn) : Drain(fd, capture);
    if (r == DrainResult::Eof && stream == 1 && terminal_ && !exited_) {
      // The child's last slave fd closed (EIO), but the master is still open (stdinW) and the
      // echo of what is typed after this still reaches it: out of the poll, read to the end at
      // the exit (OnExit), as the sync waiter does (waiter.cc, WaitSync).
      uv_poll_stop(PollOf(stream));
      masterHungUp_ = true;
    } else if (r == DrainResult::Eof) {
      StopAndClose(PollOf(stream), fd);
      if (reaped_ && child_.stdoutR < 0 && child_.stderrR < 0) Finish();
    } else if (full_[stream] && fd >= 0) {
      // Backpressure: the reader is full. Stop reading this pipe (the child blocks on it once it
      // is full, as with child_process) until the reader asks for more (Resume).
      full_[stream] = false;
      paused_[stream] = true;
      uv_poll_stop(PollOf(stream));
      WatchHangUp(stream);
    }
  }

  // After the reap, a paused stream that a grandchild still holds is watched for its hang-up
  // alone (UV_DISCONNECT: epoll's EPOLLHUP, never its EPOLLIN): once the last writer has gone,
  // what it holds is all there will be, and it is read to the end as AfterReap reads one that had
  // already hung up. Unwatched, the rest waited for a reader, and the result was cut at waitDelay
  // blaming a grandchild that had exited long before.
  void WatchHangUp(int stream) {
    if (!reaped_ || !paused_[stream] || drainAll_[stream] || FdOf(stream) < 0) return;
    uv_poll_start(PollOf(stream), UV_DISCONNECT, stream == 1 ? OnStdoutHangUp : OnStderrHangUp);
  }
  static void OnStdoutHangUp(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->ReadToEnd(1); }
  static void OnStderrHangUp(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->ReadToEnd(2); }
  void ReadToEnd(int stream) {
    if (done_ || FdOf(stream) < 0) return;
    NoWriterLeft(stream);
    DrainStream(stream);
  }
  // No writer is left on the stream: read to EOF from now on, reader or not (EmitChunk's budget
  // then leaves what it does not take to the poll).
  void NoWriterLeft(int stream) {
    drainAll_[stream] = true;
    if (!paused_[stream]) return;
    paused_[stream] = false;
    uv_poll_start(PollOf(stream), UV_READABLE, stream == 1 ? OnStdout : OnStderr);
  }

 public:
  // The stream's reader wants more (its Readable's read()): read the pipe again.
  void Resume(int stream) {
    if (stream != 1 && stream != 2) return;
    if (emitting_[stream]) {
      wantMore_[stream] = true;  // asked for while its chunk is being handed over: not paused
      return;
    }
    if (!paused_[stream] || done_) return;
    paused_[stream] = false;
    if (FdOf(stream) < 0) return;
    if (!(stream == 1 && masterHungUp_)) uv_poll_start(PollOf(stream), UV_READABLE, stream == 1 ? OnStdout : OnStderr);
    DrainStream(stream);
  }

 private:

  // uv_close stops a poll itself. Each stop is an epoll_ctl(EPOLL_CTL_DEL) of its own, whether
  // the fd is still in the set or not, so no poll here is stopped before it is closed.
  void StopAndClose(uv_poll_t *poll, int &fd) {
    if (fd < 0) return;
    uv_close(reinterpret_cast<uv_handle_t *>(poll), OnClosed);
    CloseFd(fd);
  }

  static void OnStdout(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->DrainStream(1); }
  static void OnStderr(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->DrainStream(2); }

  static void OnStdin(uv_poll_t *p, int, int) {
    AsyncChild *self = static_cast<AsyncChild *>(p->data);
    if (!PumpInput(self->child_.stdinW, self->opts_.input.data(), self->opts_.input.size(), self->inputOffset_)) return;
    if (!self->terminal_) {
      self->StopAndClose(&self->inPoll_, self->child_.stdinW);
      return;
    }
    // A terminal's master stays open until the reap (launcher.h); CloseAll closes it. A write
    // made while the input was typed goes next.
    self->typingInput_ = false;
    if (self->termOffset_ < self->termPending_.size()) uv_poll_start(&self->inPoll_, UV_WRITABLE, OnTerminalWritable);
    else uv_poll_stop(&self->inPoll_);
  }

  static void OnTerminalWritable(uv_poll_t *p, int, int) {
    AsyncChild *self = static_cast<AsyncChild *>(p->data);
    std::string &pending = self->termPending_;
    if (!PumpInput(self->child_.stdinW, pending.data(), pending.size(), self->termOffset_)) return;
    uv_poll_stop(&self->inPoll_);
    pending.clear();
    self->termOffset_ = 0;
    if (!self->onWritable_.held()) return;
    JsScope scope(self->env_);
    if (scope.ok()) self->onWritable_.Call(0, nullptr);
  }

  static void OnKillEscalation(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (self->TargetGone()) return;
    if (!HasExited(self->ref_)) self->Signal(SIGKILL);
  }

  // Sends `sig` to the child, and records a SIGKILL (OnGraceOver waits on a SIGKILLed child that
  // is dying, whoever sent it: the deadline, an escalation or kill()).
  void Signal(int sig) {
    SignalChild(ref_, sig);
    if (sig == SIGKILL) sigkillSent_ = true;
  }

  // measure: the target is gone but its helper has not reported it (the target stopped it, and
  // then outlived the deadline, or was killed by it): the helper is resumed, and the exit taken as
  // it would have been. True when that is what happened.
  bool TargetGone() {
    if (child_.targetPid <= 0 || exited_ || !HasExited(ref_)) return false;
    ResumeHelper(child_);
    OnExit();
    return true;
  }

  static void OnDeadline(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (!self->opener_ && HasExited(self->ref_)) {
      // It exited before its deadline; the loop just got to the timer first (the pidfd's event
      // is in the same turn, or the loop was busy). Reported as what happened first: an exit.
      ResumeHelper(self->child_);
      self->OnExit();
      return;
    }
    self->outcome_.timedOut = true;
    if (self->opener_) {
      // The deadline came while a { path } target was still being opened: no child was started.
      self->opener_->GiveUp(self->child_, ETIMEDOUT);
      self->DropOpener();
      self->Finish();
      return;
    }
    self->Signal(self->opts_.killSignal);
    self->Escalate();
  }

  static void OnForceKill(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (self->TargetGone()) return;
    self->Signal(SIGKILL);
    if (self->outcome_.timedOut) self->Escalate();
  }

  static void OnGraceOver(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (self->TargetGone()) return;
    if (HasExited(self->ref_)) {
      // It died within its grace; the loop got to the timer first (timers run before the poll in
      // a turn of the loop, or the loop was busy). Reported as what happened: an exit.
      ResumeHelper(self->child_);
      self->OnExit();
      return;
    }
    if (self->sigkillSent_ && WaitOnDying(self->dying_, self->ref_)) {
      // Only waiting for a CPU to die on (waiter.h, kDyingStepMs), or gone (and reaped, a measured
      // target by its helper) since it was looked for: taken at the next step.
      uv_update_time(self->loop_);
      uv_timer_start(&self->timer_, OnGraceOver, Ms(kDyingStepMs), 0);
      return;
    }
    Escalation phase = Escalation::ForceKilled;
    if (AfterExpiry(phase, self->opts_).wouldntDie) {
      self->outcome_.wouldntDie = true;
      self->outcome_.rusageSource = RusageSource::Unavailable;  // not reaped here: no wait4 figures
      SignalChild(self->ref_, SIGKILL);
      // The pidfd goes to the reaper: stop watching it here, but do not close it.
      uv_close(reinterpret_cast<uv_handle_t *>(&self->pidPoll_), OnClosed);
      HandToReaper(self->child_.pid, self->child_.pidfd);
      if (self->child_.targetPid > 0) self->child_.pid = self->child_.targetPid;  // the result's pid: the target's
      self->child_.pidfd = -1;
      self->ref_.pidfd = -1;
      self->Finish();
    }
  }

  // After a timed-out expiry: the next step of the shared escalation.
  void Escalate() {
    NextExpiry next = AfterExpiry(phase_, opts_);
    if (next.wouldntDie) return;
    uv_update_time(loop_);
    uv_timer_start(&timer_, next.signal == SIGKILL ? OnForceKill : OnGraceOver, Ms(next.delayMs), 0);
  }

  static void OnPidfd(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->OnExit(); }

  // The child exited: reap it now (its status and rusage are final, and its pid must not be
  // signalled again), then read its pipes on until EOF, for at most waitDelay: a grandchild may
  // still hold them (the result says so when it cut the output).
  void OnExit() {
    if (done_ || exited_) return;
    // The helper exited before its report was taken (both came in one loop turn): take it first.
    if (starting_ && !EndStart(1)) return;
    exited_ = true;
    // When it exited, not when the loop got round to it (exit-clock.h).
    double now = NowNs(), stamp = TakeExitStamp(exitKey_);
    exitKey_ = 0;
    outcome_.exitNs = stamp > 0 && stamp < now ? stamp : now;
    uv_timer_stop(&timer_);
    uv_timer_stop(&killTimer_);
    LeaveKillList();
    if (!ReapExited(child_, outcome_, false)) {
      // It has exited, but another process traces it (a debugger, strace -p): its zombie is the
      // tracer's to wait for first, and a wait4 here would hold the whole loop until the tracer
      // lets go. Its status is asked for again on a timer instead (nothing wakes this process
      // when the tracer is done with it), while its pipes are read as usual.
      uv_poll_stop(&pidPoll_);  // readable from now on
      reapRetryMs_ = 1;
      uv_timer_start(&killTimer_, OnReapRetry, reapRetryMs_, 0);
      return;
    }
    AfterReap();
  }

  // Asked again: every 1, 2, 4 ... ms, then every quarter of a second.
  static void OnReapRetry(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    if (self->done_) return;
    if (ReapExited(self->child_, self->outcome_, false)) {
      self->AfterReap();
      return;
    }
    self->reapRetryMs_ = std::min<uint64_t>(self->reapRetryMs_ * 2, 250);
    uv_timer_start(&self->killTimer_, OnReapRetry, self->reapRetryMs_, 0);
  }

  // The exit, once reaped: the output read on until EOF, then the result.
  void AfterReap() {
    reaped_ = true;
    ref_.pidfd = -1;
    // The child has exited: when no writer is left on a pipe (POLLHUP: no grandchild holds it),
    // what the pipe holds is all there will ever be, at most a pipe's capacity, and it is read
    // now, to EOF, into the result and the stream (whose Readable keeps it for its reader),
    // whether or not anyone reads it yet: a stream paused for its reader (backpressure), and one
    // whose reader would be full part way (its push() false with the pipe still holding more).
    // Else a reader that reads only after the result (or never) had it cut off at waitDelay, and
    // the result blamed a grandchild. A pipe a grandchild still holds stays paused: its output is
    // not taken into memory faster than it is read, and waitDelay bounds the wait. A terminal's
    // master is read the same way: it hangs up (POLLHUP) once no process holds the terminal any
    // longer, and holds at most what the terminal buffers; one the session still holds stays
    // paused.
    for (int stream = 1; stream <= 2; stream++) {
      int fd = FdOf(stream);
      if (fd < 0) continue;
      struct pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 0) != 1 || !(p.revents & POLLHUP)) {
        WatchHangUp(stream);  // a grandchild holds it: read to the end once it lets go
        continue;
      }
      NoWriterLeft(stream);
    }
    if (masterHungUp_) {
      // Watched again: a process of the session may have reopened the terminal since the EIO.
      masterHungUp_ = false;
      if (!paused_[1] && child_.stdoutR >= 0) uv_poll_start(&outPoll_, UV_READABLE, OnStdout);
    }
    DrainStream(1);
    DrainStream(2);
    if (done_) return;
    if (child_.stdoutR < 0 && child_.stderrR < 0) {
      Finish();
    } else if (opts_.waitDelayMs <= 0) {
      outcome_.waitDelayExpired = true;
      Finish();
    } else {
      uv_poll_stop(&pidPoll_);  // readable from now on; the other branches close it at once
      uv_update_time(loop_);
      uv_timer_start(&timer_, OnWaitDelay, Ms(opts_.waitDelayMs), 0);
    }
  }

  static void OnWaitDelay(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    self->outcome_.waitDelayExpired = true;
    self->Finish();
  }

  // The result: to JavaScript, once.
  void Finish() {
    if (done_) return;
    done_ = true;
    LeaveKillList();
    uv_timer_stop(&timer_);  // a late kill must not reach a reused pid
    uv_timer_stop(&killTimer_);
    owner_->live.erase(this);
    Detach();
    // Every fd is closed before the callback: the promise it settles runs its reactions before
    // Call returns, and they must find nothing of this child left open. (The handles finish
    // closing on a later loop turn; this object lives until then.)
    CloseAll();
    {
      JsScope scope(env_);
      napi_value args[2];
      if (scope.ok() && Result(args)) onDone_.Call(2, args);
    }
    onDone_.Reset();
    onData_.Reset();
    onStdin_.Reset();
    onWritable_.Reset();
  }

  // Off the killOnExit list: before the reap, after which the pid and pidfd mean nothing.
  void LeaveKillList() {
    if (!onKillList_) return;
    std::lock_guard<std::mutex> lock(KillOnExit().mutex);
    KillOnExit().children.erase(this);
    onKillList_ = false;
  }

  // Plain C API (no node-addon-api wrapper, which throws when N-API refuses): this runs from
  // libuv callbacks and from the environment's cleanup hook.
  void Detach() {
    if (handle_) DetachHandle(handle_);
    handle_ = nullptr;
    if (handleRef_) napi_delete_reference(env_, handleRef_);
    handleRef_ = nullptr;
  }

  void CloseAll() {
    ReleaseCallerFds();
    TakeExitStamp(exitKey_);
    exitKey_ = 0;
    StopStartPoll();  // before its fd goes
    CloseFd(child_.reportR);
    CloseFd(child_.targetPidfd);
    CloseFd(child_.targetSlot);
    StopAndClose(&pidPoll_, child_.pidfd);
    StopAndClose(&outPoll_, child_.stdoutR);
    StopAndClose(&errPoll_, child_.stderrR);
    StopAndClose(&inPoll_, child_.stdinW);
    if (!timerClosed_) {
      timerClosed_ = true;
      uv_close(reinterpret_cast<uv_handle_t *>(&timer_), OnClosed);
      uv_close(reinterpret_cast<uv_handle_t *>(&killTimer_), OnClosed);
    }
  }

  static void OnClosed(uv_handle_t *h) {
    AsyncChild *self = static_cast<AsyncChild *>(h->data);
    if (--self->handles_ > 0) return;
    EnvChildren *owner = self->owner_;
    delete self;
    owner->alive--;
    owner->MaybeFinishTeardown();
  }

  napi_env env_;
  EnvChildren *owner_;
  uv_loop_t *loop_ = nullptr;
  LaunchSpec spec_;
  WaitOptions opts_;
  WaitOutcome outcome_;
  Launched child_;
  ChildRef ref_;
  std::unique_ptr<PathOpener> opener_;
  LaunchJob job_;          // the launch on the launcher thread (LaunchOffLoopIfBusy)
  bool launching_ = false;  // job_ is there, not yet given back
  std::vector<int> held_;  // copies of the caller's fds, until the launch (HoldCallerFds)
  Escalation phase_ = Escalation::Running;
  double start_ = 0;
  DyingWait dying_;           // past the grace, for a child that is dying (OnGraceOver, waiter.h)
  bool sigkillSent_ = false;  // a SIGKILL has been sent (Signal)
  uint64_t exitKey_ = 0;  // the exit clock's key for the pidfd (0: none)
  size_t inputOffset_ = 0;
  bool terminal_ = false;    // fds 0-2 are a terminal: stdoutR its master, stdinW the master's copy
  bool masterHungUp_ = false;  // the terminal's master read EIO before the exit (DrainStream)
  bool typingInput_ = false;  // a terminal's `input` is still being written (OnStdin)
  std::string termPending_;  // the part of a terminal write still to go (WriteTerminal)
  size_t termOffset_ = 0;
  bool done_ = false;
  bool timerClosed_ = false;
  bool openPolling_ = false;
  bool exited_ = false;  // its pidfd said so
  bool reaped_ = false;  // and wait4 has had its status (or nothing was left to reap)
  uint64_t reapRetryMs_ = 0;
  bool paused_[3] = {false, false, false};  // by stream (1, 2): the reader is full
  bool full_[3] = {false, false, false};
  bool emitting_[3] = {false, false, false};  // a chunk of the stream is being handed to JS
  bool wantMore_[3] = {false, false, false};  // its reader asked for more meanwhile
  bool drainAll_[3] = {false, false, false};  // exited, no writer left: read to EOF, reader or not (AfterReap)
  bool onKillList_ = false;
  int handles_ = 0;
  uv_poll_t pidPoll_{}, outPoll_{}, errPoll_{}, inPoll_{}, openPoll_{};
  uv_poll_t startPoll_{};  // measure: the helper's report fd, until STARTED (BeginStart)
  bool starting_ = false;  // measure: the helper has not reported its target yet (startPoll_ open)
  bool stashed_ = false;   // (while starting_) AwaitPid read a report that was not a start: stash_
  th_helper_report stash_{};
  double startDeadlineNs_ = 0;
  double opensMs_ = 0;     // the { path } opening's share of the deadline
  std::vector<int> pendingSignals_;  // kill()s made before the target was reported
  uv_timer_t timer_{};      // the deadline and its escalation
  uv_timer_t killTimer_{};  // kill()'s escalation to SIGKILL; before it, the helper's start bound
  bool killEscalating_ = false;
  JsCallback onDone_, onData_, onStdin_, onWritable_;
  ChildHandle *handle_ = nullptr;
  napi_ref handleRef_ = nullptr;
  // The child whose stdin HandOverStdin is handing over on this thread, for take(); null otherwise.
  static thread_local AsyncChild *handingOver_;
};

thread_local AsyncChild *AsyncChild::handingOver_ = nullptr;

// The JS handle of a running child: pid and kill(signal), resume(stream) for its readers, and,
// with a terminal, write(bytes) and resize(columns, rows).
class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ChildHandle", {InstanceMethod("kill", &ChildHandle::KillMethod),
                                            InstanceMethod("resume", &ChildHandle::ResumeMethod),
                                            InstanceMethod("write", &ChildHandle::WriteMethod),
                                            InstanceMethod("resize", &ChildHandle::ResizeMethod),
                                            InstanceAccessor("pid", &ChildHandle::PidGetter, nullptr)});
  }
  ChildHandle(const Napi::CallbackInfo &info) : Napi::ObjectWrap<ChildHandle>(info) {}
  AsyncChild *child = nullptr;  // cleared when the child is done
  pid_t lastPid = 0;

 private:
  Napi::Value KillMethod(const Napi::CallbackInfo &info) {
    int sig = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : SIGKILL;
    return Napi::Boolean::New(info.Env(), child != nullptr && child->Kill(sig));
  }
  // resume(stream): the stream's Readable wants more (backpressure released).
  Napi::Value ResumeMethod(const Napi::CallbackInfo &info) {
    if (child && info.Length() > 0 && info[0].IsNumber()) child->Resume(info[0].As<Napi::Number>().Int32Value());
    return info.Env().Undefined();
  }
  // write(bytes): a terminal write, WriteTerminal's 1, 0 or -1.
  Napi::Value WriteMethod(const Napi::CallbackInfo &info) {
    int written = -1;
    if (child && info.Length() > 0 && info[0].IsBuffer()) {
      Napi::Buffer<char> bytes = info[0].As<Napi::Buffer<char>>();
      written = child->WriteTerminal(bytes.Data(), bytes.Length());
    }
    return Napi::Number::New(info.Env(), written);
  }
  // resize(columns, rows), each 1..65535 (async.ts checks them).
  Napi::Value ResizeMethod(const Napi::CallbackInfo &info) {
    bool resized = false;
    if (child && info.Length() > 1 && info[0].IsNumber() && info[1].IsNumber()) {
      uint32_t columns = info[0].As<Napi::Number>().Uint32Value(), rows = info[1].As<Napi::Number>().Uint32Value();
      if (columns >= 1 && columns <= 65535 && rows >= 1 && rows <= 65535)
        resized = child->ResizeTerminal(static_cast<unsigned short>(columns), static_cast<unsigned short>(rows));
    }
    return Napi::Boolean::New(info.Env(), resized);
  }
  Napi::Value PidGetter(const Napi::CallbackInfo &info) {
    if (child) lastPid = child->AwaitPid();
    return Napi::Number::New(info.Env(), lastPid);
  }
};

void DetachHandle(ChildHandle *handle) {
  if (handle->child) handle->lastPid = handle->child->pid();
  handle->child = nullptr;
}

struct AddonData {
  Napi::FunctionReference handleClass;
  EnvChildren *children = nullptr;
};

// The launches the launcher thread has given back, taken on the loop's thread.
void OnLaunchesBack(uv_async_t *async) {
  EnvChildren *owner = static_cast<EnvChildren *>(async->data);
  std::vector<LaunchJob *> back;
  {
    std::lock_guard<std::mutex> lock(owner->launchMutex);
    back.swap(owner->launchedBack);
  }
  for (LaunchJob *job : back) {
    owner->awaiting--;
    static_cast<AsyncChild *>(job->context)->AdoptLaunch(false);
    while (owner->awaiting < LaunchConcurrency() && !owner->parked.empty() && !owner->tearingDown) {
      AsyncChild *next = owner->parked.front();
      owner->parked.pop_front();
      next->LaunchParked(false);
    }
  }
  if (owner->awaiting == 0) uv_unref(reinterpret_cast<uv_handle_t *>(async));
}

void TearDown(napi_async_cleanup_hook_handle handle, void *arg) {
  EnvChildren *children = static_cast<EnvChildren *>(arg);
  children->hook = handle;
  children->tearingDown = true;
  // Launches still on the launcher thread are waited for (a launch ends once its child has
  // exec'd or failed to), and their children taken, to be killed and reaped with the rest.
  if (children->launchAsyncOpen) {
    std::vector<LaunchJob *> back;
    {
      std::unique_lock<std::mutex> lock(children->launchMutex);
      children->launchBack.wait(lock, [children] { return children->launching == 0; });
      back.swap(children->launchedBack);
    }
    for (LaunchJob *job : back) static_cast<AsyncChild *>(job->context)->AdoptLaunch(true);
    for (AsyncChild *c : children->parked) c->LaunchParked(true);
    children->parked.clear();
    children->awaiting = 0;
    children->launchAsyncOpen = false;
    uv_close(reinterpret_cast<uv_handle_t *>(&children->launchAsync), EnvChildren::OnLaunchAsyncClosed);
  }
  std::set<AsyncChild *> live;
  live.swap(children->live);
  for (AsyncChild *c : live) c->Doom();
  double deadlineNs = NowNs() + kAbandonWaitMs * 1e6;
  for (AsyncChild *c : live) c->Abandon(deadlineNs);
  children->MaybeFinishTeardown();
}

// spawnAsync(spec, specNumbers, input, onDone(numbers, buffers), onData(stream, chunk) | null,
//            onStdin(fd, take) | null, onWritable() | null, wantHandle = true)
//   -> { handle } while running (or opening its { path } targets), or { numbers, buffers } when
//   the launch failed at once. With wantHandle false, null instead of { handle }: nothing in JS
//   will kill, resume or write to this child or ask its pid (spawnChild without a signal), and a
//   handle is a constructor call into V8 per spawn. onStdin(fd, take), for a stdin pipe with no
//   input, is given the pipe's write end once the child runs, and calls take() once it owns it
//   (HandOverStdin). With a
//   terminal, what the child writes comes to onData as stream 1, and onWritable is called when a
//   handle.write() that returned 0 has all been written.
Napi::Value SpawnAsync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  AddonData *data = env.GetInstanceData<AddonData>();
  if (info.Length() < 4 || !info[0].IsObject() || !info[3].IsFunction()) {
    Napi::TypeError err = Napi::TypeError::New(env, "spawnAsync(spec, specNumbers, input, onDone, onData)");
    err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
    throw err;
  }
  std::unique_ptr<AsyncChild> child(new AsyncChild(env, data->children));
  Napi::Value onData = info.Length() > 4 ? info[4] : env.Null();
  Napi::Value onStdin = info.Length() > 5 ? info[5] : env.Null();
  Napi::Value onWritable = info.Length() > 6 ? info[6] : env.Null();
  bool wantHandle = info.Length() <= 7 || info[7].ToBoolean().Value();
  if (child->Start(info[0].As<Napi::Object>(), info[1], info[2], info[3], onData, onStdin, onWritable, wantHandle) == AsyncChild::Started::Failed) {
    napi_value result[2];
    if (!child->Result(result)) throw Napi::Error::New(env, "spawnAsync: the result could not be handed over");
    Napi::Object out = Napi::Object::New(env);
    out.Set("numbers", Napi::Value(env, result[0]));
    out.Set("buffers", Napi::Value(env, result[1]));
    return out;
  }
  AsyncChild *running = child.release();  // owned by its uv handles from here on
  if (!wantHandle) return env.Null();
  Napi::Object handle = data->handleClass.New({});
  ChildHandle *wrapped = ChildHandle::Unwrap(handle);
  wrapped->child = running;
  running->Attach(wrapped, handle);
  Napi::Object out = Napi::Object::New(env);
  out.Set("handle", handle);
  return out;
}

}  // namespace

void InitAsync(Napi::Env env, Napi::Object exports) {
  static std::once_flag atexitOnce;
  std::call_once(atexitOnce, [] { atexit(KillAllAtExit); });
  StartExitClock();
  AddonData *data = new AddonData();
  data->handleClass = Napi::Persistent(ChildHandle::Define(env));
  data->children = new EnvChildren();
  napi_add_async_cleanup_hook(env, TearDown, data->children, nullptr);
  env.SetInstanceData<AddonData>(data);
  exports.Set("spawnAsync", Napi::Function::New(env, SpawnAsync, "spawnAsync"));
}

}  // namespace th
