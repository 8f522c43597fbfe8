#include "pmstore/persist/persister.h"

#include <algorithm>
#include <utility>

namespace pmstore::internal {
namespace {

constexpr uintptr_t kPage = 4096;

// Cache-line (or byte) granularity: libpmem2's flush and drain. Drain
// fences only the calling thread's flushes, so the store re-flushes, from
// the committing thread, any line another thread flushed without a fence
// (see StoreImpl::Commit); this class need not remember ranges.
class CacheLinePersister final : public Persister {
 public:
  CacheLinePersister(const mapping::PersistOps& ops, const mapping::PoolFile& file) : ops_(ops), file_(file) {}
  absl::Status Flush(const void* addr, size_t size) override {
    ops_.flush(addr, size);
    return absl::OkStatus();
  }
  absl::Status Drain() override {
    ops_.drain();
    return absl::OkStatus();
  }
  absl::Status SyncLength() override { return file_.SyncData(); }

 private:
  mapping::PersistOps ops_;
  const mapping::PoolFile& file_;
};

// Page granularity: msync is the only way to persist, and it costs a
// system call and, on a page-cache file system, a device cache flush; so
// ranges are collected and synced together at Drain, one msync per mapped
// piece written to. libpmem2's own page persist is never used: it aborts
// the process when msync fails.
class PagePersister final : public Persister {
 public:
  PagePersister(const mapping::Mapping& mapping, const mapping::PoolFile& file) : mapping_(mapping), file_(file) {}

  absl::Status Flush(const void* addr, size_t size) override {
    if (size == 0) return absl::OkStatus();
    const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(kPage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + size + kPage - 1) & ~(kPage - 1);
    if (!ranges_.empty() && ranges_.back().second >= start && ranges_.back().first <= end) {
      ranges_.back().first = std::min(ranges_.back().first, start);
      ranges_.back().second = std::max(ranges_.back().second, end);
      return absl::OkStatus();
    }
    ranges_.emplace_back(start, end);
    return absl::OkStatus();
  }

  absl::Status Drain() override {
    if (ranges_.empty()) return absl::OkStatus();
    // Within a piece, one msync over the span of what was flushed: each
    // call costs a device cache flush, so one call over a span (whose clean
    // pages cost nothing) beats one call per range. Persisting pages in
    // between early is harmless: the commit protocol already allows any
    // line to reach the media at any time.
    absl::Status synced = mapping_.SyncPages(ranges_);
    ranges_.clear();
    return synced;
  }

  absl::Status SyncLength() override { return file_.SyncData(); }

 private:
  const mapping::Mapping& mapping_;
  const mapping::PoolFile& file_;
  std::vector<mapping::Mapping::Range> ranges_;
};

}  // namespace

std::unique_ptr<Persister> MakeMappingPersister(const mapping::Mapping& mapping, const mapping::PoolFile& file) {
  if (mapping.granularity() == mapping::Granularity::kPage) return std::make_unique<PagePersister>(mapping, file);
  return std::make_unique<CacheLinePersister>(mapping.ops(), file);
}

}  // namespace pmstore::internal
