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

#define TH_REPORT_FD 3 /* the default; exec-helper -R moves it off the extra fds a caller asked for */
#define TH_REPORT_MAGIC 0x54484558u /* "THEX" */
/* The CPUs -c can name: 0 to TH_CPU_SET_BITS - 1, the harness's own limit (glibc's CPU_SETSIZE,
 * the addon's cpuSetSize) whatever the helper's libc calls CPU_SETSIZE (musl: 128). */
#define TH_CPU_SET_BITS 1024

enum th_report_kind {
  TH_REPORT_RAN = 1,         /* the target ran: status is its wait status, usage its rusage */
  TH_REPORT_EXEC_FAILED = 2, /* exec failed: err is the errno (after the target's own setup) */
  TH_REPORT_STARTED = 3,     /* the target exists: pid */
  TH_REPORT_FORK_FAILED = 4, /* the helper could not create the target: err */
  TH_REPORT_SETUP_FAILED = 5 /* the target's setup failed: err; stage a TH_STAGES number (setsid, rlimit, setpgid, ...), detail the resource */
};

/* The target's rusage in fixed-width fields, in the kernel's order (two timevals, then fourteen
 * counters): libcs lay out struct rusage differently (musl pads it with reserved words, glibc does
 * not), and the helper need not be built against the addon's libc. */
struct th_report_rusage {
  int64_t utime_sec, utime_usec, stime_sec, stime_usec;
  int64_t maxrss, ixrss, idrss, isrss, minflt, majflt, nswap, inblock, oublock, msgsnd, msgrcv, nsignals, nvcsw, nivcsw;
};

static inline void th_report_rusage_from(struct th_report_rusage *to, const struct rusage *from) {
  to->utime_sec = from->ru_utime.tv_sec;
  to->utime_usec = from->ru_utime.tv_usec;
  to->stime_sec = from->ru_stime.tv_sec;
  to->stime_usec = from->ru_stime.tv_usec;
  to->maxrss = from->ru_maxrss;
  to->ixrss = from->ru_ixrss;
  to->idrss = from->ru_idrss;
  to->isrss = from->ru_isrss;
  to->minflt = from->ru_minflt;
  to->majflt = from->ru_majflt;
  to->nswap = from->ru_nswap;
  to->inblock = from->ru_inblock;
  to->oublock = from->ru_oublock;
  to->msgsnd = from->ru_msgsnd;
  to->msgrcv = from->ru_msgrcv;
  to->nsignals = from->ru_nsignals;
  to->nvcsw = from->ru_nvcsw;
  to->nivcsw = from->ru_nivcsw;
}

static inline void th_report_rusage_to(struct rusage *to, const struct th_report_rusage *from) {
  memset(to, 0, sizeof *to);
  to->ru_utime.tv_sec = from->utime_sec;
  to->ru_utime.tv_usec = from->utime_usec;
  to->ru_stime.tv_sec = from->stime_sec;
  to->ru_stime.tv_usec = from->stime_usec;
  to->ru_maxrss = from->maxrss;
  to->ru_ixrss = from->ixrss;
  to->ru_idrss = from->idrss;
  to->ru_isrss = from->isrss;
  to->ru_minflt = from->minflt;
  to->ru_majflt = from->majflt;
  to->ru_nswap = from->nswap;
  to->ru_inblock = from->inblock;
  to->ru_oublock = from->oublock;
  to->ru_msgsnd = from->msgsnd;
  to->ru_msgrcv = from->msgrcv;
  to->ru_nsignals = from->nsignals;
  to->ru_nvcsw = from->nvcsw;
  to->ru_nivcsw = from->nivcsw;
}

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
