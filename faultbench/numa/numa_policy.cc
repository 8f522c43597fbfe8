#include "faultbench/numa/numa_policy.h"

#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "faultbench/sysfacts/block_device.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {
namespace {

// Nodes this machine has (libnuma's view; node 0 alone without NUMA support).
std::set<int> ExistingNodes() {
  std::set<int> nodes;
  if (numa_available() < 0) return {0};
  for (int n = 0; n <= numa_max_node(); ++n) {
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(n))) nodes.insert(n);
  }
  if (nodes.empty()) nodes.insert(0);
  return nodes;
}

std::string NodeList(const std::set<int>& nodes) {
  std::string out;
  for (int n : nodes) absl::StrAppend(&out, out.empty() ? "" : ",", n);
  return out;
}

absl::StatusOr<int> ReadNodeSpecItem(const std::string& spec) {
  if (spec.starts_with("block:")) return BlockDeviceNode(spec.substr(6));
  if (spec.starts_with("file:")) return FileNode(spec.substr(5));
  return absl::InvalidArgumentError("");
}

absl::Status BadSpec(const std::string& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("bad NUMA node spec '", spec, "': ", why));
}

}  // namespace

absl::StatusOr<int> NodeFromSysfs(int node, const std::string& what) {
  const std::set<int> nodes = ExistingNodes();
  if (node < 0 && nodes.size() == 1) return *nodes.begin();
  if (node < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " reports no NUMA node (numa_node=-1)"));
  }
  return node;
}

std::vector<int> NodeCpus(int node) {
  std::vector<int> cpus;
  if (numa_available() < 0) return cpus;
  bitmask* mask = numa_allocate_cpumask();
  if (numa_node_to_cpus(node, mask) == 0) {
    for (unsigned cpu = 0; cpu < mask->size; ++cpu) {
      if (numa_bitmask_isbitset(mask, cpu)) cpus.push_back(static_cast<int>(cpu));
    }
  }
  numa_free_cpumask(mask);
  return cpus;
}

std::string_view MemPolicyName(MemPolicy policy) {
  switch (policy) {
    case MemPolicy::kDefault: return "default";
    case MemPolicy::kBind: return "bind";
    case MemPolicy::kPreferred: return "preferred";
    case MemPolicy::kInterleave: return "interleave";
  }
  return "default";
}

absl::StatusOr<int> BlockDeviceNode(const std::string& device) {
  const std::optional<BlockFacts> facts = ReadBlockFactsByName(device);
  if (!facts) return absl::InvalidArgumentError(absl::StrCat("block:", device, ": no such block device in /sys/class/block"));
  return NodeFromSysfs(facts->numa_node, absl::StrCat("block device ", device));
}

absl::StatusOr<int> FileNode(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return pmstore::base::ErrnoStatus(errno, "stat", path);
  const BlockFacts facts = ReadBlockFacts(st.st_dev);
  if (facts.device.empty()) {
    // tmpfs, overlay and other file systems without a block device: memory
    // has no home node, like numactl we cannot name one.
    return NodeFromSysfs(-1, absl::StrCat("file:", path, " (no block device behind it)"));
  }
  return NodeFromSysfs(facts.numa_node, absl::StrCat("block device ", facts.device));
}

absl::StatusOr<std::vector<int>> ParseNodeSpec(const std::string& spec) {
  const std::set<int> existing = ExistingNodes();
  if (spec.empty()) return BadSpec(spec, "empty");
  if (spec.starts_with("block:") || spec.starts_with("file:")) {
    PMSTORE_ASSIGN_OR_RETURN(int node, ReadNodeSpecItem(spec));
    return std::vector<int>{node};
  }
  std::string body = spec;
  const bool invert = body.starts_with("!");
  if (invert) body = body.substr(1);
  if (body.starts_with("+")) body = body.substr(1);  // cpuset-relative: one cpuset here, same nodes
  std::set<int> chosen;
  if (body == "all") {
    chosen = existing;
  } else {
    for (absl::string_view item : absl::StrSplit(body, ',')) {
      std::vector<absl::string_view> range = absl::StrSplit(item, '-');
      int low = 0, high = 0;
      if (range.size() > 2 || !absl::SimpleAtoi(range[0], &low) ||
          !absl::SimpleAtoi(range.size() == 2 ? range[1] : range[0], &high) || low < 0 || high < low) {
        return BadSpec(spec, "use numactl's syntax: 0, 0-1, 0,2, all, !1, block:DEV or file:PATH");
      }
      for (int n = low; n <= high; ++n) {
        if (!existing.count(n)) {
          return BadSpec(spec, absl::StrCat("node ", n, " does not exist (this machine has node(s) ",
                                            NodeList(existing), ")"));
        }
        chosen.insert(n);
      }
    }
  }
  if (invert) {
    std::set<int> rest;
    for (int n : existing) {
      if (!chosen.count(n)) rest.insert(n);
    }
    chosen = rest;
  }
  if (chosen.empty()) return BadSpec(spec, "selects no node");
  return std::vector<int>(chosen.begin(), chosen.end());
}

