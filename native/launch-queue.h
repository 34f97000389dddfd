// Launching off the event loop.
//
// A launch holds its thread until the child has exec'd: posix_spawn and the fork path both
// suspend the caller (CLONE_VFORK) while the child runs its setup, so that a failure can be
// reported and nothing is copied. The child needs a CPU for that: on a machine whose cores are
// busy (a compile farm, a server with a hundred children running) it waits for one, and its
// parent waits with it, for milliseconds. On the event loop that is a frozen loop (timers, I/O,
// every other child's result). spawnChild, whose pid nobody needs before the child exits,
// launches on one of these threads instead; the loop only prepares the spec and later watches
// the child.
//
// The threads are process-wide, started at the first launch and never stopped (a thread waiting
// on a condition variable costs nothing, and the process may exit at any moment without joining
// them). They take no signals. They never exit while the process lives, which matters to the
// fork path's PR_SET_PDEATHSIG: the kernel sends the death signal when the child's parent
// *thread* ends.
#pragma once

namespace th {

// Runs work(arg) on one of the launch threads, in the order queued. False when no launch thread
// could be started (the thread limit, memory): the caller launches on its own thread instead.
bool QueueLaunch(void (*work)(void *), void *arg);

}  // namespace th
