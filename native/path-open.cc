#include "path-open.h"

#include "clock.h"
#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <string>
#include <thread>

namespace th {

struct PathOpener::State {
  std::mutex mutex;
  std::condition_variable openReturned;  // notified when `opening` goes back to -1
  std::string paths[3];
  int flags[3] = {0, 0, 0};
  bool wanted[3] = {false, false, false};
  int fds[3] = {-1, -1, -1};
  int opening = -1;  // the stream whose open is in progress
  // The opening thread, while it runs (Run's own): what Release interrupts.
  const InterruptibleThread *opener = nullptr;
  int err = 0, failed = -1;
  bool done = false, cancelled = false;
  // Where the open cannot be interrupted, Cancel()'s hold on the other end of a FIFO whose open is
  // pending (ReleaseByOtherEnd): kept until that open has returned, then closed by Run.
  int peer = -1;
  // Written by the thread when it is done. Closed by whichever side is last to need it, under the
  // mutex: the owner once the thread is done, else the thread when it finishes a cancelled run.
  // So neither ever writes to or closes a number the other has already let go of, and no fd
  // outlives the opener by a thread's exit.
  int event = -1;

  void Run() {
    InterruptibleThread self;  // every other signal stays blocked, as Start left them
    {
      std::lock_guard<std::mutex> lock(mutex);
      opener = &self;
    }
    for (int target = 0; target < 3; target++) {
      if (!wanted[target]) continue;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (cancelled) break;
        opening = target;
      }
      int fd, e;
      for (;;) {
        fd = open(paths[target].c_str(), flags[target] | O_CLOEXEC, 0666);
        e = errno;
        if (fd >= 0 || e != EINTR) break;
        std::lock_guard<std::mutex> lock(mutex);
        if (cancelled) break;  // interrupted by Release: given up on
      }
      std::lock_guard<std::mutex> lock(mutex);
      opening = -1;
      openReturned.notify_all();
      CloseFd(peer);
      if (fd < 0) {
        err = e;
        failed = target;
        break;
      }
      fds[target] = fd;
      if (cancelled) break;
    }
    std::lock_guard<std::mutex> lock(mutex);
    opener = nullptr;
    done = true;
    if (cancelled) {
      for (int &fd : fds) CloseFd(fd);
      CloseFd(event);
      return;
    }
    uint64_t one = 1;
    ssize_t ignored = write(event, &one, sizeof one);
    (void)ignored;
  }

  // Ends a pending open that has been given up on by interrupting it (native/interrupt.h): the
  // open fails with EINTR, and nothing else changes. Completing it instead, by opening the FIFO's
  // other end, would complete every other process's open waiting on that FIFO as well: a writer
  // of someone else's let through to a reader that is gone, and killed by SIGPIPE.
  //
  // A signal can come just before the open begins and interrupt nothing; one is sent again once
  // the last has been taken, until the open returns. A signal not yet taken is one the thread is
  // in no state to take (an open on a hung mount, which nothing interrupts): it is left pending,
  // and no more are sent. With `wait`, keeps at it until the open returns (on a thread of its
  // own, Cancel's); without, sends one and returns. Where no signal can be sent (the handler is
  // not ours: see interrupt.h), falls back to ReleaseByOtherEnd.
  void Release(int target, bool wait) {
    constexpr unsigned kBlindSends = 8;  // to a thread that could not register, /proc silent
    std::unique_lock<std::mutex> lock(mutex);
    unsigned sent = 0;
    auto pause = std::chrono::milliseconds(1);
    while (opening == target && opener != nullptr) {
      const InterruptibleThread &thread = *opener;  // alive: its open has not returned
      bool send;
      if (thread.registered()) {
        send = thread.Taken() == sent;
      } else {
        InterruptibleThread::Pending pending = sent == 0 ? InterruptibleThread::Pending::No : thread.SignalPending();
        send = pending == InterruptibleThread::Pending::No || (pending == InterruptibleThread::Pending::Unknown && sent < kBlindSends);
      }
      if (send) {
        if (!thread.Interrupt()) {
          lock.unlock();
          ReleaseByOtherEnd(target);
          return;
        }
        sent++;
      }
      if (!wait) return;
      openReturned.wait_for(lock, pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(100));
    }
  }

