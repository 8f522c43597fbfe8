#include "faultbench/measure/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace faultbench {
namespace {

TEST(LatencyHistogram, BucketsTileTheValuesWithoutGaps) {
  uint64_t expected_low = 0;
  for (unsigned b = 0; b < 40 * LatencyHistogram::kSubBuckets; ++b) {
    const auto [low, high] = LatencyHistogram::BucketRange(b);
    ASSERT_EQ(low, expected_low) << "bucket " << b;
    ASSERT_EQ(LatencyHistogram::BucketOf(low), b);
    ASSERT_EQ(LatencyHistogram::BucketOf(high), b);
    expected_low = high + 1;
  }
}

// The promise in the header: a percentile is within 1/256 of a value of
// the exact distribution at that rank.
TEST(LatencyHistogram, PercentilesHaveBoundedRelativeError) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(6.0, 1.5);  // ~400 ns median, heavy tail
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<uint64_t>(dist(rng)) + 1;
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : FioPercentiles()) {
    const auto rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
    const double exact = static_cast<double>(values[rank - 1]);
    const double got = static_cast<double>(h.Percentile(p));
    EXPECT_LE(std::abs(got - exact) / exact, 1.0 / 256 + 1e-9) << "p" << p << " exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.count(), values.size());
}

TEST(LatencyHistogram, MeanAndStddevAreExact) {
  LatencyHistogram h;
  for (uint64_t v : {100, 200, 300, 400}) h.Record(v);
  EXPECT_DOUBLE_EQ(h.mean(), 250);
  EXPECT_NEAR(h.stddev(), std::sqrt(12500.0), 1e-6);
}

TEST(LatencyHistogram, MergeAddsCountsAndExtremes) {
  LatencyHistogram a, b;
  a.Record(10);
  b.Record(1000000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 2u);
  EXPECT_EQ(a.min(), 10u);
  EXPECT_EQ(a.max(), 1000000u);
}

TEST(LatencyHistogram, SummaryScalesTicksToNanoseconds) {
  LatencyHistogram h;
  h.Record(1000);
  const auto s = h.Summarize(0.5, {50.0});
  EXPECT_DOUBLE_EQ(s.min, 500);
  EXPECT_NEAR(s.percentiles[0].second, 500, 500.0 / 256);
}

TEST(LatencyHistogram, EmptyHistogramReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(99), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.mean(), 0);
}

}  // namespace
}  // namespace faultbench
