// How stores to a mapping are made durable.
//
// Chosen once when the mapping is made (libpmem2's model): callers keep
// the function pointers and never branch on the kind of media per
// operation. Signatures are libpmem2's so its functions are used as is;
// they return nothing, which is right for cache flushes and fences (they
// cannot fail) and wrong for msync: at page granularity libpmem2's persist
// aborts the process when msync fails and the mmap engine's ignores the
// failure. Code that must know uses Mapping::Persist or SyncPages.
#pragma once

#include <cstddef>
#include <string_view>

namespace pmstore::mapping {

// Smallest unit that is guaranteed to reach persistence after a store
// without a system call (libpmem2's "store granularity").
enum class Granularity {
  kByte,       // eADR: caches are in the persistence domain
  kCacheLine,  // DAX with MAP_SYNC: flush lines + fence
  kPage        // page cache: msync
};

std::string_view GranularityName(Granularity g);  // "byte", "cache_line", "page"

struct PersistOps {
  // Makes [ptr, ptr+size) durable: flush then drain.
  void (*persist)(const void* ptr, size_t size) = nullptr;
  // Starts write-back of [ptr, ptr+size); durable only after drain().
  void (*flush)(const void* ptr, size_t size) = nullptr;
  // Waits for every flush issued by this thread.
  void (*drain)() = nullptr;
  // memcpy to the mapping; flags are libpmem2's PMEM2_F_MEM_* (0 = copy
  // and persist).
  void* (*memcpy)(void* dest, const void* src, size_t len, unsigned flags) = nullptr;
};

}  // namespace pmstore::mapping
