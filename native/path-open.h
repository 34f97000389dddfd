// Opening the { path } stdio targets of a spec, off the calling thread.
//
// open(2) can block for as long as it likes: a FIFO waits for its other end, a file on a hung
// network mount waits for the server. Done on the thread that waits for the child (sync) or on
// the event loop (async), that would block past the deadline, or freeze every timer and
// AbortSignal of the process. So the opens run on a short-lived thread of their own, which
// signals an eventfd when it is done; the caller waits for that fd together with its deadline.
// When the caller gives up (deadline, abort, teardown), Cancel() interrupts a pending open with a
// signal (native/interrupt.h), from a thread of its own, so that it fails with EINTR and nothing
// else changes: other processes waiting on the same FIFO wait on. Only where no signal can be
// sent is it released by holding the FIFO's other end until that open returns. Whatever the
// opening thread opens afterwards it closes itself. The caller's thread never waits on a path.
#pragma once

#include <memory>

#include "launcher.h"

namespace th {

// The opening thread's name, and the name of the thread that interrupts a pending open given up
// on (as ps -L and /proc/<pid>/task/*/comm show them).
constexpr const char *kOpenerThreadName = "tileharness-opn";
constexpr const char *kReleaseThreadName = "tileharness-rel";

class PathOpener {
 public:
  // Whether the spec has { path } targets (and so needs an opener).
  static bool Needed(const LaunchSpec &spec);
  // Starts the opening thread. Null when it could not be started: then `out` says why (stage open,
  // for the first { path } stream: an fd table with no room for the opener's eventfd is the same
  // EMFILE the open itself would have met).
  static std::unique_ptr<PathOpener> Start(const LaunchSpec &spec, Launched &out);
  ~PathOpener();  // cancels if not finished; closes the eventfd and any fds not taken

  // Readable once every open has returned.
  int fd() const;
  // After fd() became readable: hands the opened fds over into spec.io[i].fd (the caller closes
  // them with CloseOpenedPaths after the launch), or records the failing open in `out` (stage
  // open, the errno, the stream). True when all opened.
  bool Take(LaunchSpec &spec, Launched &out);
  // Gives up on the opens; the thread closes what it opens from now on. Never blocks.
  void Cancel();
  // Cancel(), recorded in `out` as the open of the stream still pending failing with `err`
  // (ETIMEDOUT: the deadline came first; ECANCELED: aborted).
  void GiveUp(Launched &out, int err);

  struct State;

 private:
  explicit PathOpener(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

// Closes the fds of opened { path } targets (after Launch has given the child its copies).
void CloseOpenedPaths(LaunchSpec &spec);

// Waits (on the calling thread) for the opener, at most until `deadlineNs` (CLOCK_MONOTONIC, 0 for
// none). True when the opens finished; false when the deadline came first.
bool WaitForOpener(PathOpener &opener, double deadlineNs);

}  // namespace th
