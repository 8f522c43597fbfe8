// A separator change as another process applies it (index/separator_change.h):
// it adds, repoints and removes separators, and refuses, leaving the map
// as it was, a payload that is not a change and a change whose leaf
// before the map does not hold.
#include "pmstore/index/separator_change.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/index/separator_map.h"

namespace pmstore::internal {
namespace {

using Entries = std::vector<std::pair<std::string, uint64_t>>;

Entries Contents(const SeparatorMap& map) {
  Entries entries;
  for (const auto& entry : map) entries.emplace_back(SeparatorMap::String(entry.first), entry.second);
  return entries;
}

TEST(SeparatorChangeTest, AddsRepointsAndRemovesSeparators) {
  SeparatorMap map;
  map.Set("", 4096);
  const std::string long_key(40, 'k');  // past the 16 bytes a node holds inline
  ASSERT_TRUE(ApplySeparatorChange(EncodeSeparatorChange("m", 0, 8192), &map).ok());
  ASSERT_TRUE(ApplySeparatorChange(EncodeSeparatorChange(long_key, 0, 12288), &map).ok());
  EXPECT_EQ(Contents(map), (Entries{{"", 4096}, {long_key, 12288}, {"m", 8192}}));
  ASSERT_TRUE(ApplySeparatorChange(EncodeSeparatorChange("", 4096, 16384), &map).ok());
  ASSERT_TRUE(ApplySeparatorChange(EncodeSeparatorChange(long_key, 12288, 0), &map).ok());
  EXPECT_EQ(Contents(map), (Entries{{"", 16384}, {"m", 8192}}));
  // Made and gone within one commit: nothing to do.
  ASSERT_TRUE(ApplySeparatorChange(EncodeSeparatorChange("z", 0, 0), &map).ok());
  EXPECT_EQ(Contents(map), (Entries{{"", 16384}, {"m", 8192}}));
}

TEST(SeparatorChangeTest, AMapThatDidNotFollowIsToldSoAndLeftAsItWas) {
  SeparatorMap map;
  map.Set("", 4096);
  map.Set("m", 8192);
  const Entries before = Contents(map);
  // The writer's map named another leaf there, or none, or this one was
  // missing a separator the writer had.
  for (const std::string& change : {EncodeSeparatorChange("m", 12288, 0), EncodeSeparatorChange("m", 0, 12288),
                                    EncodeSeparatorChange("q", 20480, 24576)}) {
    const absl::Status status = ApplySeparatorChange(change, &map);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_NE(status.message().find("rebuild"), std::string_view::npos) << status;
    EXPECT_EQ(Contents(map), before);
  }
}

TEST(SeparatorChangeTest, APayloadTooShortToNameTwoLeavesIsDataLoss) {
  SeparatorMap map;
  map.Set("", 4096);
  const std::string change = EncodeSeparatorChange("", 4096, 8192);
  const absl::Status status = ApplySeparatorChange(change.substr(0, 15), &map);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_EQ(Contents(map), (Entries{{"", 4096}}));
}

}  // namespace
}  // namespace pmstore::internal
