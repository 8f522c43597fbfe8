// How much of a bare memcpy loop faultbench's run loop keeps: 4 KiB random
// reads through `faultbench run` (prefaulted PMD mapping, so no faults and
// no TLB pressure from 4 KiB pages) against a plain loop of 4 KiB memcpys
// at the same offsets in the same order. The difference is what the run
// loop adds per I/O: the clock reads, the histogram, the engine call.
//
// A third benchmark runs the same job with fio's gtod_reduce (no clock read
// at all): the difference between the two faultbench figures is what the
// per-I/O clock read costs on this machine (one read of the TSC per I/O:
// 11 ns on a KVM guest, 27-30 ns measured on a PVM one).
//
// The file lives on a tmpfs huge=always mount made for the run (root), or
// in $FAULTBENCH_BENCH_DIR; size from $FAULTBENCH_BENCH_SIZE (default 256M).
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "faultbench/run/runner.h"
#include "faultbench/workload/block_order.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kSeed = 0x89;

struct Place {
  std::string dir;
  bool mounted = false;
  uint64_t size = 256ull << 20;
  Place() {
    if (const char* s = std::getenv("FAULTBENCH_BENCH_SIZE")) size = *pmstore::base::ParseSize(s);
    if (const char* d = std::getenv("FAULTBENCH_BENCH_DIR")) {
      dir = d;
      return;
    }
    char pattern[] = "/tmp/faultbench-bench-XXXXXX";
    dir = mkdtemp(pattern) ? pattern : "/dev/shm";
    const std::string options = "size=" + std::to_string(size + (64 << 20)) + ",huge=always";
    mounted = mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted) std::fprintf(stderr, "tmpfs mount refused (not root?): using %s as is\n", dir.c_str());
  }
  ~Place() {
    if (mounted) umount2(dir.c_str(), MNT_DETACH);
    if (dir.rfind("/tmp/faultbench-bench-", 0) == 0) rmdir(dir.c_str());
  }
  std::string file() const { return dir + "/bench.0.0"; }
};

Place& place() {
  static Place p;
  return p;
}

double g_faultbench_iops = 0;
double g_untimed_iops = 0;
double g_memcpy_iops = 0;
double g_faultbench_cpu_iops = 0;
double g_memcpy_cpu_iops = 0;

// The copy both sides make: glibc's memcpy, called. faultbench's mmap
// engine calls it with a length known only at run time; a memcpy of a
// constant 4096 bytes the compiler expands in place (GCC 12 -O2: `rep
// movsq`), a different copy: on this project's AMD EPYC guests it moved a
// page 10-15% faster than glibc's AVX-512 loop, and the bench compared the
// two copies instead of the two loops. Through a volatile pointer the call
// stays a call.
void* (*volatile g_copy)(void*, const void*, size_t) = std::memcpy;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// `timed`: every I/O timed (the default); else fio's gtod_reduce: no clock read.
void FaultbenchRandRead4k(benchmark::State& state, bool timed) {
  faultbench::JobOptions job;
  job.name = "bench";
  job.directory = place().dir;
  job.size = place().size;
  job.bs = kBlock;
  job.rw = faultbench::RwMode::kRandRead;
  job.mapping = pmstore::mapping::PageIntent::kPmd;
  job.prefault = true;
  job.randseed = kSeed;
  job.disable_clat = job.disable_lat = !timed;
  faultbench::RunSettings settings;
  settings.progress = false;
  uint64_t ios = 0;
  double pmd_share = 0;
  double cpu_s = 0;
  for (auto _ : state) {
    auto run = faultbench::ExecuteJobs({job}, settings);
    if (!run.ok() || !run->workers[0].error.empty()) {
      state.SkipWithError(run.ok() ? run->workers[0].error.c_str() : std::string(run.status().message()).c_str());
      return;
    }
    const auto& total = run->workers[0].total;
    state.SetIterationTime(total.runtime_s);  // the measured I/O only, not setup or prefault
    ios += total.read.ios;
    cpu_s += total.rusage.user_s + total.rusage.system_s;
    pmd_share = run->workers[0].mapping.PmdShare();
  }
  state.SetItemsProcessed(static_cast<int64_t>(ios));
  state.counters["pmd_share"] = pmd_share;
  state.counters["IOPS"] = benchmark::Counter(static_cast<double>(ios), benchmark::Counter::kIsRate);
  state.counters["IOPS_cpu"] = cpu_s > 0 ? static_cast<double>(ios) / cpu_s : 0;
}

void BM_FaultbenchRandRead4k(benchmark::State& state) { FaultbenchRandRead4k(state, true); }
void BM_FaultbenchRandRead4kUntimed(benchmark::State& state) { FaultbenchRandRead4k(state, false); }

