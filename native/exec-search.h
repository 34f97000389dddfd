/* execvp's rules for finding a program, in one place for the launcher (native/launcher.cc, which
 * lists the candidates in the parent) and the measuring helper (native/exec-helper.c, which walks
 * them itself): a name with a '/' is used as it is; otherwise each PATH entry of the child's
 * environment in turn, an empty entry meaning the current directory, "/bin:/usr/bin" when there is
 * no PATH. Errors that mean "not here" move on to the next candidate; EACCES is remembered and
 * reported if nothing else is found. ENOEXEC never falls back to /bin/sh. Plain C, no allocation:
 * safe in the helper between fork and exec. */
#ifndef TILEHARNESS_EXEC_SEARCH_H
#define TILEHARNESS_EXEC_SEARCH_H

#include <errno.h>
#include <string.h>

#define TH_DEFAULT_PATH "/bin:/usr/bin"

static inline int th_exec_error_continues_search(int err) {
  return err == EACCES || err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT;
}

/* The next candidate for `file` along the PATH at *cursor (start: the PATH string), written into
 * buf (NUL-terminated). Returns 1 with a candidate, 0 when the PATH is walked; -1 when the
 * candidate does not fit in `size` bytes (errno ENAMETOOLONG, as execve would say for it). */
static inline int th_next_candidate(const char **cursor, const char *file, char *buf, size_t size) {
  const char *p = *cursor;
  if (p == NULL) return 0;
  const char *colon = strchr(p, ':');
  size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
  size_t flen = strlen(file);
  *cursor = colon ? colon + 1 : NULL;
  size_t need = (dlen ? dlen + 1 : 0) + flen + 1;
  if (need > size) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (dlen) {
    memcpy(buf, p, dlen);
    buf[dlen] = '/';
    memcpy(buf + dlen + 1, file, flen + 1);
  } else {
    memcpy(buf, file, flen + 1);
  }
  return 1;
}

#endif
