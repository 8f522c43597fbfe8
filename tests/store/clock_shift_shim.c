/* An LD_PRELOAD shim for the CLI tests: CLOCK_REALTIME reads
 * PMSTORE_CLOCK_SHIFT_S seconds later than it is, so a test can see what
 * pmstore does with a file a day old without waiting a day. Other clocks
 * are left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clock, struct timespec* now) {
  static int (*real)(clockid_t, struct timespec*);
  if (real == NULL) real = (int (*)(clockid_t, struct timespec*))dlsym(RTLD_NEXT, "clock_gettime");
  const int result = real(clock, now);
  const char* shift = getenv("PMSTORE_CLOCK_SHIFT_S");
  if (result == 0 && clock == CLOCK_REALTIME && shift != NULL) now->tv_sec += atol(shift);
  return result;
}
