// Strings kept back to back in one buffer, each ended by its NUL. A spawn copies its argv and its
// environment (often fifty strings) once per child: kept this way they take two allocations
// however many there are, where a std::string each took one per string (and a free each later).
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace th {

class StringList {
 public:
  StringList() = default;
  StringList(std::initializer_list<const char *> strings) {  // NOLINT: spec.argv = {"sh", "-c", ...}
    for (const char *s : strings) Add(s);
  }
  void Reserve(size_t count, size_t bytes) {
    offsets_.reserve(count);
    bytes_.reserve(bytes);
  }
  void Add(const char *s, size_t length) {
    offsets_.push_back(bytes_.size());
    bytes_.append(s, length);
    bytes_.push_back('\0');
  }
  void Add(const char *s) { Add(s, strlen(s)); }
  // Every string of a null-terminated array (environ), each measured once: one pass finds where
  // each goes, one copies it there.
  void AddAll(char *const *strings) {
    size_t count = 0;
    while (strings && strings[count]) count++;
    size_t first = offsets_.size(), end = bytes_.size();
    offsets_.reserve(first + count);
    for (size_t i = 0; i < count; i++) {
      offsets_.push_back(end);
      end += strlen(strings[i]) + 1;
    }
    bytes_.resize(end);  // zero-filled: each NUL is in place
    for (size_t i = 0; i < count; i++) {
      size_t at = offsets_[first + i], next = i + 1 < count ? offsets_[first + i + 1] : end;
      memcpy(&bytes_[at], strings[i], next - at - 1);
    }
  }
  // Room for one more string of `length` bytes, NUL included after them: the caller fills it
  // before anything else is added (the buffer may move on the next Add).
  char *Append(size_t length) {
    offsets_.push_back(bytes_.size());
    bytes_.resize(bytes_.size() + length + 1);
    return &bytes_[offsets_.back()];
  }
  size_t size() const { return offsets_.size(); }
  bool empty() const { return offsets_.empty(); }
  const char *operator[](size_t i) const { return bytes_.data() + offsets_[i]; }
  // The strings as execve takes them, a null pointer after the last; valid while this list is
  // neither changed nor destroyed.
  std::vector<char *> Pointers() const {
    std::vector<char *> out;
    out.reserve(offsets_.size() + 1);
    for (size_t offset : offsets_) out.push_back(const_cast<char *>(bytes_.data() + offset));
    out.push_back(nullptr);
    return out;
  }

 private:
  std::string bytes_;
  std::vector<size_t> offsets_;
};

}  // namespace th
