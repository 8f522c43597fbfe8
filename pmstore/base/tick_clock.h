// The clock the tools read once per operation (faultbench's run loop,
// pmstore bench).
//
// A 4 KiB memcpy or a store lookup takes a few hundred nanoseconds, so the
// clock must cost little next to it: clock_gettime through the vDSO costs
// about 27 ns on a kvm-clock guest, the TSC about 11 ns. With an invariant TSC (constant_tsc
// and nonstop_tsc) the loop reads ticks, and the tick rate is measured
// against CLOCK_MONOTONIC over the run itself (TickCalibration), so no
// frequency is assumed. Without one, ticks are CLOCK_MONOTONIC nanoseconds.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace pmstore::base {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// True when /proc/cpuinfo reports an invariant TSC (read once).
bool InvariantTscAvailable();

inline uint64_t ReadTicks(bool use_tsc) {
#if defined(__x86_64__)
  if (use_tsc) return __rdtsc();
#endif
  return MonotonicNs();
}

// Pairs of (ticks, ns) taken at the start and end of a measured interval;
// their ratio converts tick counts to nanoseconds.
class TickCalibration {
 public:
  explicit TickCalibration(bool use_tsc) : use_tsc_(use_tsc) {}
  void Start() {
    start_ns_ = MonotonicNs();
    start_ticks_ = ReadTicks(use_tsc_);
  }
  void Stop() {
    stop_ticks_ = ReadTicks(use_tsc_);
    stop_ns_ = MonotonicNs();
  }
  bool use_tsc() const { return use_tsc_; }
  double NsPerTick() const {
    if (!use_tsc_ || stop_ticks_ <= start_ticks_) return 1.0;
    return static_cast<double>(stop_ns_ - start_ns_) / static_cast<double>(stop_ticks_ - start_ticks_);
  }

 private:
  bool use_tsc_;
  uint64_t start_ns_ = 0, stop_ns_ = 0, start_ticks_ = 0, stop_ticks_ = 0;
};

}  // namespace pmstore::base
