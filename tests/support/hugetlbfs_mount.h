// Huge pages for a test: a reservation in the kernel's pool of one page
// size, and a hugetlbfs mount of that size, each undone at scope exit.
//
// Both need root. The reservation adds pages to the pool and takes the
// same number away again, even when the test fails, so a machine shared
// with others keeps what it had; a pool the kernel could not grow (no
// contiguous memory for a 1 GiB page) leaves ok() false, and why() says so,
// for GTEST_SKIP(). Declare the reservation before the mount: the mount's
// files, and so its pages, go first.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

class HugePageReservation {
 public:
  HugePageReservation(uint64_t page_size, uint64_t pages)
      : knob_("/sys/kernel/mm/hugepages/hugepages-" + std::to_string(page_size >> 10) + "kB/nr_hugepages") {
    const int64_t before = Read();
    if (before < 0) {
      why_ = "no pool of " + std::to_string(page_size >> 10) + " kB pages (" + knob_ + ")";
      return;
    }
    if (!Write(before + static_cast<int64_t>(pages))) {
      why_ = "cannot write " + knob_ + " (" + std::strerror(errno) + "; needs root)";
      return;
    }
    added_ = Read() - before;
    if (added_ < static_cast<int64_t>(pages)) {
      why_ = "the kernel found memory for " + std::to_string(added_) + " of " + std::to_string(pages) +
             " huge pages of " + std::to_string(page_size >> 10) + " kB";
    }
  }
  ~HugePageReservation() {
    if (added_ > 0) Write(Read() - added_);
  }
  HugePageReservation(const HugePageReservation&) = delete;
  HugePageReservation& operator=(const HugePageReservation&) = delete;

  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }

 private:
  int64_t Read() const {
    std::ifstream in(knob_);
    int64_t n = -1;
    in >> n;
    return in ? n : -1;
  }
  bool Write(int64_t n) const {
    std::ofstream out(knob_);
    out << n << "\n";
    out.flush();
    return static_cast<bool>(out);
  }

  std::string knob_;
  std::string why_;
  int64_t added_ = 0;
};

class HugetlbfsMount {
 public:
  explicit HugetlbfsMount(uint64_t page_size) {
    char dir[] = "/tmp/hugetlbfs-test-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      why_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    dir_ = dir;
    const std::string options = "pagesize=" + std::to_string(page_size >> 10) + "K";
    if (mount("none", dir, "hugetlbfs", 0, options.c_str()) != 0) {
      why_ = "cannot mount hugetlbfs -o " + options + " (" + std::strerror(errno) + "; needs root)";
      return;
    }
    mounted_ = true;
  }
  ~HugetlbfsMount() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  HugetlbfsMount(const HugetlbfsMount&) = delete;
  HugetlbfsMount& operator=(const HugetlbfsMount&) = delete;

  bool ok() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string why_;
  bool mounted_ = false;
};

#define SKIP_UNLESS_OK(x) \
  if (!(x).ok()) GTEST_SKIP() << (x).why()
