#include "faultbench/result/scale_result.h"

namespace faultbench {

std::string_view ScaleModeName(ScaleMode mode) { return mode == ScaleMode::kThreads ? "threads" : "processes"; }

double ScaleRun::TotalFaultsPerSecond() const {
  double sum = 0;
  for (const ScaleTask& t : tasks) sum += t.FaultsPerSecond();
  return sum;
}

double ScaleRun::FaultsPerSecondPerTask() const {
  return tasks.empty() ? 0 : TotalFaultsPerSecond() / static_cast<double>(tasks.size());
}

}  // namespace faultbench
