// `pmstore bench`: db_bench's workloads over pmstore (and LMDB with
// --compare=lmdb), timed per operation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pmstore::cli {

struct BenchConfig {
  std::string pool;
  uint64_t size = 0;  // of the pool and of LMDB's map; 0: sized to fit num keys (at least 1 GiB)
  std::vector<std::string> benchmarks;  // names from kBenchmarkNames, run in this order
  uint64_t num = 1000000;  // keys: the key space of every benchmark
  uint64_t reads = 0;      // operations of the read benchmarks (0: num)
  int key_size = 16;
  int value_size = 100;  // up to kMaxBenchValueSize
  int batch = 32;        // keys per MultiGet (multiget)
  int seek_nexts = 0;    // seekrandom: entries read after each seek
  bool reverse = false;  // seekrandom: SeekForPrev and Prev
  int threads = 1;        // updaterandom: thread t updates keys k with k % threads == t
  bool sync = true;
  bool transactions = false;  // updaterandom: each update in a pmstore::Transaction
  bool json = false;
  std::string compare;  // "" or "lmdb"
  bool compare_first = false;  // run the compared engine before pmstore
  bool exclusive = false;      // pmstore's opens are Options::exclusive
  uint64_t seed = 301;
};

inline constexpr int kMaxBenchValueSize = 4 << 20;

inline constexpr std::string_view kBenchmarkNames[] = {
    "fillseq",    "fillrandom",   "overwrite",    "updaterandom",     "readrandom", "readmissing", "multiget",
    "readseq",    "readreverse",  "seekrandom",   "deleterandom",     "readwhilewriting", "reopen",
    "reopenreadonly"};

// Runs the benchmarks and prints the report; returns the exit status.
int RunBench(const BenchConfig& config);

}  // namespace pmstore::cli