absl::StatusOr<ResolvedNuma> ResolveNuma(const NumaOptions& options) {
  ResolvedNuma numa;
  if (!options.cpunodebind.empty()) {
    PMSTORE_ASSIGN_OR_RETURN(numa.cpu_nodes, ParseNodeSpec(options.cpunodebind));
  }
  const std::pair<const std::string*, MemPolicy> policies[] = {{&options.membind, MemPolicy::kBind},
                                                               {&options.preferred, MemPolicy::kPreferred},
                                                               {&options.interleave, MemPolicy::kInterleave}};
  for (const auto& [spec, policy] : policies) {
    if (spec->empty()) continue;
    PMSTORE_ASSIGN_OR_RETURN(numa.mem_nodes, ParseNodeSpec(*spec));
    numa.policy = policy;
  }
  if (numa.policy == MemPolicy::kPreferred && numa.mem_nodes.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--preferred takes one node, got '", options.preferred, "'"));
  }
  return numa;
}

absl::Status ApplyNuma(const ResolvedNuma& numa) {
  if (!numa.cpu_nodes.empty()) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int node : numa.cpu_nodes) {
      for (int cpu : NodeCpus(node)) {
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &cpus);
      }
    }
    if (CPU_COUNT(&cpus) == 0) return absl::InvalidArgumentError("--cpunodebind: the node(s) have no CPUs");
    if (sched_setaffinity(0, sizeof(cpus), &cpus) != 0) {
      return pmstore::base::ErrnoStatus(errno, "sched_setaffinity", "--cpunodebind");
    }
  }
  if (numa.policy == MemPolicy::kDefault) return absl::OkStatus();
  unsigned long mask[16] = {};
  for (int node : numa.mem_nodes) {
    mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
  }
  const int mode = numa.policy == MemPolicy::kBind        ? MPOL_BIND
                   : numa.policy == MemPolicy::kPreferred ? MPOL_PREFERRED
                                                          : MPOL_INTERLEAVE;
  if (set_mempolicy(mode, mask, sizeof(mask) * 8) != 0) {
    return pmstore::base::ErrnoStatus(errno, "set_mempolicy", MemPolicyName(numa.policy));
  }
  return absl::OkStatus();
}

std::vector<int> AllowedCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) out.push_back(cpu);
  }
  return out;
}

PagePlacement SamplePagePlacement(const void* addr, uint64_t length, uint64_t max_samples) {
  PagePlacement placement;
  const uint64_t pages = length / 4096;
  if (pages == 0) return placement;
  const uint64_t samples = std::min(pages, max_samples);
  std::vector<void*> addrs(samples);
  std::vector<int> status(samples, -1);
  for (uint64_t i = 0; i < samples; ++i) {
    addrs[i] = const_cast<char*>(static_cast<const char*>(addr)) + (i * pages / samples) * 4096;
  }
  // nodes == NULL: only report where each page is, move nothing.
  if (move_pages(0, samples, addrs.data(), nullptr, status.data(), 0) != 0) return placement;
  std::map<int, uint64_t> sampled;
  for (int s : status) ++sampled[s < 0 ? -1 : s];
  for (const auto& [node, count] : sampled) placement.pages_by_node[node] = count * pages / samples;
  placement.sampled = samples;
  return placement;
}

void AttributeToDaxDevice(PagePlacement& placement, int sysfs_node, const std::string& device) {
  if (placement.sampled == 0 || placement.pages_by_node.size() != 1 || !placement.pages_by_node.contains(-1)) return;
  absl::StatusOr<int> node = NodeFromSysfs(sysfs_node, device);
  if (!node.ok()) return;
  const uint64_t pages = placement.pages_by_node[-1];
  placement.pages_by_node = {{*node, pages}};
  placement.source = absl::StrCat("device ", device, " (sysfs numa_node)");
}

}  // namespace faultbench