void BM_BareMemcpy4k(benchmark::State& state) {
  auto file = pmstore::mapping::PoolFile::Open(place().file(), pmstore::mapping::OpenMode::kCreateOrOpen, place().size);
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  const uint64_t blocks = place().size / kBlock;
  alignas(4096) static char buffer[kBlock];
  uint64_t ios = 0;
  double cpu_s = 0;
  for (auto _ : state) {
    // A fresh thread per pass, as faultbench runs each job in a fresh
    // worker thread: on a shared machine the scheduler treats a new thread
    // differently from one that has been sleeping, and that must not
    // favour either side.
    //
    // A fresh, prefaulted mapping per pass too, as each faultbench run maps
    // the file anew: measured here, the first pass over a new mapping is
    // about 10% slower than a pass over one the loop has walked before, and
    // that is not the run loop's doing.
    state.PauseTiming();
    auto mapping = pmstore::mapping::Mapping::Create(*file, {pmstore::mapping::PageIntent::kPmd});
    if (!mapping.ok()) {
      state.SkipWithError(std::string(mapping.status().message()).c_str());
      return;
    }
    const char* base = (*mapping)->address();
    madvise((*mapping)->address(), blocks * kBlock, MADV_POPULATE_READ);
    state.ResumeTiming();
    double wall_s = 0;
    std::thread copier([&] {
      // The order faultbench's worker 0 uses for this seed: same offsets, same sequence.
      faultbench::BlockOrder order = faultbench::BlockOrder::Random(blocks, kSeed);
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = ThreadCpuSeconds();
      for (uint64_t i = 0; i < blocks; ++i) {
        g_copy(buffer, base + order.Next() * kBlock, kBlock);
        // Hands the buffer's address to the optimiser's black box: a memory
        // clobber alone does not keep a copy into a buffer that never escapes.
        benchmark::DoNotOptimize(buffer);
        benchmark::ClobberMemory();
      }
      cpu_s += ThreadCpuSeconds() - cpu_start;
      wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
    copier.join();
    state.SetIterationTime(wall_s);
    ios += blocks;
  }
  state.SetItemsProcessed(static_cast<int64_t>(ios));
  state.counters["IOPS"] = benchmark::Counter(static_cast<double>(ios), benchmark::Counter::kIsRate);
  state.counters["IOPS_cpu"] = cpu_s > 0 ? static_cast<double>(ios) / cpu_s : 0;
}

// Runs both and keeps their rates for the ratio printed at the end.
class RateKeeper : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      // With --benchmark_repetitions the median aggregate (reported after
      // the repetitions) is the figure to keep; mean/stddev/cv are not rates.
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      auto counter = [&](const char* name) {
        return run.counters.count(name) ? static_cast<double>(run.counters.at(name)) : 0.0;
      };
      if (run.benchmark_name().find("FaultbenchRandRead4kUntimed") != std::string::npos) {
        g_untimed_iops = counter("IOPS");
      } else if (run.benchmark_name().find("FaultbenchRandRead4k") != std::string::npos) {
        g_faultbench_iops = counter("IOPS");
        g_faultbench_cpu_iops = counter("IOPS_cpu");
      }
      if (run.benchmark_name().find("BareMemcpy4k") != std::string::npos) {
        g_memcpy_iops = counter("IOPS");
        g_memcpy_cpu_iops = counter("IOPS_cpu");
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

BENCHMARK(BM_BareMemcpy4k)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FaultbenchRandRead4k)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FaultbenchRandRead4kUntimed)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  place();
  RateKeeper reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (g_memcpy_iops > 0 && g_faultbench_iops > 0) {
    std::printf("faultbench randread 4k / bare 4 KiB memcpy loop = %.1f%% (%.0f vs %.0f IOPS)\n",
                100.0 * g_faultbench_iops / g_memcpy_iops, g_faultbench_iops, g_memcpy_iops);
  }
  if (g_memcpy_iops > 0 && g_untimed_iops > 0) {
    std::printf("faultbench randread 4k without a clock read (gtod_reduce) / bare 4 KiB memcpy loop = %.1f%% (%.0f vs "
                "%.0f IOPS)\n", 100.0 * g_untimed_iops / g_memcpy_iops, g_untimed_iops, g_memcpy_iops);
  }
  // Per CPU second of the copying thread: what each loop costs when the
  // machine is shared and the threads are not on a CPU all the time.
  if (g_memcpy_cpu_iops > 0 && g_faultbench_cpu_iops > 0) {
    std::printf("per CPU second of the copying thread: %.1f%% (%.0f vs %.0f I/Os per CPU second)\n",
                100.0 * g_faultbench_cpu_iops / g_memcpy_cpu_iops, g_faultbench_cpu_iops, g_memcpy_cpu_iops);
  }
  benchmark::Shutdown();
  return 0;
}
