// Persist strategies of the mmap engine. The pmem2 engine takes libpmem2's
// own functions instead (mapping.cc).
#include "pmstore/mapping/persist.h"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "pmstore/base/units.h"
#include "pmstore/mapping/persist_internal.h"

namespace pmstore::mapping {
namespace {

using base::kCacheLineSize;
using base::kPageSize;

// Page granularity: the page cache holds the data until msync writes it
// back. msync wants a page-aligned start. The signature leaves no way to
// report a failure; Mapping::SyncPages is the checked msync.
void MsyncPersist(const void* ptr, size_t size) {
  const auto start = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t aligned = start & ~(kPageSize - 1);
  msync(reinterpret_cast<void*>(aligned), size + (start - aligned), MS_SYNC);
}
void NoDrain() {}
void* MsyncMemcpy(void* dest, const void* src, size_t len, unsigned /*flags*/) {
  std::memcpy(dest, src, len);
  MsyncPersist(dest, len);
  return dest;
}

// Cache-line granularity (DAX + MAP_SYNC): write back each line, then one
// store fence. CLWB keeps the line cached; CLFLUSHOPT evicts it; CLFLUSH is
// ordered by itself and needs no fence but is slow.
template <void (*kFlushLine)(void*)>
void FlushLines(const void* ptr, size_t size) {
  auto line = reinterpret_cast<uintptr_t>(ptr) & ~(kCacheLineSize - 1);
  const auto end = reinterpret_cast<uintptr_t>(ptr) + size;
  for (; line < end; line += kCacheLineSize) kFlushLine(reinterpret_cast<void*>(line));
}
__attribute__((target("clwb"))) void ClwbLine(void* p) { _mm_clwb(p); }
__attribute__((target("clflushopt"))) void ClflushoptLine(void* p) { _mm_clflushopt(p); }
void ClflushLine(void* p) { _mm_clflush(p); }
void Sfence() { _mm_sfence(); }

template <void (*kFlushLine)(void*)>
void PersistLines(const void* ptr, size_t size) {
  FlushLines<kFlushLine>(ptr, size);
  Sfence();
}
template <void (*kFlushLine)(void*)>
void* MemcpyLines(void* dest, const void* src, size_t len, unsigned /*flags*/) {
  std::memcpy(dest, src, len);
  PersistLines<kFlushLine>(dest, len);
  return dest;
}

bool CpuHas(int leaf7_ebx_bit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx >> leaf7_ebx_bit) & 1u;
}

}  // namespace

std::string_view GranularityName(Granularity g) {
  switch (g) {
    case Granularity::kByte: return "byte";
    case Granularity::kCacheLine: return "cache_line";
    case Granularity::kPage: return "page";
  }
  return "unknown";
}

PersistOps MsyncPersistOps() {
  return PersistOps{&MsyncPersist, &MsyncPersist, &NoDrain, &MsyncMemcpy};
}

PersistOps CacheLinePersistOps() {
  constexpr int kClflushoptBit = 23, kClwbBit = 24;
  if (CpuHas(kClwbBit)) {
    return PersistOps{&PersistLines<ClwbLine>, &FlushLines<ClwbLine>, &Sfence, &MemcpyLines<ClwbLine>};
  }
  if (CpuHas(kClflushoptBit)) {
    return PersistOps{&PersistLines<ClflushoptLine>, &FlushLines<ClflushoptLine>, &Sfence,
                      &MemcpyLines<ClflushoptLine>};
  }
  return PersistOps{&PersistLines<ClflushLine>, &FlushLines<ClflushLine>, &Sfence, &MemcpyLines<ClflushLine>};
}

}  // namespace pmstore::mapping
