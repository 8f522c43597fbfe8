// Readers and a writer on one store at once: no torn reads (Get, pins,
// iterators, MultiGet), readers keep going while others read, pinned views
// stay intact; snapshots and iterators read one committed state.
#include <algorithm>
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

// More than an iterator copies per refill (1024), so that a scan spans refills.
constexpr int kKeys = 1500;

// Overwrites (and deletes some of) every key for at least 20 generations,
// and on until the readers did a fair share of reads meanwhile (how many
// fit in 20 depends on the scheduler).
void RewriteGenerations(Store& store, const std::atomic<long>& reads, long min_reads) {
  for (int generation = 1; generation <= 20 || (reads.load() < min_reads && generation < 2000); ++generation) {
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
// the writer is done, at least `min_reads` times in all.
template <typename Read>
void ReadWhileRewriting(Read read, long min_reads = 1000) {
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
  RewriteGenerations(*store, reads, min_reads);
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(reads.load(), min_reads);
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

// --- Snapshots under a writer ---
// RewriteGenerations writes keys 0..kKeys-1 in order, one commit each, so
// every state after a commit is "keys below j at generation g, the rest at
// g - 1" for some g and j. A snapshot's view (or an iterator's own) must be
// one of those, and must stay the same while the writer goes on.

// Generation of key i in a view (-1: absent), from its value.
using View = std::vector<int>;

int GenerationOf(int key, std::string_view value) {
  if (!IsWhole(key, value)) return -2;  // torn or foreign: matches no state
  const size_t colon = value.find(':');
  return std::stoi(std::string(value.substr(colon + 1)));
}

// What key i holds after generation g was written (g = 0: the initial fill).
int StateAfter(int key, int generation) {
  return generation > 0 && (key + generation) % 7 == 0 ? -1 : generation;
}

bool IsACommittedState(const View& view) {
  int newest = 0;
  for (int g : view) newest = std::max(newest, g);
  for (int g = std::max(newest, 1); g >= std::max(newest - 1, 1); --g) {
    for (int j = 0; j <= kKeys; ++j) {
      bool match = true;
      for (int i = 0; i < kKeys && match; ++i) match = view[i] == StateAfter(i, i < j ? g : g - 1);
      if (match) return true;
    }
  }
  return false;
}

View ScanView(Store& store, const ReadOptions& options) {
  View view(kKeys, -1);
  auto it = store.NewIterator(options, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const int key = std::stoi(std::string(it->key()));
    view[key] = GenerationOf(key, it->value());
  }
  if (!it->status().ok()) view.assign(kKeys, -2);
  return view;
}

TEST(StoreConcurrencyTest, ASnapshotReadsOneCommittedStateWhileAWriterRuns) {
  ReadWhileRewriting([](Store& store, int n) {
    auto snapshot = store.GetSnapshot();
    ReadOptions at;
    at.snapshot = snapshot.get();
    const View first = ScanView(store, at);
    int wrong = IsACommittedState(first) ? 0 : 1;
    std::this_thread::yield();  // let the writer go on
    // Get and MultiGet through the snapshot, then the iterator again.
    View got(kKeys, -1);
    std::vector<std::string> names;
    for (int i = 0; i < kKeys; ++i) names.push_back(std::to_string(i));
    const std::vector<std::string_view> keys(names.begin(), names.end());
    std::vector<std::string> values;
    const std::vector<absl::Status> statuses = store.MultiGet(at, keys, &values);
    for (int i = 0; i < kKeys; ++i) {
      if (statuses[i].ok()) got[i] = GenerationOf(i, values[i]);
    }
    for (int i = 0; i < 50; ++i) {
      std::string value;
      const int key = (n * 7919 + i * 31) % kKeys;
      const absl::Status s = store.Get(at, names[key], &value);
      if ((s.ok() ? GenerationOf(key, value) : -1) != first[key]) ++wrong;
    }
    if (got != first) ++wrong;
    if (ScanView(store, at) != first) ++wrong;
    return wrong;
  }, /*min_reads=*/200);  // each reads every key four times
}

TEST(StoreConcurrencyTest, AnIteratorWithoutASnapshotReadsOneCommittedState) {
  ReadWhileRewriting([](Store& store, int) { return IsACommittedState(ScanView(store, ReadOptions())) ? 0 : 1; },
                     /*min_reads=*/300);
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
