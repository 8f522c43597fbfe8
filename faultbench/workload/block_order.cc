#include "faultbench/workload/block_order.h"

namespace faultbench {
namespace {

// SplitMix64: turns (seed, pass) into well-spread generator parameters.
uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

BlockOrder::BlockOrder(uint64_t n, uint64_t seed, bool random) : n_(n), seed_(seed), random_(random) {
  unsigned bits = 1;
  while (bits < 64 && (1ull << bits) < n_) ++bits;
  mask_ = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  shift_ = bits / 2 > 0 ? bits / 2 : 1;
  StartPass(0);
}

void BlockOrder::StartPass(uint64_t pass) {
  pass_ = pass;
  emitted_ = 0;
  if (!random_) return;
  uint64_t mix = seed_ ^ (pass * 0xD6E8FEB86659FD93ull);
  // Hull-Dobell for modulus 2^k: increment odd, multiplier - 1 divisible by 4.
  multiplier_ = ((SplitMix(mix) << 2) | 1) & mask_;
  if (mask_ < 4) multiplier_ = 1;  // 2^k <= 4: the only choice with a full period is a = 1 (mod 4)
  increment_ = (SplitMix(mix) | 1) & mask_;
  state_ = SplitMix(mix) & mask_;
}

}  // namespace faultbench
