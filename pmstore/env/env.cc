#include "pmstore/env/env.h"

#include <libpmem2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "pmstore/base/kernel_file.h"

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

int Env::Fchmod(int fd, mode_t mode) { return ErrnoOf(fchmod(fd, mode) != 0); }

int Env::FileSystemType(const std::string& path, std::string* type) {
  type->clear();
  struct statx stx {};
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_MNT_ID, &stx) != 0) return errno;
  if ((stx.stx_mask & STATX_MNT_ID) == 0) return 0;
  // "36 35 98:0 /dir /mnt rw,noatime master:1 - ext4 /dev/sda1 rw": the
  // mount id first, the type after the " - " that ends the optional fields.
  for (absl::string_view line : absl::StrSplit(base::ReadWholeFile("/proc/self/mountinfo"), '\n')) {
    uint64_t id = 0;
    if (!absl::SimpleAtoi(line.substr(0, line.find(' ')), &id) || id != stx.stx_mnt_id) continue;
    const size_t dash = line.find(" - ");
    if (dash == absl::string_view::npos) return EINVAL;
    const absl::string_view fields = line.substr(dash + 3);
    *type = std::string(fields.substr(0, fields.find(' ')));
    return 0;
  }
  // No such line: no /proc (a bare chroot), or a mount outside this
  // process's root. Unknown, which refuses nothing.
  return 0;
}

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
