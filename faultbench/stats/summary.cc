#include "faultbench/stats/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace faultbench::stats {

double Summary::StddevPercent() const { return mean == 0 ? 0 : 100 * stddev / std::fabs(mean); }

Summary Summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  s.sorted = std::move(values);
  return s;
}

}  // namespace faultbench::stats
