// `pmstore bench`: db_bench's workloads over pmstore (and LMDB with
// --compare=lmdb), timed per operation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pmstore::cli {

struct BenchConfig {
  std::string pool;
  uint64_t size = 1ull << 30;
  std::vector<std::string> benchmarks;  // fillseq, fillrandom, overwrite, readrandom, readseq, deleterandom
  uint64_t num = 1000000;
  int key_size = 16;
  int value_size = 100;
  int threads = 1;
  bool sync = true;
  bool json = false;
  std::string compare;  // "" or "lmdb"
  uint64_t seed = 301;
};

// Runs the benchmarks and prints the report; returns the exit status.
int RunBench(const BenchConfig& config);

}  // namespace pmstore::cli
