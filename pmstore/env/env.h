// pmstore/env/: the operating system seam, and the facts of the running
// kernel the store needs (its boot id, boot_id.h). Depends on base/ only;
// mapping/ and everything above reach the operating system through it.
//
// Env: every system call the store and the mapping layer make about a
// pool file goes through one: opening, sizing and allocating it, syncing,
// renaming and removing it, locking it, mapping, unmapping and syncing
// its pages. Env::Default() makes the calls themselves; a test substitutes
// an Env that fails a chosen call with the errno a real failure gives
// (tests/support/fault_injection_env.h), as LevelDB's
// FaultInjectionTestEnv does. libpmem2 maps and unmaps on its own: its
// calls that map (pmem2_map_new, pmem2_vm_reservation_new) go through the
// Env as well, so a test fails them at the library's boundary.
//
// Every call returns 0 or the errno of its failure (never -1 with errno
// set; the libpmem2 calls return libpmem2's code): one way to report, and
// base::ErrnoStatus turns an errno into a status, in one place. Calls that
// a signal can interrupt may return EINTR; callers repeat those
// (RetryInterrupted). Thread-safe: the default holds no state.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <string>

struct pmem2_map;
struct pmem2_config;
struct pmem2_source;
struct pmem2_vm_reservation;

namespace pmstore::env {

class Env {
 public:
  // The operating system itself; never destroyed.
  static Env* Default();

  virtual ~Env() = default;

  virtual int Open(const std::string& path, int flags, mode_t mode, int* fd);
  virtual int Close(int fd);
  virtual int Stat(const std::string& path, struct stat* st);
  virtual int Lstat(const std::string& path, struct stat* st);
  virtual int Fstat(int fd, struct stat* st);
  virtual int Fchmod(int fd, mode_t mode);
  // The type of the file system that holds the file or directory `path`,
  // as /proc/self/mountinfo names it ("ext4", "nfs4", "9p", "fuse.sshfs"):
  // the line of the mount whose id statx reports. Not statfs: a 9p mount
  // reports its server's f_type there (ext4's, say). "" (unknown) when the
  // kernel reports no mount id (before Linux 5.8) or /proc/self/mountinfo
  // does not list it (no /proc); errors are statx's.
  virtual int FileSystemType(const std::string& path, std::string* type);
  // *done: bytes read (fewer than `count` at the end of the file).
  virtual int Pread(int fd, void* buf, size_t count, off_t offset, size_t* done);
  virtual int Fallocate(int fd, off_t offset, off_t length);
  virtual int Ftruncate(int fd, off_t length);
  virtual int Fsync(int fd);
  virtual int Fdatasync(int fd);
  // renameat2(RENAME_NOREPLACE): EEXIST instead of replacing `to`.
  virtual int RenameNoReplace(const std::string& from, const std::string& to);
  virtual int Unlink(const std::string& path);
  // fcntl with a struct flock (F_OFD_SETLK, F_OFD_GETLK, ...).
  virtual int Lock(int fd, int cmd, struct flock* lock);
  virtual int Mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, void** mapped);
  virtual int Munmap(void* addr, size_t length);
  virtual int Msync(void* addr, size_t length, int flags);
  // libpmem2's: 0 or its error code (negative).
  virtual int Pmem2MapNew(pmem2_map** map, const pmem2_config* config, const pmem2_source* source);
  virtual int Pmem2VmReservationNew(pmem2_vm_reservation** reservation, void* addr, size_t size);
};

// `call()` (an Env call) again while it returns EINTR.
template <typename Call>
int RetryInterrupted(const Call& call) {
  int err;
  do {
    err = call();
  } while (err == EINTR);
  return err;
}

}  // namespace pmstore::env
