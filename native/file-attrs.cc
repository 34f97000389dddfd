// copyExtendedAttributes(from, toFd) -> names not copied: every extended attribute of the file
// `from` (its POSIX ACL, system.posix_acl_access, among them) set on the open file `toFd`. The
// CLI replaces an output file by a temp file renamed over it (lib/cli/output.ts), and the new
// inode had none of the old one's: an ACL lost left the mode's group bits, which then are the
// ACL's mask, for the group owner alone (it could gain write), and user.* attributes were gone.
// Node has no xattr calls; this is the whole of it. Best effort, as cp --preserve=xattr: an
// attribute the file system or this process's privileges refuse is named in the result, not
// thrown. A file system without xattrs (ENOTSUP) has nothing to copy.
#include <napi.h>

#include <errno.h>
#include <sys/xattr.h>

#include <string>
#include <vector>

#include "addon.h"

namespace th {

namespace {

// listxattr's or getxattr's answer, sized as the value grows between the calls (EAGAIN-free).
template <typename Call>
bool ReadSized(std::vector<char> &buf, Call call) {
  for (int attempt = 0; attempt < 8; attempt++) {
    ssize_t size = call(nullptr, 0);
    if (size < 0) return false;
    buf.resize(static_cast<size_t>(size));
    ssize_t got = size == 0 ? 0 : call(buf.data(), buf.size());
    if (got >= 0) {
      buf.resize(static_cast<size_t>(got));
      return true;
    }
    if (errno != ERANGE) return false;
  }
  return false;
}

Napi::Value CopyExtendedAttributes(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, "copyExtendedAttributes(from: string, toFd: number)");
  }
  std::string from = info[0].As<Napi::String>().Utf8Value();
  int fd = info[1].As<Napi::Number>().Int32Value();
  Napi::Array failed = Napi::Array::New(env);
  std::vector<char> names;
  if (!ReadSized(names, [&](char *b, size_t n) { return listxattr(from.c_str(), b, n); })) {
    if (errno != ENOTSUP && errno != ENOENT) failed.Set(failed.Length(), "(list)");
    return failed;
  }
  std::vector<char> value;
  for (size_t at = 0; at < names.size();) {
    std::string name(&names[at]);
    at += name.size() + 1;
    if (name.empty()) continue;
    bool ok = ReadSized(value, [&](char *b, size_t n) { return getxattr(from.c_str(), name.c_str(), b, n); }) &&
              fsetxattr(fd, name.c_str(), value.data(), value.size(), 0) == 0;
    if (!ok) failed.Set(failed.Length(), name);
  }
  return failed;
}

}  // namespace

void InitFileAttrs(Napi::Env env, Napi::Object exports) {
  exports.Set("copyExtendedAttributes", Napi::Function::New(env, CopyExtendedAttributes, "copyExtendedAttributes"));
}

}  // namespace th
