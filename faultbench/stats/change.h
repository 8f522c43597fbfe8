// Did a figure change between two sets of runs? The rule of 0-day's LKP
// (lkp-tests lib/stats.rb, lib/changed_stat.rb), the one faultbench uses
// everywhere:
//
//  - with fewer than 3 runs on a side no spread is known, and nothing is
//    called (LKP: "at least one matrix has 3 samples"; here both must);
//  - a change is called only when the two sides' ranges separate: the
//    lowest run of one side lies above the highest run of the other;
//  - and only when the difference of the means clears the figure's noise
//    floor (LKP: ratio > 1.01, > 1.1 for figures that are not the test's
//    own, and event counters that stay small are never reported).
//
// From 6 runs a side on, the range leaves out the floor(n/4) lowest and
// highest runs of that side (from 8 runs on, the middle half: box plots
// whose boxes do not overlap), so a few disturbed runs (host fault storms
// on a loaded host with free page reporting) cannot hide a change for
// ever: repeating more can then decide a result. Measured on ./data (ext4,
// 1 GiB, load average 10): 4 of 16 pmd runs at 28-71 k IOPS, the other 12
// at 138-363 k, every pte run at 75-84 k. LKP leaves out n/32 (at most 3)
// of its hundreds of samples; faultbench's sides have tens.
#pragma once

#include <cstddef>
#include <string>

#include "faultbench/stats/summary.h"

namespace faultbench::stats {

inline constexpr size_t kMinRunsPerSide = 3;

// A change must exceed both: `relative` times |mean of base| and `absolute`
// (in the figure's unit).
struct NoiseFloor {
  double relative = 0;
  double absolute = 0;
};

enum class Change {
  kTooFewRuns,  // a side has fewer than kMinRunsPerSide runs: no spread known
  kNone,        // ranges overlap, or the difference is below the noise floor
  kUp,          // `next` is higher than `base`
  kDown,        // `next` is lower than `base`
};

struct ChangeJudgement {
  Change change = Change::kTooFewRuns;
  // (mean of next - mean of base) / |mean of base| * 100: LKP's %change;
  // +-infinity when base's mean is 0 and next's is not.
  double change_pct = 0;
  // The ranges the rule compared, after leaving out the outer runs.
  double base_low = 0, base_high = 0, next_low = 0, next_high = 0;
  size_t left_out_per_end_base = 0, left_out_per_end_next = 0;
  bool ranges_separate = false;
  bool above_noise_floor = false;
  // One line of evidence: "ranges separate: [64, 64] vs [32768, 32768]",
  // "ranges overlap in [120000, 130000]", "below the noise floor (3%)",
  // "too few runs: 2 and 3 (3 a side needed)".
  std::string Evidence() const;
};

// Runs left out at each end of a side of n runs: floor(n/4) from 6 on.
size_t LeftOutPerEnd(size_t n);

ChangeJudgement JudgeChange(const Summary& base, const Summary& next, const NoiseFloor& floor);

}  // namespace faultbench::stats
