#include "pmstore/env/env.h"

#include <libpmem2.h>
#include <sys/mman.h>
#include <unistd.h>

namespace pmstore::env {
namespace {

// What an Env call returns: 0, or the errno the failed call left.
int ErrnoOf(bool failed) { return failed ? errno : 0; }

}  // namespace

Env* Env::Default() {
  static Env* const env = new Env();
  return env;
}

int Env::Open(const std::string& path, int flags, mode_t mode, int* fd) {
  *fd = open(path.c_str(), flags, mode);
  return ErrnoOf(*fd < 0);
}

int Env::Close(int fd) { return ErrnoOf(close(fd) != 0); }

int Env::Stat(const std::string& path, struct stat* st) { return ErrnoOf(stat(path.c_str(), st) != 0); }

int Env::Lstat(const std::string& path, struct stat* st) { return ErrnoOf(lstat(path.c_str(), st) != 0); }

int Env::Fstat(int fd, struct stat* st) { return ErrnoOf(fstat(fd, st) != 0); }

int Env::Pread(int fd, void* buf, size_t count, off_t offset, size_t* done) {
  const ssize_t n = pread(fd, buf, count, offset);
  *done = n < 0 ? 0 : static_cast<size_t>(n);
  return ErrnoOf(n < 0);
}

int Env::Fallocate(int fd, off_t offset, off_t length) { return ErrnoOf(fallocate(fd, 0, offset, length) != 0); }

int Env::Ftruncate(int fd, off_t length) { return ErrnoOf(ftruncate(fd, length) != 0); }

int Env::Fsync(int fd) { return ErrnoOf(fsync(fd) != 0); }

int Env::Fdatasync(int fd) { return ErrnoOf(fdatasync(fd) != 0); }

int Env::RenameNoReplace(const std::string& from, const std::string& to) {
  return ErrnoOf(renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0);
}

int Env::Unlink(const std::string& path) { return ErrnoOf(unlink(path.c_str()) != 0); }

int Env::Lock(int fd, int cmd, struct flock* lock) { return ErrnoOf(fcntl(fd, cmd, lock) != 0); }

int Env::Mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, void** mapped) {
  *mapped = mmap(addr, length, prot, flags, fd, offset);
  return ErrnoOf(*mapped == MAP_FAILED);
}

int Env::Munmap(void* addr, size_t length) { return ErrnoOf(munmap(addr, length) != 0); }

int Env::Msync(void* addr, size_t length, int flags) { return ErrnoOf(msync(addr, length, flags) != 0); }

int Env::Pmem2MapNew(pmem2_map** map, const pmem2_config* config, const pmem2_source* source) {
  return pmem2_map_new(map, config, source);
}

int Env::Pmem2VmReservationNew(pmem2_vm_reservation** reservation, void* addr, size_t size) {
  return pmem2_vm_reservation_new(reservation, addr, size);
}

}  // namespace pmstore::env
