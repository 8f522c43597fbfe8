// Software prefetch of a byte range, one request per cache line.
#pragma once

#include <cstdint>

namespace pmstore::base {

// Requests the cache lines of [start, start + bytes). A loop whose body is
// only __builtin_prefetch counts as free of side effects, and GCC 12 at
// -O2 (-ffinite-loops) deletes it whole once it is inlined: the lookups of
// the default build then issued no prefetch at all, and readrandom took
// 1.7x as long. The empty asm naming each address keeps every request and
// costs no instruction.
inline void PrefetchLines(const void* start, uint64_t bytes) {
  const char* p = static_cast<const char*>(start);
  for (uint64_t line = 0; line < bytes; line += 64) {
    __builtin_prefetch(p + line);
    asm volatile("" : : "r"(p + line));
  }
}

}  // namespace pmstore::base
