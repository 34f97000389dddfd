#include "path-open.h"

#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <mutex>
#include <system_error>
#include <string>
#include <thread>

namespace th {

struct PathOpener::State {
  std::mutex mutex;
  std::string paths[3];
  int flags[3] = {0, 0, 0};
  bool wanted[3] = {false, false, false};
  int fds[3] = {-1, -1, -1};
  int opening = -1;  // the stream whose open is in progress
  int err = 0, failed = -1;
  bool done = false, cancelled = false;
  // Written by the thread when it is done. Closed by whichever side is last to need it, under the
  // mutex: the owner once the thread is done, else the thread when it finishes a cancelled run.
  // So neither ever writes to or closes a number the other has already let go of, and no fd
  // outlives the opener by a thread's exit.
  int event = -1;

  void Run() {
    for (int target = 0; target < 3; target++) {
      if (!wanted[target]) continue;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (cancelled) break;
        opening = target;
      }
      int fd;
      do {
        fd = open(paths[target].c_str(), flags[target] | O_CLOEXEC, 0666);
      } while (fd < 0 && errno == EINTR);
      int e = errno;
      std::lock_guard<std::mutex> lock(mutex);
      opening = -1;
      if (fd < 0) {
        err = e;
        failed = target;
        break;
      }
      fds[target] = fd;
      if (cancelled) break;
    }
    std::lock_guard<std::mutex> lock(mutex);
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
  try {
    std::thread([state] { state->Run(); }).detach();
  } catch (const std::system_error &e) {
    CloseFd(state->event);
    return fail(e.code().value());
  }
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
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->done || state_->cancelled) return;
  state_->cancelled = true;
  int target = state_->opening;
  if (target < 0) return;
  // A FIFO open waits for the other end: be that other end for a moment, and it returns.
  struct stat st;
  const std::string &path = state_->paths[target];
  if (stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
    int peer = open(path.c_str(), (target == 0 ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
    if (peer >= 0) close(peer);
  }
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
