// Completion latencies of one direction of one job: a log-linear histogram
// (HdrHistogram's layout) plus exact min, max, mean and standard deviation.
//
// Values below 2^kSubBucketBits are kept exactly; above, each power of two
// is split into 2^kSubBucketBits equal buckets, so a reported percentile is
// within 1/2^(kSubBucketBits+1) (0.4%) of a value that was recorded. Memory
// is fixed (a few tens of KiB) whatever the run length, and Record is a few
// instructions: it runs once per I/O inside the timed loop.
//
// Units are whatever the caller records (clock ticks in the run loop);
// Scaled() converts to nanoseconds once, at report time.
//
// Not thread-safe: one histogram per worker and direction; Merge combines.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace faultbench {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = 1ull << kSubBucketBits;
  static constexpr unsigned kMaxExponent = 64 - kSubBucketBits;

  LatencyHistogram();

  void Record(uint64_t value) {
    ++counts_[BucketOf(value)];
    ++count_;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
    const double v = static_cast<double>(value);
    sum_ += v;
    sum_squares_ += v * v;
  }

  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const;
  double stddev() const;  // population standard deviation, as fio prints

  // The value below which `percent` of the recorded values lie (nearest
  // rank), as the midpoint of its bucket clamped to [min, max]. 0 when empty.
  uint64_t Percentile(double percent) const;

  // A copy whose values are multiplied by `factor` (ticks -> ns). Bucket
  // boundaries scale with the values, so the relative error bound holds.
  struct Summary {
    uint64_t count = 0;
    double min = 0, max = 0, mean = 0, stddev = 0;
    std::vector<std::pair<double, double>> percentiles;  // (percent, value)
  };
  Summary Summarize(double factor, const std::vector<double>& percents) const;

  // Bucket index of `value` and the range [low, high] of values it holds.
  static unsigned BucketOf(uint64_t value) {
    if (value < kSubBuckets) return static_cast<unsigned>(value);
    const unsigned exponent = static_cast<unsigned>(std::bit_width(value)) - 1 - kSubBucketBits;
    return (exponent + 1) * kSubBuckets + static_cast<unsigned>((value >> exponent) - kSubBuckets);
  }
  static std::pair<uint64_t, uint64_t> BucketRange(unsigned bucket);

 private:
  static constexpr unsigned kBuckets = (kMaxExponent + 1) * kSubBuckets;

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

// fio's default completion-latency percentile list.
const std::vector<double>& FioPercentiles();

}  // namespace faultbench
