// anonymousFile(name, bytes) -> fd: the bytes in a memfd (memfd_create, close-on-exec), a file
// that has no name on any file system. A tool that must read its input from a path (ptxas's PTX
// when the text is too big for one argv string) gets it as /dev/fd/N on an inherited descriptor,
// so nothing is ever left on disk, whichever way this process ends (a SIGKILL included). Node has
// no memfd_create; this is the whole of it. Errors are thrown with the errno's name as `code`
// (ENOSYS on a kernel without memfd: the caller falls back to a private temporary file).
#include <napi.h>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "addon.h"

namespace th {

namespace {

Napi::Error ErrnoError(Napi::Env env, const char *call, int err) {
  const char *name = strerrorname_np(err);
  Napi::Error e = Napi::Error::New(env, std::string(call) + ": " + strerror(err));
  e.Set("code", name ? name : "EUNKNOWN");
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", call);
  return e;
}

Napi::Value AnonymousFile(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsTypedArray()) {
    throw Napi::TypeError::New(env, "anonymousFile(name: string, bytes: Uint8Array)");
  }
  std::string name = info[0].As<Napi::String>().Utf8Value();
  Napi::Uint8Array bytes = info[1].As<Napi::Uint8Array>();
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) throw ErrnoError(env, "memfd_create", errno);
  const uint8_t *p = bytes.Data();
  size_t left = bytes.ByteLength();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      throw ErrnoError(env, "write", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Napi::Number::New(env, fd);
}

}  // namespace

void InitAnonymousFile(Napi::Env env, Napi::Object exports) {
  exports.Set("anonymousFile", Napi::Function::New(env, AnonymousFile, "anonymousFile"));
}

}  // namespace th
