// What the kernel counts for the calling thread: CPU time, faults and
// context switches (getrusage(RUSAGE_THREAD)), and, where the PMU allows,
// dTLB misses and page faults (perf_event_open on this thread).
//
// Snapshots are taken by the worker thread itself before and after each
// phase; the difference is the phase's cost. A counter the machine does not
// provide stays std::nullopt and is reported as null / "unavailable",
// never as zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace faultbench {

struct RusageSnapshot {
  double user_s = 0;
  double system_s = 0;
  uint64_t minor_faults = 0;
  uint64_t major_faults = 0;
  uint64_t context_switches = 0;  // voluntary + involuntary, as fio's ctx
};

// getrusage(RUSAGE_THREAD) of the calling thread.
RusageSnapshot ThreadRusage();
RusageSnapshot operator-(const RusageSnapshot& after, const RusageSnapshot& before);

struct PerfSnapshot {
  std::optional<uint64_t> dtlb_load_misses;
  std::optional<uint64_t> dtlb_store_misses;
  std::optional<uint64_t> page_faults;
};
PerfSnapshot operator-(const PerfSnapshot& after, const PerfSnapshot& before);

// Per-thread perf counters, opened by the thread they count. Counters the
// kernel refuses (no PMU in a VM, perf_event_paranoid) are left out and
// `unavailable_reason()` says why.
class ThreadPerfCounters {
 public:
  ThreadPerfCounters();
  ~ThreadPerfCounters();
  ThreadPerfCounters(const ThreadPerfCounters&) = delete;
  ThreadPerfCounters& operator=(const ThreadPerfCounters&) = delete;

  PerfSnapshot Read() const;
  const std::string& unavailable_reason() const { return unavailable_reason_; }

 private:
  int dtlb_load_fd_ = -1;
  int dtlb_store_fd_ = -1;
  int page_faults_fd_ = -1;
  std::string unavailable_reason_;
};

}  // namespace faultbench
