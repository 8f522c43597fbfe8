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

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "support/scratch_mount.h"

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

// A hugetlbfs mount of `page_size` pages (scratch_mount.h).
class HugetlbfsMount : public ScratchMount {
 public:
  explicit HugetlbfsMount(uint64_t page_size)
      : ScratchMount("hugetlbfs", "pagesize=" + std::to_string(page_size >> 10) + "K") {}
};

// Both at once, in the order they must be undone: `pages` reserved, then a
// mount of that page size whose files use them. ok() when both are.
class HugetlbfsWithPages {
 public:
  HugetlbfsWithPages(uint64_t page_size, uint64_t pages) : pool_(page_size, pages), mount_(page_size) {}
  bool ok() const { return pool_.ok() && mount_.ok(); }
  const std::string& why() const { return pool_.ok() ? mount_.why() : pool_.why(); }
  const std::string& dir() const { return mount_.dir(); }

 private:
  HugePageReservation pool_;
  HugetlbfsMount mount_;
};

#define SKIP_UNLESS_OK(x) \
  if (!(x).ok()) GTEST_SKIP() << (x).why()