  // A FIFO's open waits for its other end: released by being that other end, opened read-write,
  // which on Linux never waits and counts as both ends, and held until the pending open has
  // returned (Run closes it then). Held, not opened and closed at once: an open that has not
  // quite begun would else wait on, for good. Only where the open cannot be interrupted.
  void ReleaseByOtherEnd(int target) {
    const std::string &path = paths[target];
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    int fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return;
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {  // replaced meanwhile: not ours to touch
      close(fd);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (opening == target && peer < 0) {
      peer = fd;
    } else {
      close(fd);  // that open has returned already
    }
  }
};

bool PathOpener::Needed(const LaunchSpec &spec) {
  for (const StdioSpec &io : spec.io)
    if (io.kind == StdioKind::Path) return true;
  return false;
}

std::unique_ptr<PathOpener> PathOpener::Start(const LaunchSpec &spec, Launched &out) {
  out.usedFork = UsesForkPath(spec);  // for a result that never gets as far as Launch
  auto state = std::make_shared<State>();
  int first = -1;
  for (int target = 2; target >= 0; target--)
    if (spec.io[target].kind == StdioKind::Path) first = target;
  auto fail = [&](int err) {
    out.stage = Stage::Open;
    out.err = err;
    out.detail = first;
    return nullptr;
  };
  state->event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->event < 0) return fail(errno);
  for (int target = 0; target < 3; target++) {
    const StdioSpec &io = spec.io[target];
    if (io.kind != StdioKind::Path) continue;
    state->wanted[target] = true;
    state->paths[target] = io.path;
    state->flags[target] = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (io.append ? O_APPEND : O_TRUNC);
  }
  // The thread takes none of the process's signals (it unblocks only the one that interrupts
  // its open: InterruptibleThread).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    std::thread thread([state] { state->Run(); });
    pthread_setname_np(thread.native_handle(), kOpenerThreadName);  // by its creator (exit-clock.cc)
    thread.detach();
  } catch (const std::system_error &e) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    // No thread to open them on (EAGAIN: RLIMIT_NPROC, a cgroup's pids.max, the thread table):
    // the limit a fork meets, so said as a fork's failure; no open was tried.
    CloseFd(state->event);
    out.stage = Stage::Fork;
    out.err = e.code().value();
    return nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return std::unique_ptr<PathOpener>(new PathOpener(std::move(state)));
}

PathOpener::~PathOpener() {
  Cancel();
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->done) {
    for (int &fd : state_->fds) CloseFd(fd);
    CloseFd(state_->event);
  }
}

int PathOpener::fd() const { return state_->event; }

bool PathOpener::Take(LaunchSpec &spec, Launched &out) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->done) return false;
  for (int target = 0; target < 3; target++) {
    if (spec.io[target].kind != StdioKind::Path) continue;
    spec.io[target].fd = state_->fds[target];
    state_->fds[target] = -1;
  }
  if (state_->failed >= 0) {
    out.stage = Stage::Open;
    out.err = state_->err;
    out.detail = state_->failed;
    CloseOpenedPaths(spec);
    return false;
  }
  return true;
}

void PathOpener::Cancel() {
  int target;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->done || state_->cancelled) return;
    state_->cancelled = true;
    target = state_->opening;
  }
  if (target < 0) return;
  std::shared_ptr<State> state = state_;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the thread takes none of the process's signals
  try {
    std::thread thread([state, target] { state->Release(target, true); });
    pthread_setname_np(thread.native_handle(), kReleaseThreadName);
    thread.detach();
  } catch (const std::system_error &) {
    // No thread to be had (the process or thread limit): one signal, sent from here (and, where
    // none can be sent, the other end opened from here, which blocks only where the path's
    // filesystem does).
    state->Release(target, false);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void PathOpener::GiveUp(Launched &out, int err) {
  int target = -1;
  {
    // The stream being opened, or the first still to be opened.
    std::lock_guard<std::mutex> lock(state_->mutex);
    target = state_->opening;
    for (int i = 0; i < 3 && target < 0; i++)
      if (state_->wanted[i] && state_->fds[i] < 0) target = i;
    for (int i = 0; i < 3 && target < 0; i++)
      if (state_->wanted[i]) target = i;
  }
  Cancel();
  out.stage = Stage::Open;
  out.err = err;
  out.detail = target;
}

void CloseOpenedPaths(LaunchSpec &spec) {
  for (StdioSpec &io : spec.io)
    if (io.kind == StdioKind::Path) CloseFd(io.fd);
}

bool WaitForOpener(PathOpener &opener, double deadlineNs) { return PollReadableUntil(opener.fd(), deadlineNs) == 1; }

}  // namespace th
