// The order in which a worker visits its blocks: sequential, or a seeded
// random permutation that visits every block exactly once per pass.
//
// fio's default random I/O also covers each block once per loop, but keeps
// a bitmap of blocks done. This uses O(1) memory instead: a full-period
// linear congruential generator modulo 2^k (Hull-Dobell: odd increment,
// multiplier = 1 mod 4) visits every k-bit value once per period; a fixed
// bijection on k bits scrambles its weak low bits; values >= n are skipped
// (cycle walking), which keeps the bijection onto [0, n). With 2^k < 2n, at
// most about one value is skipped per block on average.
//
// The same (n, seed, pass) gives the same order on every machine. Each pass
// uses a different order so steady-state loops do not replay the first one.
//
// Not thread-safe; each worker owns one.
#pragma once

#include <cstdint>

namespace faultbench {

class BlockOrder {
 public:
  // Visits 0, 1, ..., n-1.
  static BlockOrder Sequential(uint64_t n) { return BlockOrder(n, 0, false); }
  // Visits a permutation of [0, n) chosen by `seed`.
  static BlockOrder Random(uint64_t n, uint64_t seed) { return BlockOrder(n, seed, true); }

  // Restarts at the beginning of pass `pass` (0 for the first loop).
  void StartPass(uint64_t pass);

  // The next block of the current pass. After blocks() calls the pass is
  // complete; further calls start the next pass's order.
  uint64_t Next() {
    if (emitted_ == n_) StartPass(pass_ + 1);
    ++emitted_;
    if (!random_) return emitted_ - 1;
    for (;;) {
      state_ = (state_ * multiplier_ + increment_) & mask_;
      const uint64_t value = Scramble(state_);
      if (value < n_) return value;
    }
  }

  uint64_t blocks() const { return n_; }
  uint64_t pass() const { return pass_; }
  // Blocks handed out in the current pass.
  uint64_t emitted() const { return emitted_; }

 private:
  BlockOrder(uint64_t n, uint64_t seed, bool random);

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
  bool random_;
  uint64_t mask_ = 0;
  unsigned shift_ = 1;
  uint64_t multiplier_ = 1;
  uint64_t increment_ = 1;
  uint64_t state_ = 0;
  uint64_t pass_ = 0;
  uint64_t emitted_ = 0;
};

}  // namespace faultbench
