#include "faultbench/compare/repeat_plan.h"

#include <algorithm>

#include "faultbench/stats/change.h"
#include "pmstore/base/tick_clock.h"

namespace faultbench {

using pmstore::base::MonotonicNs;

RepeatPlan RepeatPlan::Fixed(int rounds) { return RepeatPlan(false, rounds, 0); }
RepeatPlan RepeatPlan::Auto(double budget_s) { return RepeatPlan(true, 0, budget_s); }

double RepeatPlan::Elapsed() const { return static_cast<double>(MonotonicNs() - start_ns_) / 1e9; }

bool RepeatPlan::StartRound() {
  const int minimum = static_cast<int>(stats::kMinRunsPerSide);
  bool another;
  if (!auto_) {
    another = done_ < fixed_rounds_;
  } else if (done_ < minimum) {
    another = true;
  } else {
    another = !decided_ && done_ < kMaxAutoRounds && Elapsed() + longest_round_s_ <= budget_s_;
  }
  if (!another) return false;
  round_start_ns_ = MonotonicNs();
  if (done_ == 0) start_ns_ = round_start_ns_;
  return true;
}

void RepeatPlan::EndRound(bool decided) {
  ++done_;
  decided_ = decided;
  longest_round_s_ = std::max(longest_round_s_, static_cast<double>(MonotonicNs() - round_start_ns_) / 1e9);
}

RepeatOutcome RepeatPlan::Outcome() const {
  return {.is_auto = auto_,
          .rounds = done_,
          .decided = auto_ && decided_,
          .most_rounds = auto_ && done_ >= kMaxAutoRounds,
          .elapsed_s = round_start_ns_ == 0 ? 0.0 : Elapsed(),
          .budget_s = budget_s_};
}

}  // namespace faultbench
