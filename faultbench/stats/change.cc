#include "faultbench/stats/change.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace faultbench::stats {
namespace {

// Whole numbers for counts and IOPS, four digits for small figures.
std::string Number(double v) { return std::fabs(v) >= 1000 ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.4g", v); }

}  // namespace

size_t LeftOutPerEnd(size_t n) { return n >= 6 ? n / 4 : 0; }

ChangeJudgement JudgeChange(const Summary& base, const Summary& next, const NoiseFloor& floor) {
  ChangeJudgement j;
  const double delta = next.mean - base.mean;
  if (base.mean != 0) {
    j.change_pct = delta / std::fabs(base.mean) * 100;
  } else if (delta != 0) {
    j.change_pct = delta > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  if (base.n() < kMinRunsPerSide || next.n() < kMinRunsPerSide) return j;
  j.left_out_per_end_base = LeftOutPerEnd(base.n());
  j.left_out_per_end_next = LeftOutPerEnd(next.n());
  j.base_low = base.sorted[j.left_out_per_end_base];
  j.base_high = base.sorted[base.n() - 1 - j.left_out_per_end_base];
  j.next_low = next.sorted[j.left_out_per_end_next];
  j.next_high = next.sorted[next.n() - 1 - j.left_out_per_end_next];
  const bool up = j.next_low > j.base_high;
  const bool down = j.next_high < j.base_low;
  j.ranges_separate = up || down;
  j.above_noise_floor = std::fabs(delta) > floor.absolute && std::fabs(delta) > floor.relative * std::fabs(base.mean);
  if (!j.ranges_separate || !j.above_noise_floor) {
    j.change = Change::kNone;
  } else {
    j.change = up ? Change::kUp : Change::kDown;
  }
  return j;
}

std::string ChangeJudgement::Evidence() const {
  if (change == Change::kTooFewRuns) return "too few runs to know the spread (3 a side needed)";
  const std::string ranges = absl::StrFormat("[%s, %s] vs [%s, %s]", Number(base_low), Number(base_high),
                                             Number(next_low), Number(next_high));
  const std::string left_out = left_out_per_end_base + left_out_per_end_next > 0
                                   ? absl::StrFormat(" (outer %d and %d runs a side left out)",
                                                     left_out_per_end_base, left_out_per_end_next)
                                   : "";
  if (!ranges_separate) {
    return absl::StrFormat("ranges overlap in [%s, %s]: %s%s", Number(std::max(base_low, next_low)),
                           Number(std::min(base_high, next_high)), ranges, left_out);
  }
  if (!above_noise_floor) return absl::StrCat("ranges separate but below the noise floor: ", ranges, left_out);
  return absl::StrCat("ranges separate: ", ranges, left_out);
}

}  // namespace faultbench::stats
