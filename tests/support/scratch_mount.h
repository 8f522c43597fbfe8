// A mount of a memory file system (tmpfs, hugetlbfs) on a fresh directory
// for a test, unmounted and removed at scope exit.
//
// Mounting needs root (CAP_SYS_ADMIN). Where it fails, ok() is false and
// why() says why, so the test can GTEST_SKIP() with that message instead
// of passing without having tested anything. Under CI (the CI environment
// variable set, as .ci/run sets it) a mount that fails fails the test
// instead (SKIP_UNLESS_MOUNTED): a broken mount must not pass CI in silence.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

// Whether a mount that fails fails the test (CI set, and not "0" or
// "false") rather than skipping it.
inline bool MountFailureFailsTests() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::strcmp(ci, "0") != 0 && std::strcmp(ci, "false") != 0;
}

// Ends a test whose mount `m` failed: a failure under CI, else a skip
// with the reason.
#define SKIP_UNLESS_MOUNTED(m)                                                                   \
  if (!(m).ok()) {                                                                               \
    if (MountFailureFailsTests()) GTEST_FAIL() << (m).why() << " (CI is set: a mount must work)"; \
    GTEST_SKIP() << (m).why();                                                                   \
  }

class ScratchMount {
 public:
  // type: "tmpfs", "hugetlbfs"; options: e.g. "size=256m,huge=always".
  ScratchMount(const std::string& type, const std::string& options) {
    std::string dir = "/tmp/" + type + "-test-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) {
      why_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    dir_ = dir;
    if (mount("none", dir_.c_str(), type.c_str(), 0, options.c_str()) != 0) {
      why_ = "cannot mount " + type + " -o " + options + " (" + std::strerror(errno) + "; needs root)";
      return;
    }
    mounted_ = true;
  }
  ~ScratchMount() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  ScratchMount(const ScratchMount&) = delete;
  ScratchMount& operator=(const ScratchMount&) = delete;

  bool ok() const { return mounted_; }
  bool mount_failed() const { return !mounted_; }
  const std::string& why() const { return why_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string why_;
  bool mounted_ = false;
};
