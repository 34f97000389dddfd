/* The measuring helper's report (native/exec-helper.c writes it on fd 3; native/waiter.cc reads
 * it): one fixed-size record, the one definition of its layout. Plain C, included from C++ too. */
#ifndef TILEHARNESS_HELPER_REPORT_H
#define TILEHARNESS_HELPER_REPORT_H

#include <stdint.h>
#include <sys/resource.h>

#define TH_REPORT_FD 3
#define TH_REPORT_MAGIC 0x54484558u /* "THEX" */

enum th_report_kind {
  TH_REPORT_RAN = 1,        /* the target ran: status is its wait status, usage its rusage */
  TH_REPORT_EXEC_FAILED = 2 /* exec failed: err is the errno */
};

struct th_helper_report {
  uint32_t magic;
  int32_t kind;
  int32_t status;
  int32_t err;
  struct rusage usage;
};

#endif
