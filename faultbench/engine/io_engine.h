// Engines move bytes between a worker's buffer and the mapped file, and do
// nothing else: offsets come from the workload (workload/block_order.h),
// timing from the run loop (run/worker.cc). fio's split, so a new engine
// cannot skew the measurement.
//
//   mmap:  memcpy both ways, like fio's ioengine=mmap (no flush per I/O).
//   pmem2: reads memcpy; writes go through the mapping's persist-aware
//          memcpy (libpmem2's pmem2_memcpy_fn: copy, flush, drain), like
//          fio's ioengine=libpmem.
//
// Thread-compatible: one engine per worker; the mapping must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "pmstore/mapping/mapping.h"

namespace faultbench {

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  // Copies `length` bytes at file offset `offset` into `buffer`.
  virtual void Read(uint64_t offset, void* buffer, size_t length) = 0;
  // Copies `length` bytes from `buffer` to file offset `offset`.
  virtual void Write(uint64_t offset, const void* buffer, size_t length) = 0;
};

// The engine that matches how `mapping` was made (its Engine).
std::unique_ptr<IoEngine> MakeEngine(const pmstore::mapping::Mapping& mapping);

}  // namespace faultbench
