// The persistence seam: every flush and fence the store issues goes
// through one Persister, so a test can substitute a model of the CPU cache
// (what reached the media, what may still be lost) for the real thing.
//
// Contract: a range passed to Flush is durable once Drain returns, no
// matter which thread flushed it. Stores not covered by a Flush followed
// by a Drain may or may not survive a power failure, in any subset of
// cache lines.
//
// Thread-compatible: the store calls it only under its writer lock (and at
// open and close).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pmstore/mapping/mapping.h"

namespace pmstore::internal {

class Persister {
 public:
  virtual ~Persister() = default;
  // Starts (or records) write-back of [addr, addr+size).
  virtual void Flush(const void* addr, size_t size) = 0;
  // Returns when everything flushed so far is durable.
  virtual void Drain() = 0;
};

// Production: the mapping's own persist functions. At byte and cache-line
// granularity Flush writes lines back (CLWB/CLFLUSHOPT; nothing with eADR)
// and Drain is one SFENCE. At page granularity Flush only records the
// pages and Drain msyncs them, merged, so a commit costs one msync pass.
std::unique_ptr<Persister> MakeMappingPersister(const mapping::Mapping& mapping);

// Builds the persister for a freshly made mapping; tests pass their own.
using PersisterFactory = std::unique_ptr<Persister> (*)(const mapping::Mapping& mapping);

}  // namespace pmstore::internal
