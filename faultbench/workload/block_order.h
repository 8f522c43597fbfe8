// The order in which a worker visits its blocks: sequential; a seeded
// random permutation that visits every block exactly once per pass (fio's
// default random map); uniform draws with replacement (fio's
// norandommap); or fio's skewed distributions (skewed_blocks.h).
//
// fio's default random I/O covers each block once per loop, but keeps a
// bitmap of blocks done. The permutation uses O(1) memory instead: a
// full-period linear congruential generator modulo 2^k (Hull-Dobell: odd
// increment, multiplier = 1 mod 4) visits every k-bit value once per
// period; a fixed bijection on k bits scrambles its weak low bits; values
// >= n are skipped (cycle walking), which keeps the bijection onto [0, n).
// With 2^k < 2n, at most about one value is skipped per block on average.
//
// norandommap draws each offset as fio does, floor(n * u) for a uniform u
// in [0, 1): some blocks come twice in a pass and some never.
//
// The same (n, seed, pass) gives the same order on every machine. Each pass
// uses a different order so steady-state loops do not replay the first one.
// A pass is `pass_length` I/Os (fio's size= or io_size= per loop), n unless
// set otherwise; a permutation longer than n starts a new one every n.
//
// Not thread-safe; each worker owns one.
#pragma once

#include <cstdint>
#include <optional>

#include "faultbench/workload/job_options.h"
#include "faultbench/workload/skewed_blocks.h"

namespace faultbench {

class BlockOrder {
 public:
  // Visits 0, 1, ..., n-1.
  static BlockOrder Sequential(uint64_t n) { return BlockOrder(n, 0, Kind::kSequential); }
  // Visits a permutation of [0, n) chosen by `seed`.
  static BlockOrder Random(uint64_t n, uint64_t seed) { return BlockOrder(n, seed, Kind::kPermutation); }
  // Uniform with replacement (fio's norandommap).
  static BlockOrder Uniform(uint64_t n, uint64_t seed) { return BlockOrder(n, seed, Kind::kUniform); }
  // fio's zipf, pareto or normal distribution, with replacement.
  static BlockOrder Skewed(uint64_t n, uint64_t seed, const Distribution& distribution);
  // The order a job's rw, norandommap and random_distribution ask for.
  static BlockOrder ForJob(const JobOptions& job, uint64_t n, uint64_t seed);

  // I/Os per pass; n by default.
  void SetPassLength(uint64_t ios) {
    pass_length_ = ios > 0 ? ios : n_;
    StartPass(pass_);
  }

  // Restarts at the beginning of pass `pass` (0 for the first loop).
  void StartPass(uint64_t pass);

  // The next block of the current pass. After pass_length() calls the pass
  // is complete; further calls start the next pass's order.
  uint64_t Next() {
    if (emitted_ == pass_length_) StartPass(pass_ + 1);
    ++emitted_;
    switch (kind_) {
      case Kind::kSequential: return NextInSequence();
      case Kind::kPermutation: return NextInPermutation();
      case Kind::kUniform: return NextUniform();
      case Kind::kSkewed: return skewed_->Next();
    }
    return 0;
  }

  uint64_t blocks() const { return n_; }
  uint64_t pass_length() const { return pass_length_; }
  uint64_t pass() const { return pass_; }
  // Blocks handed out in the current pass.
  uint64_t emitted() const { return emitted_; }
  // False when a pass may repeat blocks (norandommap, skewed kinds): then
  // the distinct bytes a pass touches must be counted, not assumed.
  bool each_block_once() const { return kind_ == Kind::kSequential || kind_ == Kind::kPermutation; }

 private:
  enum class Kind { kSequential, kPermutation, kUniform, kSkewed };
  BlockOrder(uint64_t n, uint64_t seed, Kind kind);
  void StartPermutation(uint64_t lap);

  uint64_t NextInSequence() {
    const uint64_t block = state_;
    if (++state_ == n_) state_ = 0;
    return block;
  }

  uint64_t NextInPermutation() {
    if (lap_left_ == 0) StartPermutation((emitted_ - 1) / n_);
    --lap_left_;
    for (;;) {
      state_ = (state_ * multiplier_ + increment_) & mask_;
      const uint64_t value = Scramble(state_);
      if (value < n_) return value;
    }
  }

  uint64_t NextUniform() {
    // xorshift64*, then fio's floor(n * u).
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const uint64_t r = state_ * 0x2545F4914F6CDD1Dull;
    return static_cast<uint64_t>(static_cast<double>(n_) * (static_cast<double>(r >> 11) * 0x1.0p-53));
  }

  // A bijection on [0, 2^bits): xorshift and odd multiplications, each of
  // which is invertible modulo 2^bits.
  uint64_t Scramble(uint64_t x) const {
    x ^= x >> shift_;
    x = (x * 0x9E3779B97F4A7C15ull) & mask_;
    x ^= x >> shift_;
    x = (x * 0xBF58476D1CE4E5B9ull) & mask_;
    x ^= x >> shift_;
    return x;
  }

  uint64_t n_;
  uint64_t seed_;
  Kind kind_;
  uint64_t pass_length_;
  uint64_t mask_ = 0;
  unsigned shift_ = 1;
  uint64_t multiplier_ = 1;
  uint64_t increment_ = 1;
  uint64_t state_ = 0;     // the generator's state; the next block of a sequential order
  uint64_t lap_left_ = 0;  // permutation: draws left before a new permutation of n starts
  uint64_t pass_ = 0;
  uint64_t emitted_ = 0;
  std::optional<SkewedBlocks> skewed_;
};

}  // namespace faultbench
