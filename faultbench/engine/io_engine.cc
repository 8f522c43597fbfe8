#include "faultbench/engine/io_engine.h"

#include <libpmem2.h>

#include <cstring>

namespace faultbench {
namespace {

class MmapEngine : public IoEngine {
 public:
  explicit MmapEngine(char* base) : base_(base) {}
  void Read(uint64_t offset, void* buffer, size_t length) override {
    std::memcpy(buffer, base_ + offset, length);
    // The buffer is never read by the program: keep the copy from being
    // optimised away without adding work to it.
    asm volatile("" : : "r"(buffer) : "memory");
  }
  void Write(uint64_t offset, const void* buffer, size_t length) override {
    std::memcpy(base_ + offset, buffer, length);
  }

 private:
  char* base_;
};

class Pmem2Engine : public IoEngine {
 public:
  Pmem2Engine(char* base, const pmstore::mapping::PersistOps& ops, unsigned flags)
      : base_(base), ops_(ops), flags_(flags) {}
  void Read(uint64_t offset, void* buffer, size_t length) override {
    std::memcpy(buffer, base_ + offset, length);
    asm volatile("" : : "r"(buffer) : "memory");
  }
  void Write(uint64_t offset, const void* buffer, size_t length) override {
    ops_.memcpy(base_ + offset, buffer, length, flags_);
  }

 private:
  char* base_;
  pmstore::mapping::PersistOps ops_;
  unsigned flags_;
};

}  // namespace

unsigned Pmem2WriteFlags(const EngineOptions& options) {
  if (!options.libpmem_flags) return 0;  // copy, then make durable
  // fio's libpmem engine: "map both O_SYNC / DSYNC to not use NODRAIN".
  return (options.sync ? 0u : PMEM2_F_MEM_NODRAIN) |
         (options.direct ? PMEM2_F_MEM_NONTEMPORAL : PMEM2_F_MEM_TEMPORAL);
}

std::string DescribeWrites(pmstore::mapping::Engine mapping_engine, const EngineOptions& options) {
  if (mapping_engine == pmstore::mapping::Engine::kMmap) return "memcpy";
  if (!options.libpmem_flags) return "persisted";
  return std::string(options.direct ? "non-temporal" : "temporal") + (options.sync ? ", drained" : ", not drained");
}

std::unique_ptr<IoEngine> MakeEngine(const pmstore::mapping::Mapping& mapping, const EngineOptions& options) {
  if (mapping.engine() == pmstore::mapping::Engine::kPmem2 && mapping.ops().memcpy != nullptr) {
    return std::make_unique<Pmem2Engine>(mapping.address(), mapping.ops(), Pmem2WriteFlags(options));
  }
  return std::make_unique<MmapEngine>(mapping.address());
}

}  // namespace faultbench
