// numactl's placement options for one worker: where it runs
// (--cpunodebind) and where its pages come from (--membind, --preferred,
// --interleave).
//
// Node specs use numactl's syntax ("0", "0-1", "0,2", "all", "!1", "+0"),
// plus numactl's `block:DEV` and `file:PATH`: the NUMA node of a block
// device, or of the block device behind a path's file system. Resolve runs
// once in the main thread so a bad node is a one-line error before any
// work; Apply runs inside each worker thread, before its first fault,
// because CPU affinity and memory policy are per thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

enum class MemPolicy { kDefault, kBind, kPreferred, kInterleave };
std::string_view MemPolicyName(MemPolicy policy);  // "default", "bind", ...

struct ResolvedNuma {
  std::vector<int> cpu_nodes;  // empty: not bound
  MemPolicy policy = MemPolicy::kDefault;
  std::vector<int> mem_nodes;  // for bind/preferred/interleave
};

// Parses one node spec into node numbers. InvalidArgument naming the spec
// when it is malformed or names a node this machine does not have.
absl::StatusOr<std::vector<int>> ParseNodeSpec(const std::string& spec);

// The NUMA node of block device `device` ("vda", "pmem0", "nvme0n1p1").
absl::StatusOr<int> BlockDeviceNode(const std::string& device);
// The NUMA node of the block device holding `path`.
absl::StatusOr<int> FileNode(const std::string& path);

absl::StatusOr<ResolvedNuma> ResolveNuma(const NumaOptions& options);

// Binds the calling thread's CPUs and memory policy. Errors name the call.
absl::Status ApplyNuma(const ResolvedNuma& numa);

// CPUs the calling thread may run on now (after ApplyNuma).
std::vector<int> AllowedCpus();

// Where the pages of [addr, addr+length) live: move_pages(2) status for up
// to `max_samples` pages spread evenly over the range, scaled to the number
// of 4 KiB pages in the range. Keys are node numbers; pages not present are
// counted under -1 (reported as "absent").
struct PagePlacement {
  std::map<int, uint64_t> pages_by_node;
  uint64_t sampled = 0;
};
PagePlacement SamplePagePlacement(const void* addr, uint64_t length, uint64_t max_samples = 1024);

}  // namespace faultbench
