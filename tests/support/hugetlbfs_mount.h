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
#include <filesystem>
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

// A hugetlbfs mount of `page_size` pages (scratch_mount.h). A kernel that
// offers no pages of that size (no 1 GiB pages on a CPU without pdpe1gb)
// cannot mount one: that is the machine, not a failed mount.
class HugetlbfsMount : public ScratchMount {
 public:
  explicit HugetlbfsMount(uint64_t page_size)
      : ScratchMount("hugetlbfs", "pagesize=" + std::to_string(page_size >> 10) + "K"),
        offered_(std::filesystem::is_directory("/sys/kernel/mm/hugepages/hugepages-" +
                                               std::to_string(page_size >> 10) + "kB")),
        not_offered_("this kernel offers no huge pages of " + std::to_string(page_size >> 10) + " kB") {}
  bool mount_failed() const { return offered_ && ScratchMount::mount_failed(); }
  const std::string& why() const { return offered_ ? ScratchMount::why() : not_offered_; }

 private:
  bool offered_;
  std::string not_offered_;
};

// Both at once, in the order they must be undone: `pages` reserved, then a
// mount of that page size whose files use them. ok() when both are.
class HugetlbfsWithPages {
 public:
  HugetlbfsWithPages(uint64_t page_size, uint64_t pages) : pool_(page_size, pages), mount_(page_size) {}
  bool ok() const { return pool_.ok() && mount_.ok(); }
  const std::string& why() const { return pool_.ok() ? mount_.why() : pool_.why(); }
  // The pages were there and the mount failed (not the kernel short of
  // memory for the pages, which a machine may be).
  bool mount_failed() const { return pool_.ok() && mount_.mount_failed(); }
  const std::string& dir() const { return mount_.dir(); }

 private:
  HugePageReservation pool_;
  HugetlbfsMount mount_;
};

// Ends a test whose pages or mount `x` failed: a failed mount fails it
// under CI (scratch_mount.h), the kernel short of huge pages skips it.
#define SKIP_UNLESS_OK(x)                                                                        \
  if (!(x).ok()) {                                                                               \
    if ((x).mount_failed() && MountFailureFailsTests()) {                                        \
      GTEST_FAIL() << (x).why() << " (CI is set: a mount must work)";                            \
    }                                                                                            \
    GTEST_SKIP() << (x).why();                                                                   \
  }
