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

BlockOrder::BlockOrder(uint64_t n, uint64_t seed, Kind kind)
    : n_(n > 0 ? n : 1), seed_(seed), kind_(kind), pass_length_(n_) {
  unsigned bits = 1;
  while (bits < 64 && (1ull << bits) < n_) ++bits;
  mask_ = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  shift_ = bits / 2 > 0 ? bits / 2 : 1;
  StartPass(0);
}

BlockOrder BlockOrder::Skewed(uint64_t n, uint64_t seed, const Distribution& distribution) {
  BlockOrder order(n, seed, Kind::kSkewed);
  order.skewed_.emplace(distribution, order.n_, seed);
  return order;
}

BlockOrder BlockOrder::ForJob(const JobOptions& job, uint64_t n, uint64_t seed) {
  if (!IsRandom(job.rw)) return Sequential(n);
  if (job.random_distribution.kind != RandomDistribution::kRandom) return Skewed(n, seed, job.random_distribution);
  return job.norandommap ? Uniform(n, seed) : Random(n, seed);
}

void BlockOrder::StartPass(uint64_t pass) {
  pass_ = pass;
  emitted_ = 0;
  switch (kind_) {
    case Kind::kSequential: state_ = 0; break;
    case Kind::kPermutation: StartPermutation(0); break;
    case Kind::kUniform: {
      uint64_t mix = seed_ ^ (pass * 0xD6E8FEB86659FD93ull);
      state_ = SplitMix(mix) | 1;  // xorshift's state must not be 0
      break;
    }
    case Kind::kSkewed: break;  // one stream across passes, as fio draws it
  }
}

void BlockOrder::StartPermutation(uint64_t lap) {
  lap_left_ = n_;
  uint64_t mix = seed_ ^ (pass_ * 0xD6E8FEB86659FD93ull) ^ (lap * 0xA0761D6478BD642Full);
  // Hull-Dobell for modulus 2^k: increment odd, multiplier - 1 divisible by 4.
  multiplier_ = ((SplitMix(mix) << 2) | 1) & mask_;
  if (mask_ < 4) multiplier_ = 1;  // 2^k <= 4: the only choice with a full period is a = 1 (mod 4)
  increment_ = (SplitMix(mix) | 1) & mask_;
  state_ = SplitMix(mix) & mask_;
}

}  // namespace faultbench
