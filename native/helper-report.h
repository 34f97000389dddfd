/* The measuring helper's reports (native/exec-helper.c writes them on fd 3, or the fd its -R
 * names; native/waiter.cc reads them): fixed-size records, the one definition of their layout.
 * Plain C, included from C++ too.
 *
 * First a STARTED record as soon as the target exists (its pid: the harness signals the target
 * itself from then on, SIGKILL and SIGSTOP included, which a helper could never forward), then
 * one final record: RAN (the target's wait status and rusage), EXEC_FAILED or FORK_FAILED (the
 * errno). */
#ifndef TILEHARNESS_HELPER_REPORT_H
#define TILEHARNESS_HELPER_REPORT_H

#include <stdint.h>
#include <sys/resource.h>

#define TH_REPORT_FD 3 /* the default; exec-helper -R moves it off the extra fds a caller asked for */
#define TH_REPORT_MAGIC 0x54484558u /* "THEX" */

enum th_report_kind {
  TH_REPORT_RAN = 1,         /* the target ran: status is its wait status, usage its rusage */
  TH_REPORT_EXEC_FAILED = 2, /* exec failed: err is the errno (after the target's own setup) */
  TH_REPORT_STARTED = 3,     /* the target exists: pid */
  TH_REPORT_FORK_FAILED = 4, /* the helper could not create the target: err */
  TH_REPORT_SETUP_FAILED = 5 /* the target's setup failed: err; stage a TH_STAGES number (setsid, rlimit, setpgid, ...), detail the resource */
};

struct th_helper_report {
  uint32_t magic;
  int32_t kind;
  int32_t status;
  int32_t err;
  int32_t pid;
  int32_t stage;
  int32_t detail;
  int32_t reserved;
  /* RAN: the target's own wall time, CLOCK_MONOTONIC from just before the helper starts it to
   * its reaping, so a measured run's duration leaves out the helper's exec and exit. */
  int64_t wall_ns;
  struct rusage usage;
};

#endif
