// Readers and a writer on one store at once: no torn reads (Get, pins,
// iterators, MultiGet), readers keep going while others read, pinned views
// stay intact.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

// Every value of key i is "i:generation:" repeated, so a reader can tell
// a whole value from a torn or foreign one.
std::string ValueOf(int key, int generation) {
  const std::string unit = std::to_string(key) + ":" + std::to_string(generation) + ":";
  std::string value;
  while (value.size() < 200) value += unit;
  return value;
}

bool IsWhole(int key, std::string_view value) {
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos || value.substr(0, colon) != std::to_string(key)) return false;
  const size_t second = value.find(':', colon + 1);
  if (second == std::string_view::npos) return false;
  const int generation = std::stoi(std::string(value.substr(colon + 1, second - colon - 1)));
  return value == ValueOf(key, generation);
}

constexpr int kKeys = 500;

// Overwrites (and deletes some of) every key for at least 20 generations,
// and on until the readers did a fair share of reads meanwhile (how many
// fit in 20 depends on the scheduler).
void RewriteGenerations(Store& store, const std::atomic<long>& reads) {
  for (int generation = 1; generation <= 20 || (reads.load() < 1000 && generation < 2000); ++generation) {
    for (int i = 0; i < kKeys; ++i) {
      if ((i + generation) % 7 == 0) {
        ASSERT_TRUE(store.Delete(std::to_string(i)).ok());
      } else {
        ASSERT_TRUE(store.Put(std::to_string(i), ValueOf(i, generation)).ok());
      }
    }
  }
}

// Three readers run `read(store, n)` (which counts torn values) until
// the writer is done.
template <typename Read>
void ReadWhileRewriting(Read read) {
  TempDir dir("/dev/shm");
  auto store = testing::OpenOrDie(dir.File("pool"), testing::SmallPool());
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(store->Put(std::to_string(i), ValueOf(i, 0)).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      for (int n = r; !stop.load(); ++n) {
        torn += read(*store, n);
        ++reads;
      }
    });
  }
  RewriteGenerations(*store, reads);
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(reads.load(), 1000);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST(StoreConcurrencyTest, ReadersNeverSeeATornValueWhileAWriterRuns) {
  ReadWhileRewriting([](Store& store, int n) {
    int torn = 0;
    const int key = (n * 7919) % kKeys;
    std::string value;
    if (n % 3 == 0) {
      PinnedValue pinned;
      if (store.Get(ReadOptions(), std::to_string(key), &pinned).ok()) {
        const std::string copy(pinned.value());
        std::this_thread::yield();  // let the writer overwrite meanwhile
        if (!IsWhole(key, pinned.value()) || copy != pinned.value()) ++torn;
      }
    } else if (n % 3 == 1) {
      if (store.Get(std::to_string(key), &value).ok() && !IsWhole(key, value)) ++torn;
    } else {
      auto it = store.NewIterator(ReadOptions(), {.prefix = std::to_string(key % 10)});
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!IsWhole(std::stoi(std::string(it->key())), it->value())) ++torn;
      }
    }
    return torn;
  });
}

// Batches of 40 keys (more than one chunk of MultiGet's, so writes land
// between chunks), a duplicate among them, in both forms.
TEST(StoreConcurrencyTest, MultiGetNeverSeesATornValueWhileAWriterRuns) {
  ReadWhileRewriting([](Store& store, int n) {
    int torn = 0;
    std::vector<std::string> names;
    for (int i = 0; i < 40; ++i) names.push_back(std::to_string((n * 7919 + i * 13) % kKeys));
    names.push_back(names[0]);
    const std::vector<std::string_view> keys(names.begin(), names.end());
    if (n % 2 == 0) {
      std::vector<PinnedValue> pinned(keys.size());
      std::vector<absl::Status> statuses(keys.size());
      store.MultiGet(ReadOptions(), keys.size(), keys.data(), pinned.data(), statuses.data());
      std::this_thread::yield();  // let the writer overwrite meanwhile
      for (size_t i = 0; i < keys.size(); ++i) {
        if (!statuses[i].ok() && !absl::IsNotFound(statuses[i])) ++torn;
        if (statuses[i].ok() && !IsWhole(std::stoi(names[i]), pinned[i].value())) ++torn;
      }
    } else {
      std::vector<std::string> values;
      const std::vector<absl::Status> statuses = store.MultiGet(ReadOptions(), keys, &values);
      for (size_t i = 0; i < keys.size(); ++i) {
        if (!statuses[i].ok() && !absl::IsNotFound(statuses[i])) ++torn;
        if (statuses[i].ok() && !IsWhole(std::stoi(names[i]), values[i])) ++torn;
      }
    }
    return torn;
  });
}

TEST(StoreConcurrencyTest, ConcurrentWritersSerialiseWithoutLosingWrites) {
  TempDir dir("/dev/shm");
  auto store = testing::OpenOrDie(dir.File("pool"), testing::SmallPool());
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 500; ++i) {
        ASSERT_TRUE(store->Put("w" + std::to_string(w) + "/" + std::to_string(i), std::to_string(i)).ok());
      }
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(store->GetStats().keys, 2000u);
  EXPECT_TRUE(store->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
