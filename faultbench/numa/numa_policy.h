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

// A node number as sysfs reports it for `what` (a device): -1 means "no
// affinity", which on a one-node machine can only mean node 0 and elsewhere
// is an InvalidArgument naming `what`.
absl::StatusOr<int> NodeFromSysfs(int node, const std::string& what);

// The CPUs of `node` (libnuma); empty when it has none or NUMA is unavailable.
std::vector<int> NodeCpus(int node);

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
  // "move_pages"; for DAX, whose pages move_pages calls absent, "device
  // NAME (sysfs numa_node)" (AttributeToDaxDevice).
  std::string source = "move_pages";
};
PagePlacement SamplePagePlacement(const void* addr, uint64_t length, uint64_t max_samples = 1024);

// DAX pages belong to the device, not to any node's page allocator, so
// move_pages(2) reports every one of them absent. When it did, the pages
// are put on the device's node as sysfs reports it (`sysfs_node`; -1 on a
// one-node machine means node 0) and `source` names the device. A sample
// with any present page is left as move_pages saw it.
void AttributeToDaxDevice(PagePlacement& placement, int sysfs_node, const std::string& device);

}  // namespace faultbench
