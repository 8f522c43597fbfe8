// A real tmpfs mount for a test, unmounted and removed at scope exit.
//
// Mounting needs root (CAP_SYS_ADMIN). Where it fails, ok() is false and
// why() says why, so the test can GTEST_SKIP() with that message instead
// of passing without having tested anything.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

class TmpfsMount {
 public:
  // options: e.g. "size=256m,huge=always".
  explicit TmpfsMount(const std::string& options) {
    char dir[] = "/tmp/tmpfs-test-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      why_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    dir_ = dir;
    if (mount("tmpfs", dir, "tmpfs", 0, options.c_str()) != 0) {
      why_ = "cannot mount tmpfs -o " + options + " (" + std::strerror(errno) + "; needs root)";
      return;
    }
    mounted_ = true;
  }
  ~TmpfsMount() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool ok() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string why_;
  bool mounted_ = false;
};

#define SKIP_UNLESS_MOUNTED(m) \
  if (!(m).ok()) GTEST_SKIP() << (m).why()
