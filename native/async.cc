// The async waiter: the same launcher, watched from the environment's libuv loop. The child's
// exit is a pidfd becoming readable (uv_poll), its pipes are uv_polls, the deadline and the kill
// escalation are uv_timers: nothing runs on the libuv threadpool and no thread waits per child.
// When the pidfd fires, the child is reaped with wait4 for its status and rusage, exactly as the
// sync path does, and the raw result goes to the JS callback.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <uv.h>

#include <memory>
#include <set>

#include "addon.h"
#include "alarm.h"

namespace th {
namespace {

class AsyncChild;
class ChildHandle;
void DetachHandle(ChildHandle *handle);

// Children of one Node environment (main thread or worker), for teardown.
struct EnvChildren {
  std::set<AsyncChild *> live;
  napi_async_cleanup_hook_handle hook = nullptr;
  size_t closing = 0;  // children whose handles are closing during teardown
  bool tearingDown = false;
};

class AsyncChild {
 public:
  AsyncChild(Napi::Env env, EnvChildren *owner) : env_(env), owner_(owner) {}

  // Starts watching. Returns false when the launch failed (result already settled in outcome_).
  bool Start(Napi::Object spec, Napi::Value input, Napi::Function onDone, Napi::Value onData) {
    size_t maxBuffer = SIZE_MAX;
    ParseSpec(env_, spec, spec_, opts_, maxBuffer);
    if (input.IsBuffer()) {
      input_ = Napi::Persistent(input.As<Napi::Buffer<char>>());
      opts_.input = input.As<Napi::Buffer<char>>().Data();
      opts_.inputLen = input.As<Napi::Buffer<char>>().Length();
      spec_.io[0].kind = StdioKind::Pipe;
    }
    outcome_.out.limit = maxBuffer;
    outcome_.err.limit = maxBuffer;
    start_ = NowNs();
    child_ = Launch(spec_);
    if (child_.stage != Stage::None) {
      SettleFailedLaunch(child_, outcome_);
      return false;
    }
    onDone_ = Napi::Persistent(onDone);
    if (onData.IsFunction()) onData_ = Napi::Persistent(onData.As<Napi::Function>());
    context_.reset(new Napi::AsyncContext(env_, "tileharness:child"));
    slot_.pid = child_.pid;
    slot_.pidfd = child_.pidfd;
    slot_.group = spec_.setsid;

    uv_loop_t *loop = nullptr;
    napi_get_uv_event_loop(env_, &loop);
    Watch(loop, &pidPoll_, child_.pidfd, UV_READABLE, OnPidfd);
    if (child_.stdoutR >= 0) Watch(loop, &outPoll_, child_.stdoutR, UV_READABLE, OnStdout);
    if (child_.stderrR >= 0) Watch(loop, &errPoll_, child_.stderrR, UV_READABLE, OnStderr);
    if (child_.stdinW >= 0) {
      if (opts_.inputLen == 0) CloseFd(child_.stdinW);
      else Watch(loop, &inPoll_, child_.stdinW, UV_WRITABLE, OnStdin);
    }
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    handles_++;
    // uv timers count from the loop's cached time, which can lag: refresh it so that a deadline
    // is never earlier than `timeout` after the launch.
    uv_update_time(loop);
    if (opts_.timeoutMs > 0) uv_timer_start(&timer_, OnDeadline, Ms(opts_.timeoutMs), 0);
    owner_->live.insert(this);
    return true;
  }

  // Writes the run's numbers into `numbers`; returns its captured buffers (or null).
  Napi::Value Raw(Napi::Float64Array numbers) { return BuildRaw(env_, child_, outcome_, start_, NowNs(), numbers); }

  // The JS handle stays alive (strong reference) while the child runs, and is detached when it
  // ends, so a late kill() is a no-op rather than a use-after-free.
  void Attach(ChildHandle *handle, Napi::Object object) {
    handle_ = handle;
    handleRef_ = Napi::Persistent(object);
  }
  pid_t pid() const { return child_.pid; }

  // kill(signal): the signal now, and SIGKILL after forceKillAfterDelay when it is gentler.
  bool Kill(int sig) {
    if (done_) return false;
    SignalChild(slot_, sig);
    if (sig != SIGKILL && opts_.forceKillAfterMs > 0 && phase_ == Escalation::Running) {
      phase_ = Escalation::Killed;
      uv_update_time(timer_.loop);
      uv_timer_start(&timer_, OnForceKill, Ms(opts_.forceKillAfterMs), 0);
    }
    return true;
  }

  // Teardown of the environment (worker exit, process exit): kill, reap, close, no callback.
  void Abandon() {
    if (!done_) {
      SignalChild(slot_, SIGKILL);
      int status;
      while (waitpid(child_.pid, &status, 0) < 0 && errno == EINTR) {
      }
      done_ = true;
    }
    Detach();
    CloseAll();
  }

