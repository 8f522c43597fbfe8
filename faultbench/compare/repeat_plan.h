// How many rounds a comparison runs: a fixed --repeat=N, or --repeat=auto,
// which keeps going until the verdict is decided or the time budget would
// run out, and then says which of the two happened.
//
// Auto runs 3 rounds at least (fewer tell no spread: stats/change.h), then
// one more round at a time while the verdicts call nothing, as long as
// another round (as long as the longest so far) still fits the budget, and
// at most kMaxAutoRounds. More rounds help because the rule leaves out the
// outer quarter of a side's runs at each end from 6 runs on.
#pragma once

#include <cstdint>

#include "faultbench/result/compare_result.h"

namespace faultbench {

inline constexpr int kMaxAutoRounds = 30;

class RepeatPlan {
 public:
  static RepeatPlan Fixed(int rounds);
  static RepeatPlan Auto(double budget_s);

  // True when another round should run; starts its clock.
  bool StartRound();
  // After the round: `decided` when every verdict calls a difference.
  void EndRound(bool decided);

  bool is_auto() const { return auto_; }
  int rounds() const { return done_; }
  // The rounds so far, and for auto whether they decided it, and the time
  // spent of the budget (report/compare_report.h renders it as a note).
  RepeatOutcome Outcome() const;

 private:
  RepeatPlan(bool is_auto, int fixed_rounds, double budget_s)
      : auto_(is_auto), fixed_rounds_(fixed_rounds), budget_s_(budget_s) {}
  double Elapsed() const;

  bool auto_;
  int fixed_rounds_;
  double budget_s_;
  int done_ = 0;
  bool decided_ = false;
  uint64_t start_ns_ = 0, round_start_ns_ = 0;
  double longest_round_s_ = 0;
};

}  // namespace faultbench
