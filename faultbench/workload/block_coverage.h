// Which blocks an order that repeats blocks (norandommap, fio's skewed
// distributions) has touched: in total, and since the current phase began.
// A permutation touches each block once per pass, so its coverage is its
// count; these orders need counting, one bit per block and per view
// (64 KiB per view for 2 GiB of 4 KiB blocks), so faults per MiB divide by
// the bytes really touched.
//
// Not thread-safe: one per worker.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace faultbench {

class BlockCoverage {
 public:
  explicit BlockCoverage(uint64_t blocks) : ever_((blocks + 63) / 64), phase_((blocks + 63) / 64) {}

  void Mark(uint64_t block) {
    const uint64_t word = block >> 6;
    const uint64_t bit = 1ull << (block & 63);
    if (!(phase_[word] & bit)) {
      phase_[word] |= bit;
      ++in_phase_;
    }
    if (!(ever_[word] & bit)) {
      ever_[word] |= bit;
      ++first_in_phase_;
    }
  }

  void StartPhase() {
    std::fill(phase_.begin(), phase_.end(), 0);
    in_phase_ = first_in_phase_ = 0;
  }

  uint64_t touched_in_phase() const { return in_phase_; }        // distinct blocks of this phase
  uint64_t first_touched_in_phase() const { return first_in_phase_; }  // of them, never touched before

 private:
  std::vector<uint64_t> ever_;
  std::vector<uint64_t> phase_;
  uint64_t in_phase_ = 0;
  uint64_t first_in_phase_ = 0;
};

}  // namespace faultbench
