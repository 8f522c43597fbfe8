// SeparatorMap against std::map<std::string>: the same order (memcmp's),
// the same floor for every probe, with keys built to tie on their first
// 16 bytes, to differ only in length, and to hold zero and 0xff bytes.
#include "pmstore/index/separator_map.h"

#include <iterator>
#include <map>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace pmstore::internal {
namespace {

// Lengths cluster around 16, where the inline prefix ends; a small
// alphabet makes long shared prefixes and exact ties common.
std::string AwkwardKey(std::mt19937_64& rng) {
  static constexpr char kAlphabet[] = {'\0', 'a', 'b', '\xff'};
  const size_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 18, 24, 40};
  const size_t length = lengths[rng() % std::size(lengths)];
  std::string key(length, 'a');
  for (char& c : key) {
    if (rng() % 4 == 0) c = kAlphabet[rng() % 4];
  }
  return key;
}

void ExpectSameOrder(SeparatorMap& map, const std::map<std::string, uint64_t>& model) {
  ASSERT_EQ(map.size(), model.size());
  auto expected = model.begin();
  for (auto it = map.begin(); it != map.end(); ++it, ++expected) {
    ASSERT_EQ(it->second, expected->second) << "separator " << testing::PrintToString(expected->first);
  }
}

TEST(SeparatorMapTest, FloorAndOrderMatchAStringMap) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  SeparatorMap map;
  std::map<std::string, uint64_t> model;
  map.Set("", 1);
  model[""] = 1;
  for (uint64_t op = 2; op < 20000; ++op) {
    const std::string key = AwkwardKey(rng);
    const uint64_t dice = rng() % 10;
    if (dice < 4) {
      map.Set(key, op);
      model[key] = op;
    } else if (dice < 6 && !key.empty() && model.count(key) != 0) {
      map.Erase(map.Floor(key));
      model.erase(key);
    } else {
      const auto floor = map.Floor(key);
      const auto expected = std::prev(model.upper_bound(key));
      ASSERT_EQ(floor->second, expected->second)
          << "probe " << testing::PrintToString(key) << " expected " << testing::PrintToString(expected->first);
    }
  }
  ExpectSameOrder(map, model);
}

TEST(SeparatorMapTest, KeysThatTieOnSixteenBytesAreOrderedByTheRest) {
  SeparatorMap map;
  const std::string base(16, 'k');
  map.Set("", 0);
  map.Set(base, 1);
  map.Set(base + "b", 3);
  map.Set(base + "a", 2);
  map.Set(base + std::string(1, '\0'), 4);  // between base and base+"a"
  EXPECT_EQ(map.Floor(base)->second, 1u);
  EXPECT_EQ(map.Floor(base + std::string(1, '\0'))->second, 4u);
  EXPECT_EQ(map.Floor(base + "a" + std::string(100, 'z'))->second, 2u);
  EXPECT_EQ(map.Floor(base + "c")->second, 3u);
  EXPECT_EQ(map.Floor(std::string(15, 'k'))->second, 0u) << "a proper prefix sorts first";
  std::vector<uint64_t> order;
  for (auto it = map.begin(); it != map.end(); ++it) order.push_back(it->second);
  EXPECT_EQ(order, (std::vector<uint64_t>{0, 1, 4, 2, 3}));
}

TEST(SeparatorMapTest, ShortKeysPaddedWithZeroBytesStayDistinct) {
  SeparatorMap map;
  map.Set("", 0);
  map.Set("a", 1);
  map.Set(std::string("a\0", 2), 2);
  map.Set(std::string("a\0\0", 3), 3);
  EXPECT_EQ(map.size(), 4u);
  EXPECT_EQ(map.Floor("a")->second, 1u);
  EXPECT_EQ(map.Floor(std::string("a\0", 2))->second, 2u);
  EXPECT_EQ(map.Floor(std::string("a\0\0\0", 4))->second, 3u);
  map.Set(std::string("a\0", 2), 9);
  EXPECT_EQ(map.size(), 4u) << "Set replaces the leaf of a present separator";
  EXPECT_EQ(map.Floor(std::string("a\0", 2))->second, 9u);
}

}  // namespace
}  // namespace pmstore::internal
