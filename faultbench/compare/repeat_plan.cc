#include "faultbench/compare/repeat_plan.h"

#include <algorithm>

#include "absl/strings/str_format.h"
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

std::string RepeatPlan::RoundLabel() const {
  if (!auto_) return absl::StrFormat("%d/%d", done_ + 1, fixed_rounds_);
  return absl::StrFormat("%d (auto, %.0f s of %.0f s)", done_ + 1, done_ == 0 ? 0.0 : Elapsed(), budget_s_);
}

std::string RepeatPlan::Note(const std::string& undecided_evidence) const {
  if (!auto_) return "";
  if (decided_) return absl::StrFormat("--repeat=auto: decided after %d rounds (%.1f s)", done_, Elapsed());
  const char* why = done_ >= kMaxAutoRounds ? "in the most rounds auto runs" : "within the budget";
  return absl::StrFormat(
      "--repeat=auto: not decided %s (%d rounds, %.1f s of --repeat-budget=%.0fs): %s; a longer budget or a "
      "quieter machine (see the taint) may decide it",
      why, done_, Elapsed(), budget_s_, undecided_evidence);
}

}  // namespace faultbench
