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
#include <string.h>
#include <sys/resource.h>

#include "rusage-fields.h"

#define TH_REPORT_FD 3 /* the default; exec-helper -R moves it off the extra fds a caller asked for */
#define TH_REPORT_MAGIC 0x54484558u /* "THEX" */
/* The CPUs -c can name: 0 to TH_CPU_SET_BITS - 1, the harness's own limit (glibc's CPU_SETSIZE,
 * the addon's cpuSetSize) whatever the helper's libc calls CPU_SETSIZE (musl: 128). */
#define TH_CPU_SET_BITS 1024

enum th_report_kind {
  TH_REPORT_RAN = 1,         /* the target ran: status is its wait status, usage its rusage */
  TH_REPORT_EXEC_FAILED = 2, /* exec failed: err is the errno (after the target's own setup) */
  TH_REPORT_STARTED = 3,     /* the target exists: pid; err is non-zero when its exec or setup failed (it is exiting) */
  TH_REPORT_FORK_FAILED = 4, /* the helper could not create the target: err */
  TH_REPORT_SETUP_FAILED = 5 /* the target's setup failed: err; stage a TH_STAGES number (setsid, rlimit, setpgid, ...), detail the resource */
};

/* The target's rusage in fixed-width fields, one per TH_RUSAGE_FIELDS row in its order (a timeval
 * as <field>_sec and <field>_usec): libcs lay out struct rusage differently (musl pads it with
 * reserved words, glibc does not), and the helper need not be built against the addon's libc. */
#define TH_REPORT_TIME_FIELD(name, field) int64_t field##_sec, field##_usec;
#define TH_REPORT_COUNT_FIELD(name, field) int64_t field;
struct th_report_rusage {
  TH_RUSAGE_FIELDS(TH_REPORT_TIME_FIELD, TH_REPORT_COUNT_FIELD)
};
#undef TH_REPORT_TIME_FIELD
#undef TH_REPORT_COUNT_FIELD

#define TH_REPORT_TIME_COPY(name, field) \
  to->field##_sec = from->field.tv_sec;  \
  to->field##_usec = from->field.tv_usec;
#define TH_REPORT_COUNT_COPY(name, field) to->field = from->field;
static inline void th_report_rusage_from(struct th_report_rusage *to, const struct rusage *from) {
  TH_RUSAGE_FIELDS(TH_REPORT_TIME_COPY, TH_REPORT_COUNT_COPY)
}
#undef TH_REPORT_TIME_COPY
#undef TH_REPORT_COUNT_COPY

#define TH_REPORT_TIME_COPY(name, field) \
  to->field.tv_sec = from->field##_sec;  \
  to->field.tv_usec = from->field##_usec;
#define TH_REPORT_COUNT_COPY(name, field) to->field = from->field;
static inline void th_report_rusage_to(struct rusage *to, const struct th_report_rusage *from) {
  memset(to, 0, sizeof *to);
  TH_RUSAGE_FIELDS(TH_REPORT_TIME_COPY, TH_REPORT_COUNT_COPY)
}
#undef TH_REPORT_TIME_COPY
#undef TH_REPORT_COUNT_COPY

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
  struct th_report_rusage usage;
};

/* The same 184 bytes whichever libc or language the writer and the reader were built with. */
#ifdef __cplusplus
static_assert(sizeof(struct th_helper_report) == 184, "the helper's report is a fixed wire format");
#else
_Static_assert(sizeof(struct th_helper_report) == 184, "the helper's report is a fixed wire format");
#endif

#endif
