#include "faultbench/measure/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace faultbench {

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
}

double LatencyHistogram::mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }

double LatencyHistogram::stddev() const {
  if (count_ == 0) return 0.0;
  const double m = mean();
  const double variance = sum_squares_ / static_cast<double>(count_) - m * m;
  return variance > 0 ? std::sqrt(variance) : 0.0;
}

std::pair<uint64_t, uint64_t> LatencyHistogram::BucketRange(unsigned bucket) {
  if (bucket < kSubBuckets) return {bucket, bucket};
  const unsigned exponent = bucket / kSubBuckets - 1;
  const uint64_t mantissa = kSubBuckets + bucket % kSubBuckets;
  const uint64_t low = mantissa << exponent;
  const uint64_t high = low + ((1ull << exponent) - 1);
  return {low, high};
}

uint64_t LatencyHistogram::Percentile(double percent) const {
  if (count_ == 0) return 0;
  // Nearest rank: the smallest value with at least percent% at or below it.
  auto rank = static_cast<uint64_t>(std::ceil(percent / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (unsigned i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const auto [low, high] = BucketRange(i);
      const uint64_t mid = low + (high - low) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

LatencyHistogram::Summary LatencyHistogram::Summarize(double factor, const std::vector<double>& percents) const {
  Summary s;
  s.count = count_;
  s.min = static_cast<double>(min()) * factor;
  s.max = static_cast<double>(max_) * factor;
  s.mean = mean() * factor;
  s.stddev = stddev() * factor;
  for (double p : percents) s.percentiles.emplace_back(p, static_cast<double>(Percentile(p)) * factor);
  return s;
}

const std::vector<double>& FioPercentiles() {
  static const std::vector<double> kPercents = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                                80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return kPercents;
}

}  // namespace faultbench
