/* An LD_PRELOAD shim for the CLI tests: msync or fdatasync fails with EIO,
 * the way a device that stops taking writes makes it fail, after a number
 * of calls that succeed:
 *
 *   PMSTORE_FAIL_CALL=msync|fdatasync   the call to fail (unset: none)
 *   PMSTORE_FAIL_AFTER=N                let N calls through first (default 0)
 *
 * Every call of the failing kind after the first N fails, as a device
 * that stays broken would make it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long calls_of(const char* name) {
  static long msync_calls, fdatasync_calls;
  return strcmp(name, "msync") == 0 ? msync_calls++ : fdatasync_calls++;
}

static int should_fail(const char* name) {
  const char* which = getenv("PMSTORE_FAIL_CALL");
  if (which == NULL || strcmp(which, name) != 0) return 0;
  const char* after = getenv("PMSTORE_FAIL_AFTER");
  return calls_of(name) >= (after != NULL ? atol(after) : 0);
}

int msync(void* addr, size_t length, int flags) {
  static int (*real)(void*, size_t, int);
  if (should_fail("msync")) {
    errno = EIO;
    return -1;
  }
  if (real == NULL) real = (int (*)(void*, size_t, int))dlsym(RTLD_NEXT, "msync");
  return real(addr, length, flags);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (should_fail("fdatasync")) {
    errno = EIO;
    return -1;
  }
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}
