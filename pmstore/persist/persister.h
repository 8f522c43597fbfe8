// The persistence seam: every flush, fence and sync the store issues goes
// through one Persister, so a test can substitute a model of the CPU cache
// (what reached the media, what may still be lost) or a device that fails.
//
// Contract: a range passed to Flush is durable once Drain returns OK, no
// matter which thread flushed it. Stores not covered by a Flush followed
// by a successful Drain may or may not survive a power failure, in any
// subset of cache lines. A failed Drain promises nothing about what it
// covered: the store treats it as a failing device (see store.h).
//
// Every call returns absl::Status: at byte and cache-line granularity
// flushes and fences cannot fail (errors of the media arrive as machine
// checks, not here), but msync and fdatasync can, and a persister that
// starts I/O in Flush may report it there. Messages name the call and the
// file.
//
// Thread-compatible: the store calls it from one writer at a time (and at
// open and close).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"

namespace pmstore::internal {

class Persister {
 public:
  virtual ~Persister() = default;
  // Starts (or records) write-back of [addr, addr+size).
  virtual absl::Status Flush(const void* addr, size_t size) = 0;
  // Returns when everything flushed so far is durable.
  virtual absl::Status Drain() = 0;
  // Makes the file's length durable (after it grew): fdatasync.
  virtual absl::Status SyncLength() = 0;
};

// Production: the mapping's own persist functions. At byte and cache-line
// granularity Flush writes lines back (CLWB/CLFLUSHOPT; nothing with eADR)
// and Drain is one SFENCE. At page granularity Flush only records the
// pages and Drain msyncs them (Mapping::SyncPages: one msync per mapped
// piece written to), so a commit costs one msync pass.
std::unique_ptr<Persister> MakeMappingPersister(const mapping::Mapping& mapping, const mapping::PoolFile& file);

// Builds the persister for a freshly made mapping of `file`; tests pass
// their own. Both outlive the persister.
using PersisterFactory = std::unique_ptr<Persister> (*)(const mapping::Mapping& mapping,
                                                        const mapping::PoolFile& file);

}  // namespace pmstore::internal