 private:
  // Whole milliseconds, rounded up, plus one: libuv's loop clock is truncated to the millisecond,
  // so a timer started at 10.9 ms for 150 ms would fire at 160 ms, 0.9 ms early. A timer may fire
  // late, never early.
  static uint64_t Ms(double ms) { return (ms < 1 ? 1 : static_cast<uint64_t>(ms + 0.999999)) + 1; }

  void Watch(uv_loop_t *loop, uv_poll_t *poll, int fd, int events, uv_poll_cb cb) {
    uv_poll_init(loop, poll, fd);
    poll->data = this;
    handles_++;
    uv_poll_start(poll, events, cb);
  }

  static void EmitChunk(void *ctx, const char *data, size_t len) {
    auto *sink = static_cast<std::pair<AsyncChild *, int> *>(ctx);
    sink->first->Emit(sink->second, data, len);
  }

  void Emit(int stream, const char *data, size_t len) {
    if (onData_.IsEmpty()) return;
    Napi::HandleScope scope(env_);
    Napi::Buffer<char> chunk = Napi::Buffer<char>::Copy(env_, data, len);
    onData_.MakeCallback(env_.Global(), {Napi::Number::New(env_, stream), chunk}, *context_);
  }

  void DrainStream(int stream) {
    int &fd = stream == 1 ? child_.stdoutR : child_.stderrR;
    if (fd < 0) return;
    Capture &capture = stream == 1 ? outcome_.out : outcome_.err;
    std::pair<AsyncChild *, int> sink{this, stream};
    DrainResult r = onData_.IsEmpty() ? Drain(fd, capture) : Drain(fd, capture, EmitChunk, &sink);
    if (r == DrainResult::Eof) StopAndClose(stream == 1 ? &outPoll_ : &errPoll_, fd);
  }

  void StopAndClose(uv_poll_t *poll, int &fd) {
    if (fd < 0) return;
    uv_poll_stop(poll);
    uv_close(reinterpret_cast<uv_handle_t *>(poll), OnClosed);
    CloseFd(fd);
  }

  static void OnStdout(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->DrainStream(1); }
  static void OnStderr(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->DrainStream(2); }

  static void OnStdin(uv_poll_t *p, int, int) {
    AsyncChild *self = static_cast<AsyncChild *>(p->data);
    if (PumpInput(self->child_.stdinW, self->opts_.input, self->opts_.inputLen, self->inputOffset_))
      self->StopAndClose(&self->inPoll_, self->child_.stdinW);
  }

  static void OnDeadline(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    self->outcome_.timedOut = true;
    SignalChild(self->slot_, self->opts_.killSignal);
    self->Escalate();
  }

  static void OnForceKill(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    SignalChild(self->slot_, SIGKILL);
    if (self->outcome_.timedOut) self->Escalate();
  }

  static void OnGraceOver(uv_timer_t *t) {
    AsyncChild *self = static_cast<AsyncChild *>(t->data);
    Escalation phase = Escalation::ForceKilled;
    if (AfterExpiry(phase, self->opts_).wouldntDie) {
      self->outcome_.wouldntDie = true;
      SignalChild(self->slot_, SIGKILL);
      // The pidfd goes to the reaper: stop watching it here, but do not close it.
      uv_poll_stop(&self->pidPoll_);
      uv_close(reinterpret_cast<uv_handle_t *>(&self->pidPoll_), OnClosed);
      HandToReaper(self->child_.pid, self->child_.pidfd);
      self->child_.pidfd = -1;
      self->slot_.pidfd = -1;
      self->Finish(false);
    }
  }

  // After a timed-out expiry: the next step of the shared escalation.
  void Escalate() {
    NextExpiry next = AfterExpiry(phase_, opts_);
    if (next.wouldntDie) return;
    uv_update_time(timer_.loop);
    uv_timer_start(&timer_, next.signal == SIGKILL ? OnForceKill : OnGraceOver, Ms(next.delayMs), 0);
  }

  static void OnPidfd(uv_poll_t *p, int, int) { static_cast<AsyncChild *>(p->data)->Finish(true); }

  void Finish(bool exited) {
    if (done_) return;
    done_ = true;
    uv_timer_stop(&timer_);  // before the reap: a late kill must not reach a reused pid
    if (exited) {
      // What the child wrote before exiting is in the pipes; a grandchild may keep them open.
      DrainStream(1);
      DrainStream(2);
      pid_t r;
      do {
        r = wait4(child_.pid, &outcome_.status, 0, &outcome_.usage);
      } while (r < 0 && errno == EINTR);
      outcome_.haveStatus = r == child_.pid;
      ApplyHelperReport(child_, outcome_);
    }
    owner_->live.erase(this);
    Detach();
    Napi::HandleScope scope(env_);
    Napi::Float64Array numbers = Napi::Float64Array::New(env_, kRawLength);
    Napi::Value buffers = Raw(numbers);
    CloseAll();
    onDone_.MakeCallback(env_.Global(), {numbers, buffers}, *context_);
  }

  void Detach() {
    if (handle_) DetachHandle(handle_);
    handle_ = nullptr;
    if (!handleRef_.IsEmpty()) handleRef_.Reset();
  }

