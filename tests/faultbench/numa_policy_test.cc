#include "faultbench/numa/numa_policy.h"

#include <gtest/gtest.h>
#include <numa.h>
#include <sys/mman.h>

#include <filesystem>

namespace faultbench {
namespace {

TEST(NodeSpec, AcceptsNumactlSyntaxForExistingNodes) {
  auto zero = ParseNodeSpec("0");
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(*zero, std::vector<int>{0});
  auto all = ParseNodeSpec("all");
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->empty());
  EXPECT_EQ(all->front(), 0);
}

TEST(NodeSpec, UnknownNodeIsOneLineNamingIt) {
  auto bad = ParseNodeSpec("4000");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("node 4000 does not exist"), std::string::npos);
  EXPECT_EQ(bad.status().message().find('\n'), std::string::npos);
}

TEST(NodeSpec, RejectsMalformedSpecs) {
  for (const char* spec : {"", "x", "1-0", "0--1", "-1"}) EXPECT_FALSE(ParseNodeSpec(spec).ok()) << spec;
}

TEST(NodeSpec, BlockAndFileResolveToANode) {
  auto file = ParseNodeSpec("file:/var/tmp");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->size(), 1u);
  EXPECT_FALSE(ParseNodeSpec("block:no-such-device").ok());
  EXPECT_FALSE(ParseNodeSpec("file:/no/such/path").ok());
}

TEST(ResolveNuma, PreferredTakesOneNode) {
  NumaOptions options;
  options.preferred = "0";
  auto numa = ResolveNuma(options);
  ASSERT_TRUE(numa.ok());
  EXPECT_EQ(numa->policy, MemPolicy::kPreferred);
  EXPECT_EQ(numa->mem_nodes, std::vector<int>{0});
}

TEST(PagePlacement, TouchedPagesAreOnANodeUntouchedAreAbsent) {
  const size_t length = 64 * 4096;
  char* p = static_cast<char*>(mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (size_t off = 0; off < length / 2; off += 4096) p[off] = 1;
  const PagePlacement placement = SamplePagePlacement(p, length, 64);
  EXPECT_EQ(placement.sampled, 64u);
  uint64_t present = 0;
  for (const auto& [node, pages] : placement.pages_by_node) {
    if (node >= 0) present += pages;
  }
  EXPECT_EQ(present, 32u);
  EXPECT_EQ(placement.pages_by_node.at(-1), 32u);
  munmap(p, length);
}

// DAX pages are the device's: move_pages calls them all absent.
TEST(DaxPlacement, AllAbsentSamplesArePutOnTheDevicesNode) {
  PagePlacement dax{.pages_by_node = {{-1, 16384}}, .sampled = 1024};
  AttributeToDaxDevice(dax, 0, "pmem0");
  EXPECT_EQ(dax.pages_by_node, (std::map<int, uint64_t>{{0, 16384}}));
  EXPECT_EQ(dax.source, "device pmem0 (sysfs numa_node)");
  // Any present page means move_pages saw real pages: left as it was.
  PagePlacement mixed{.pages_by_node = {{-1, 10}, {0, 20}}, .sampled = 30};
  AttributeToDaxDevice(mixed, 0, "pmem0");
  EXPECT_EQ(mixed.pages_by_node.at(-1), 10u);
  EXPECT_EQ(mixed.source, "move_pages");
  PagePlacement none;
  AttributeToDaxDevice(none, 0, "pmem0");
  EXPECT_TRUE(none.pages_by_node.empty());
}

TEST(DaxPlacement, NodeZeroHasCpusAndSysfsMinusOneMeansTheOnlyNode) {
  EXPECT_FALSE(NodeCpus(0).empty());
  if (numa_max_node() == 0) {
    EXPECT_EQ(NodeFromSysfs(-1, "pmem0").value(), 0);
  }
  EXPECT_EQ(NodeFromSysfs(0, "pmem0").value(), 0);
}

}  // namespace
}  // namespace faultbench
