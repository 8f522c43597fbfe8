// An Env (pmstore/env/env.h) for tests: it makes every call through the
// real one, records it (which call, and the file or directory it is about),
// and fails the call at a chosen place in that record with a chosen errno,
// as a failing device, a full or read-only file system, or a signal would
// (LevelDB's FaultInjectionTestEnv in this store's terms).
//
// A failed call does nothing, as the system call would not have, except
// the calls that release a resource (close, munmap): Linux releases the
// descriptor even when close reports an error, and the test must not leak
// one per injected failure, so those still run and then report it.
#pragma once

#include <libpmem2.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "pmstore/env/env.h"

namespace pmstore::testing {

class FaultInjectionEnv final : public env::Env {
 public:
  enum class Call {
    kOpen, kClose, kStat, kLstat, kFstat, kFileSystemType, kPread, kFallocate, kFtruncate, kFsync, kFdatasync, kRename,
    kUnlink, kLock, kMmap, kMunmap, kMsync, kPmem2MapNew, kPmem2VmReservationNew,
  };
  // The word a failure's message must show for each call.
  static const char* Name(Call call) {
    switch (call) {
      case Call::kOpen: return "open";
      case Call::kClose: return "close";
      case Call::kStat: return "stat";
      case Call::kLstat: return "stat";
      case Call::kFstat: return "fstat";
      case Call::kFileSystemType: return "statx";
      case Call::kPread: return "pread";
      case Call::kFallocate: return "fallocate";
      case Call::kFtruncate: return "ftruncate";
      case Call::kFsync: return "fsync";
      case Call::kFdatasync: return "fdatasync";
      case Call::kRename: return "rename";
      case Call::kUnlink: return "unlink";
      case Call::kLock: return "fcntl";
      case Call::kMmap: return "mmap";
      case Call::kMunmap: return "munmap";
      case Call::kMsync: return "msync";
      case Call::kPmem2MapNew: return "pmem2_map_new";
      case Call::kPmem2VmReservationNew: return "pmem2_vm_reservation_new";
    }
    return "?";
  }
  struct Record {
    Call call;
    std::string subject;  // the file or directory, "" when none
  };

  // Forgets the record and any failure to come.
  void Reset() {
    trace_.clear();
    failures_.clear();
  }
  // Fails call number `index` of the record (from 0, since Reset) with
  // errno `err` (for libpmem2's calls, its code -err).
  void FailAt(size_t index, int err) { failures_[index] = err; }
  const std::vector<Record>& trace() const { return trace_; }
  // From now on every file seems to lie on a file system of this type
  // (as /proc/self/mountinfo names it), as one on NFS would to a machine
  // without NFS; "" shows the real one again. Reset leaves it.
  void PretendFileSystemType(const std::string& type) { file_system_type_ = type; }

  int Open(const std::string& path, int flags, mode_t mode, int* fd) override {
    if (const int err = Next(Call::kOpen, path); err != 0) return err;
    const int err = Real()->Open(path, flags, mode, fd);
    if (err == 0) paths_[*fd] = path;
    return err;
  }
  int Close(int fd) override {
    const int injected = Next(Call::kClose, PathOf(fd));
    const int err = Real()->Close(fd);
    paths_.erase(fd);
    return injected != 0 ? injected : err;
  }
  int Stat(const std::string& path, struct stat* st) override {
    if (const int err = Next(Call::kStat, path); err != 0) return err;
    return Real()->Stat(path, st);
  }
  int Lstat(const std::string& path, struct stat* st) override {
    if (const int err = Next(Call::kLstat, path); err != 0) return err;
    return Real()->Lstat(path, st);
  }
  int Fstat(int fd, struct stat* st) override {
    if (const int err = Next(Call::kFstat, PathOf(fd)); err != 0) return err;
    return Real()->Fstat(fd, st);
  }
  int FileSystemType(const std::string& path, std::string* type) override {
    if (const int err = Next(Call::kFileSystemType, path); err != 0) return err;
    const int err = Real()->FileSystemType(path, type);
    if (err == 0 && !file_system_type_.empty()) *type = file_system_type_;
    return err;
  }
  int Pread(int fd, void* buf, size_t count, off_t offset, size_t* done) override {
    if (const int err = Next(Call::kPread, PathOf(fd)); err != 0) return err;
    return Real()->Pread(fd, buf, count, offset, done);
  }
  int Fallocate(int fd, off_t offset, off_t length) override {
    if (const int err = Next(Call::kFallocate, PathOf(fd)); err != 0) return err;
    return Real()->Fallocate(fd, offset, length);
  }
  int Ftruncate(int fd, off_t length) override {
    if (const int err = Next(Call::kFtruncate, PathOf(fd)); err != 0) return err;
    return Real()->Ftruncate(fd, length);
  }
  int Fsync(int fd) override {
    if (const int err = Next(Call::kFsync, PathOf(fd)); err != 0) return err;
    return Real()->Fsync(fd);
  }
  int Fdatasync(int fd) override {
    if (const int err = Next(Call::kFdatasync, PathOf(fd)); err != 0) return err;
    return Real()->Fdatasync(fd);
  }
  int RenameNoReplace(const std::string& from, const std::string& to) override {
    if (const int err = Next(Call::kRename, to); err != 0) return err;
    return Real()->RenameNoReplace(from, to);
  }
  int Unlink(const std::string& path) override {
    if (const int err = Next(Call::kUnlink, path); err != 0) return err;
    return Real()->Unlink(path);
  }
  int Lock(int fd, int cmd, struct flock* lock) override {
    if (const int err = Next(Call::kLock, PathOf(fd)); err != 0) return err;
    return Real()->Lock(fd, cmd, lock);
  }
  int Mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, void** mapped) override {
    if (const int err = Next(Call::kMmap, fd >= 0 ? PathOf(fd) : ""); err != 0) return err;
    return Real()->Mmap(addr, length, prot, flags, fd, offset, mapped);
  }
  int Munmap(void* addr, size_t length) override {
    const int injected = Next(Call::kMunmap, "");
    const int err = Real()->Munmap(addr, length);
    return injected != 0 ? injected : err;
  }
  int Msync(void* addr, size_t length, int flags) override {
    if (const int err = Next(Call::kMsync, ""); err != 0) return err;
    return Real()->Msync(addr, length, flags);
  }
  int Pmem2MapNew(pmem2_map** map, const pmem2_config* config, const pmem2_source* source) override {
    if (const int err = Next(Call::kPmem2MapNew, ""); err != 0) return -err;
    return Real()->Pmem2MapNew(map, config, source);
  }
  int Pmem2VmReservationNew(pmem2_vm_reservation** reservation, void* addr, size_t size) override {
    if (const int err = Next(Call::kPmem2VmReservationNew, ""); err != 0) return -err;
    return Real()->Pmem2VmReservationNew(reservation, addr, size);
  }

 private:
  static env::Env* Real() { return env::Env::Default(); }
  std::string PathOf(int fd) const {
    const auto it = paths_.find(fd);
    return it == paths_.end() ? "" : it->second;
  }
  // Records the call; the errno to fail it with, or 0.
  int Next(Call call, const std::string& subject) {
    const size_t index = trace_.size();
    trace_.push_back({call, subject});
    const auto failure = failures_.find(index);
    return failure == failures_.end() ? 0 : failure->second;
  }

  std::vector<Record> trace_;
  std::map<size_t, int> failures_;
  std::map<int, std::string> paths_;
  std::string file_system_type_;
};

}  // namespace pmstore::testing
