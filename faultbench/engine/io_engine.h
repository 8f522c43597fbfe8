// Engines move bytes between a worker's buffer and the mapped file, and do
// nothing else: offsets come from the workload (workload/block_order.h),
// timing from the run loop (run/worker.cc). fio's split, so a new engine
// cannot skew the measurement.
//
//   mmap:  memcpy both ways, like fio's ioengine=mmap (no flush per I/O).
//   pmem2: reads memcpy; writes go through the mapping's persist-aware
//          memcpy (libpmem2's pmem2_memcpy_fn). By default each write is
//          copied, flushed and drained (faultbench's pmem2, fio's dev-dax);
//          with fio's libpmem flags, direct picks non-temporal or temporal
//          stores and sync whether to drain after each write, exactly as
//          fio's libpmem engine passes them to pmem_memcpy().
//
// Thread-compatible: one engine per worker; the mapping must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

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

struct EngineOptions {
  bool libpmem_flags = false;  // take the write flags from direct and sync below
  bool direct = false;         // PMEM2_F_MEM_NONTEMPORAL, else PMEM2_F_MEM_TEMPORAL
  bool sync = false;           // drain after every write, else PMEM2_F_MEM_NODRAIN
};

// The pmem2 memcpy flags `options` stand for (0: copy and persist).
unsigned Pmem2WriteFlags(const EngineOptions& options);

// How an engine of `mapping_engine` with `options` writes, for the report:
// "memcpy", "persisted" (copy, flush, drain), or libpmem's
// "non-temporal|temporal, drained|not drained".
std::string DescribeWrites(pmstore::mapping::Engine mapping_engine, const EngineOptions& options);

// The engine that matches how `mapping` was made (its Engine).
std::unique_ptr<IoEngine> MakeEngine(const pmstore::mapping::Mapping& mapping, const EngineOptions& options = {});

}  // namespace faultbench