  void CloseAll() {
    CloseFd(child_.reportR);
    StopAndClose(&pidPoll_, child_.pidfd);
    StopAndClose(&outPoll_, child_.stdoutR);
    StopAndClose(&errPoll_, child_.stderrR);
    StopAndClose(&inPoll_, child_.stdinW);
    if (!timerClosed_) {
      timerClosed_ = true;
      uv_close(reinterpret_cast<uv_handle_t *>(&timer_), OnClosed);
    }
  }

  static void OnClosed(uv_handle_t *h) {
    AsyncChild *self = static_cast<AsyncChild *>(h->data);
    if (--self->handles_ == 0) {
      EnvChildren *owner = self->owner_;
      bool teardown = owner->tearingDown;
      delete self;
      if (teardown && --owner->closing == 0 && owner->hook) {
        napi_remove_async_cleanup_hook(owner->hook);
        delete owner;
      }
    }
  }

  Napi::Env env_;
  EnvChildren *owner_;
  LaunchSpec spec_;
  WaitOptions opts_;
  WaitOutcome outcome_;
  Launched child_;
  AlarmSlot slot_;
  Escalation phase_ = Escalation::Running;
  double start_ = 0;
  size_t inputOffset_ = 0;
  bool done_ = false;
  bool timerClosed_ = false;
  int handles_ = 0;
  uv_poll_t pidPoll_{}, outPoll_{}, errPoll_{}, inPoll_{};
  uv_timer_t timer_{};
  Napi::Reference<Napi::Buffer<char>> input_;
  Napi::FunctionReference onDone_, onData_;
  std::unique_ptr<Napi::AsyncContext> context_;
  ChildHandle *handle_ = nullptr;
  Napi::ObjectReference handleRef_;
};

// The JS handle of a running child: pid and kill(signal).
class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ChildHandle", {InstanceMethod("kill", &ChildHandle::KillMethod)});
  }
  ChildHandle(const Napi::CallbackInfo &info) : Napi::ObjectWrap<ChildHandle>(info) {}
  AsyncChild *child = nullptr;  // cleared when the child is done

 private:
  Napi::Value KillMethod(const Napi::CallbackInfo &info) {
    int sig = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : SIGKILL;
    return Napi::Boolean::New(info.Env(), child != nullptr && child->Kill(sig));
  }
};

void DetachHandle(ChildHandle *handle) { handle->child = nullptr; }

struct AddonData {
  Napi::FunctionReference handleClass;
  EnvChildren *children = nullptr;
};

void TearDown(napi_async_cleanup_hook_handle handle, void *arg) {
  EnvChildren *children = static_cast<EnvChildren *>(arg);
  children->hook = handle;
  children->tearingDown = true;
  children->closing = children->live.size();
  if (children->closing == 0) {
    napi_remove_async_cleanup_hook(handle);
    delete children;
    return;
  }
  std::set<AsyncChild *> live;
  live.swap(children->live);
  for (AsyncChild *c : live) c->Abandon();
}

// spawnAsync(spec, input, onDone(raw), onData(stream, chunk) | null)
//   -> { handle, pid } while running, or { raw } when the launch failed.
Napi::Value SpawnAsync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  AddonData *data = env.GetInstanceData<AddonData>();
  if (info.Length() < 3 || !info[0].IsObject() || !info[2].IsFunction()) {
    Napi::TypeError err = Napi::TypeError::New(env, "spawnAsync(spec, input, onDone, onData)");
    err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
    throw err;
  }
  std::unique_ptr<AsyncChild> child(new AsyncChild(env, data->children));
  Napi::Object out = Napi::Object::New(env);
  Napi::Function onDone = info[2].As<Napi::Function>();
  Napi::Value onData = info.Length() > 3 ? info[3] : env.Null();
  if (!child->Start(info[0].As<Napi::Object>(), info[1], onDone, onData)) {
    Napi::Float64Array numbers = Napi::Float64Array::New(env, kRawLength);
    out.Set("buffers", child->Raw(numbers));
    out.Set("numbers", numbers);
    return out;
  }
  Napi::Object handle = data->handleClass.New({});
  ChildHandle *wrapped = ChildHandle::Unwrap(handle);
  wrapped->child = child.get();
  child->Attach(wrapped, handle);
  out.Set("handle", handle);
  out.Set("pid", static_cast<double>(child->pid()));
  child.release();  // owned by its uv handles from here on
  return out;
}

}  // namespace

void InitAsync(Napi::Env env, Napi::Object exports) {
  AddonData *data = new AddonData();
  data->handleClass = Napi::Persistent(ChildHandle::Define(env));
  data->children = new EnvChildren();
  napi_add_async_cleanup_hook(env, TearDown, data->children, nullptr);
  env.SetInstanceData<AddonData>(data);
  exports.Set("spawnAsync", Napi::Function::New(env, SpawnAsync, "spawnAsync"));
}

}  // namespace th
