// Anonymous 4 KiB page faults a second, one task: faultbench's fault phase
// against will-it-scale's page_fault1 loop, alternating in one process.
//
// page_fault1 (github.com/antonblanchard/will-it-scale, tests/page_fault1.c)
// maps 128 MiB of private anonymous memory with a NULL hint, writes one
// byte of every page, unmaps it, and again, counting one iteration per
// page: its rate is faults a second with the unmap's cost spread over them.
// The loop below is that loop, written here (the suite's harness, which
// samples the count every second, is not): it runs for --seconds in a
// fresh thread and its rate is pages written over that time.
//
// faultbench's side is `faultbench scale --anon --size=128M --rw=write
// --mapping=auto --tasks=1 --mode=threads --repeat=1`: the same memory
// (private anonymous, mmap(NULL), no advice), each 4 KiB page written once
// by a 4 KiB memcpy, its rate the faults of the fault phase over that
// phase's time.
//
//   faultbench_fault_rate_bench [--rounds=N] [--seconds=S]
// prints one line a round and the medians with their ratio.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "faultbench/scale/scale.h"

namespace {

constexpr size_t kMemSize = 128u << 20;

// will-it-scale's page_fault1 loop for `seconds`; pages written a second.
double PageFault1(double seconds) {
  const size_t page = static_cast<size_t>(getpagesize());
  uint64_t iterations = 0;
  double elapsed = 0;
  std::thread task([&] {
    const auto start = std::chrono::steady_clock::now();
    do {
      char* c = static_cast<char*>(mmap(nullptr, kMemSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (c == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
      }
      for (size_t i = 0; i < kMemSize; i += page) {
        c[i] = 0;
        ++iterations;
      }
      munmap(c, kMemSize);
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < seconds);
  });
  task.join();
  return static_cast<double>(iterations) / elapsed;
}

// faultbench scale's one task, one run: its faults a second.
double Faultbench() {
  faultbench::ScaleConfig config;
  config.job.name = "fault-rate";
  config.job.anon = faultbench::AnonMemory::kPrivate;
  config.job.size = kMemSize;
  config.job.rw = faultbench::RwMode::kWrite;
  config.tasks = {1};
  config.modes = {faultbench::ScaleMode::kThreads};
  config.repeat = 1;
  config.progress = false;
  auto outcome = faultbench::RunScale(config);
  if (!outcome.ok()) {
    std::fprintf(stderr, "faultbench scale: %s\n", std::string(outcome.status().message()).c_str());
    std::exit(1);
  }
  return outcome->points.front().total.median;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  double seconds = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--rounds=", 0) == 0) {
      rounds = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--seconds=", 0) == 0) {
      seconds = std::atof(arg.c_str() + 10);
    } else {
      std::fprintf(stderr, "usage: %s [--rounds=N] [--seconds=S]\n", argv[0]);
      return 2;
    }
  }
  std::vector<double> loop, fb;
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first, so a drift of the machine favours neither.
    const bool loop_first = r % 2 == 0;
    double a = 0, b = 0;
    if (loop_first) a = PageFault1(seconds);
    b = Faultbench();
    if (!loop_first) a = PageFault1(seconds);
    loop.push_back(a);
    fb.push_back(b);
    std::printf("round %d: page_fault1 loop %.0f faults/s, faultbench %.0f faults/s (%.2f)\n", r + 1, a, b, b / a);
  }
  std::printf("median: page_fault1 loop %.0f faults/s, faultbench %.0f faults/s: faultbench / page_fault1 = %.2f\n",
              Median(loop), Median(fb), Median(fb) / Median(loop));
  return 0;
}
