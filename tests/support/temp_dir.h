// A scratch directory on a chosen file system, removed with its contents
// at scope exit. The default parent /var/tmp is on the machine's root
// file system (ext4 here), not on a tmpfs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

class TempDir {
 public:
  explicit TempDir(const std::string& parent = "/var/tmp") {
    std::string pattern = parent + "/pmstore-test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};
