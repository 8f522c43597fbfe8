#include "pmstore/src/persister.h"

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
  explicit CacheLinePersister(const mapping::PersistOps& ops) : ops_(ops) {}
  void Flush(const void* addr, size_t size) override { ops_.flush(addr, size); }
  void Drain() override { ops_.drain(); }

 private:
  mapping::PersistOps ops_;
};

// Page granularity: msync is the only way to persist, and it costs a
// system call, so ranges are collected and synced in one call per Drain.
class PagePersister final : public Persister {
 public:
  explicit PagePersister(const mapping::PersistOps& ops) : ops_(ops) {}

  void Flush(const void* addr, size_t size) override {
    if (size == 0) return;
    const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(kPage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + size + kPage - 1) & ~(kPage - 1);
    if (!ranges_.empty() && ranges_.back().second >= start && ranges_.back().first <= end) {
      ranges_.back().first = std::min(ranges_.back().first, start);
      ranges_.back().second = std::max(ranges_.back().second, end);
      return;
    }
    ranges_.emplace_back(start, end);
  }

  void Drain() override {
    if (ranges_.empty()) return;
    // One msync over the span of everything flushed: on a page-cache file
    // system each msync call costs a device cache flush, so one call over a
    // span (whose clean pages cost nothing) beats one call per range.
    // Persisting pages in between early is harmless: the commit protocol
    // already allows any line to reach the media at any time.
    uintptr_t start = ranges_.front().first;
    uintptr_t end = ranges_.front().second;
    for (const auto& [first, last] : ranges_) {
      start = std::min(start, first);
      end = std::max(end, last);
    }
    Sync({start, end});
    ranges_.clear();
  }

 private:
  void Sync(std::pair<uintptr_t, uintptr_t> range) {
    ops_.persist(reinterpret_cast<const void*>(range.first), range.second - range.first);
  }

  mapping::PersistOps ops_;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges_;
};

}  // namespace

std::unique_ptr<Persister> MakeMappingPersister(const mapping::Mapping& mapping) {
  if (mapping.granularity() == mapping::Granularity::kPage) return std::make_unique<PagePersister>(mapping.ops());
  return std::make_unique<CacheLinePersister>(mapping.ops());
}

}  // namespace pmstore::internal
