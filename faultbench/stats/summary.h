// A set of repeated measurements of one figure, summarized the way a
// regression report shows them: min, median, max, mean and the standard
// deviation as a percentage of the mean (LKP's "%stddev").
//
// stats/ is the one place that decides whether two sets of runs differ
// (change.h); compare/ (PMD against PTE in one run) and diff/ (two
// kernels, file systems or machines) both ask it. It knows numbers, not
// faultbench's results, and depends on nothing above it.
#pragma once

#include <cstddef>
#include <vector>

namespace faultbench::stats {

struct Summary {
  // Median, min and max first, so `{median, min, max}` still initializes one.
  double median = 0, min = 0, max = 0;
  double mean = 0;
  double stddev = 0;           // sample standard deviation (n - 1); 0 for one value
  std::vector<double> sorted;  // every value, ascending

  size_t n() const { return sorted.size(); }
  // 100 * stddev / |mean|; 0 when the mean is 0.
  double StddevPercent() const;
};

Summary Summarize(std::vector<double> values);

}  // namespace faultbench::stats
