/* The child's rusage, declared once: X-macro rows in process.resourceUsage()'s names, order and
 * units, which is also the kernel's order of struct rusage's fields. TIME(name, field) is a struct
 * timeval of struct rusage (reported in microseconds), COUNT(name, field) a counter. The addon's
 * result slots (boundary.h) and the measuring helper's report (helper-report.h) are both generated
 * from it. Plain C, included from C++ too. */
#ifndef TILEHARNESS_RUSAGE_FIELDS_H
#define TILEHARNESS_RUSAGE_FIELDS_H

#define TH_RUSAGE_FIELDS(TIME, COUNT)                                                                   \
  TIME(userCPUTime, ru_utime) TIME(systemCPUTime, ru_stime) COUNT(maxRSS, ru_maxrss)                     \
  COUNT(sharedMemorySize, ru_ixrss) COUNT(unsharedDataSize, ru_idrss) COUNT(unsharedStackSize, ru_isrss) \
  COUNT(minorPageFault, ru_minflt) COUNT(majorPageFault, ru_majflt) COUNT(swappedOut, ru_nswap)         \
  COUNT(fsRead, ru_inblock) COUNT(fsWrite, ru_oublock) COUNT(ipcSent, ru_msgsnd)                         \
  COUNT(ipcReceived, ru_msgrcv) COUNT(signalsCount, ru_nsignals)                                       \
  COUNT(voluntaryContextSwitches, ru_nvcsw) COUNT(involuntaryContextSwitches, ru_nivcsw)

#endif
