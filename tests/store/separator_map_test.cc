// SeparatorMap against std::map<std::string>: the same order (memcmp's),
// the same floor for every probe, with keys built to tie on their first
// 16 bytes, to differ only in length, and to hold zero and 0xff bytes.
#include "pmstore/index/separator_map.h"

#include <iterator>
#include <map>
#include <random>
#include <algorithm>
#include <vector>
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

// Keys as db_bench makes them (16 digits, zero padded: equal first 8
// bytes), and longer ones that tie on 16, in numbers that make the tree
// several levels deep; then most erased, emptying leaves and inner nodes.
std::string NumberKey(uint64_t n, bool long_key) {
  std::string key = std::to_string(n);
  key.insert(0, 16 - std::min<size_t>(16, key.size()), '0');
  return long_key ? key + "-tail-" + std::to_string(n % 7) : key;
}

TEST(SeparatorMapTest, ManyLevelsAgreeWithAStringMapBothWaysAndInBatches) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  SeparatorMap map;
  std::map<std::string, uint64_t> model;
  map.Set("", 1);
  model[""] = 1;
  const auto check = [&] {
    ExpectSameOrder(map, model);
    // Backwards, from end().
    auto expected = model.rbegin();
    for (auto it = map.end(); it != map.begin();) {
      --it;
      ASSERT_EQ(it->second, expected->second);
      ++expected;
    }
    // Floor of random probes, one at a time and in batches.
    std::vector<std::string> probes;
    for (int i = 0; i < 300; ++i) probes.push_back(NumberKey(rng() % 200000, rng() % 3 == 0));
    std::vector<std::string_view> views(probes.begin(), probes.end());
    for (size_t first = 0; first < views.size(); first += SeparatorMap::kMaxBatch) {
      const size_t n = std::min(SeparatorMap::kMaxBatch, views.size() - first);
      SeparatorMap::const_iterator found[SeparatorMap::kMaxBatch];
      map.FloorMany(views.data() + first, n, found);
      for (size_t i = 0; i < n; ++i) {
        const auto expected_floor = std::prev(model.upper_bound(probes[first + i]));
        ASSERT_EQ(found[i]->second, expected_floor->second) << probes[first + i];
        ASSERT_EQ(map.Floor(probes[first + i])->second, expected_floor->second) << probes[first + i];
      }
    }
  };
  // In order first (the append path), then at random.
  for (uint64_t n = 0; n < 3000; ++n) {
    map.Set(NumberKey(n * 50, false), n + 2);
    model[NumberKey(n * 50, false)] = n + 2;
  }
  check();
  for (uint64_t op = 0; op < 30000; ++op) {
    const std::string key = NumberKey(rng() % 200000, rng() % 3 == 0);
    map.Set(key, op + 10000);
    model[key] = op + 10000;
  }
  check();
  // Erase nine in ten, in random order: leaves and inner nodes empty.
  std::vector<std::string> keys;
  for (const auto& [key, leaf] : model) {
    if (!key.empty()) keys.push_back(key);
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  for (size_t i = 0; i < keys.size() * 9 / 10; ++i) {
    auto it = map.Floor(keys[i]);
    ASSERT_EQ(it->second, model[keys[i]]);
    auto next = map.Erase(it);
    auto expected_next = model.erase(model.find(keys[i]));
    if (expected_next == model.end()) {
      ASSERT_TRUE(next == map.end());
    } else {
      ASSERT_EQ(next->second, expected_next->second) << "Erase returns the entry after";
    }
  }
  check();
  // Erase all but "", then fill again.
  while (map.size() > 1) map.Erase(std::next(map.begin()));
  model.erase(std::next(model.begin()), model.end());
  check();
  for (uint64_t n = 0; n < 2000; ++n) {
    const std::string key = NumberKey(rng() % 200000, false);
    map.Set(key, n);
    model[key] = n;
  }
  check();
}

}  // namespace
}  // namespace pmstore::internal
