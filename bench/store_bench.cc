// Google Benchmarks of the store: durable and unsynced puts, point reads
// (copying and zero-copy), and iteration, on a pool in /dev/shm.
// Set PMEM2_FORCE_GRANULARITY=CACHE_LINE to measure the flush+fence path
// instead of msync. `pmstore bench` is the db_bench-style tool; this file
// is for quick A/B of code changes.
#include <unistd.h>

#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "pmstore/store.h"

namespace {

constexpr int kKeys = 100000;

std::string Key(int64_t i) {
  std::string key = std::to_string(i);
  return std::string(16 - key.size(), '0') + key;
}

std::unique_ptr<pmstore::Store> FreshStore(const std::string& name) {
  const std::string path = "/dev/shm/pmstore-bench-" + name + "-" + std::to_string(getpid());
  unlink(path.c_str());
  pmstore::Options options;
  options.create_if_missing = true;
  options.initial_size = 256ull << 20;
  options.max_size = 1ull << 30;
  auto store = pmstore::Store::Open(path, options);
  unlink(path.c_str());  // the mapping keeps it alive
  return store.ok() ? std::move(*store) : nullptr;
}

// One store shared by the read benchmarks, filled once.
pmstore::Store* Filled() {
  static std::unique_ptr<pmstore::Store> store = [] {
    auto s = FreshStore("read");
    for (int i = 0; i < kKeys; ++i) (void)s->Put(pmstore::WriteOptions{.sync = false}, Key(i), std::string(100, 'v'));
    (void)s->Sync();
    return s;
  }();
  return store.get();
}

void BM_Put(benchmark::State& state) {
  auto store = FreshStore("put");
  const pmstore::WriteOptions write{.sync = state.range(0) != 0};
  const std::string value(100, 'v');
  int64_t i = 0;
  for (auto _ : state) {
    if (!store->Put(write, Key((i++ * 7919) % kKeys), value).ok()) state.SkipWithError("put failed");
  }
  state.SetItemsProcessed(i);
}
BENCHMARK(BM_Put)->ArgName("sync")->Arg(1)->Arg(0);

void BM_GetCopy(benchmark::State& state) {
  pmstore::Store* store = Filled();
  std::string value;
  int64_t i = 0;
  for (auto _ : state) {
    if (!store->Get(Key((i++ * 7919) % kKeys), &value).ok()) state.SkipWithError("get failed");
  }
  state.SetItemsProcessed(i);
}
BENCHMARK(BM_GetCopy)->ThreadRange(1, 2)->UseRealTime();

void BM_GetPinned(benchmark::State& state) {
  pmstore::Store* store = Filled();
  pmstore::PinnedValue value;
  int64_t i = 0;
  for (auto _ : state) {
    if (!store->Get(pmstore::ReadOptions(), Key((i++ * 7919) % kKeys), &value).ok()) state.SkipWithError("get failed");
    benchmark::DoNotOptimize(value.value().data());
  }
  state.SetItemsProcessed(i);
}
BENCHMARK(BM_GetPinned);

void BM_IterateAll(benchmark::State& state) {
  pmstore::Store* store = Filled();
  int64_t n = 0;
  for (auto _ : state) {
    auto it = store->NewIterator(pmstore::ReadOptions(), {});
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(BM_IterateAll)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
