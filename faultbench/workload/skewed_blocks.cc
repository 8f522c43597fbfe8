#include "faultbench/workload/skewed_blocks.h"

#include <algorithm>
#include <cmath>

namespace faultbench {
namespace {

constexpr uint64_t kZipfMaxRanks = 10'000'000;  // fio's ZIPF_MAX_GEN
constexpr int kGaussDraws = 12;                 // fio's GAUSS_ITERS
constexpr uint64_t kGoldenRatio64 = 0x61C8864680B583EBull;  // fio's __hash_u64

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SkewedBlocks::SkewedBlocks(const Distribution& distribution, uint64_t blocks, uint64_t seed)
    : distribution_(distribution), n_(std::max<uint64_t>(blocks, 1)) {
  uint64_t mix = seed;
  for (uint64_t& word : state_) word = SplitMix(mix);
  const double center = distribution_.center;
  switch (distribution_.kind) {
    case RandomDistribution::kZipf: {
      const double theta = distribution_.parameter;
      zeta2_ = 1.0 + std::pow(0.5, theta);
      const uint64_t ranks = std::min(n_, kZipfMaxRanks);
      for (uint64_t i = 0; i < ranks; ++i) zetan_ += std::pow(1.0 / static_cast<double>(i + 1), theta);
      offset_ = center < 0 ? Bits32() : static_cast<uint64_t>(static_cast<double>(n_) * center);
      break;
    }
    case RandomDistribution::kPareto: {
      const double h = distribution_.parameter;
      pareto_pow_ = std::log(h) / std::log(1.0 - h);
      offset_ = center < 0 ? Bits32() : static_cast<uint64_t>(static_cast<double>(n_) * center);
      break;
    }
    case RandomDistribution::kNormal: {
      if (distribution_.parameter != 0) {
        deviation_ = static_cast<uint64_t>(std::ceil(static_cast<double>(n_) * distribution_.parameter / 100.0));
        deviation_ = std::min(deviation_, n_ / 2);
      }
      // fio centres a normal distribution on n * (center - 0.5) past the
      // middle; without a center, on the middle itself.
      const double n = static_cast<double>(n_);
      offset_ = center < 0 ? 0 : static_cast<uint64_t>(n * (center - 0.5) + n) % n_;
      break;
    }
    case RandomDistribution::kRandom: break;
  }
}

uint64_t SkewedBlocks::Bits32() {
  const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = Rotl(state_[3], 45);
  return result >> 32;
}

double SkewedBlocks::Uniform() { return static_cast<double>(Bits32()) / 4294967296.0; }

uint64_t SkewedBlocks::Next() {
  uint64_t rank = 0;
  switch (distribution_.kind) {
    case RandomDistribution::kZipf: {
      const double theta = distribution_.parameter;
      const double n = static_cast<double>(n_);
      const double alpha = 1.0 / (1.0 - theta);
      const double eta = (1.0 - std::pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2_ / zetan_);
      const double u = Uniform();
      const double z = u * zetan_;
      if (z < 1.0) rank = 1;
      else if (z < 1.0 + std::pow(0.5, theta)) rank = 2;
      else rank = 1 + static_cast<uint64_t>(n * std::pow(eta * u - eta + 1.0, alpha));
      --rank;
      break;
    }
    case RandomDistribution::kPareto:
      rank = static_cast<uint64_t>(static_cast<double>(n_ - 1) * std::pow(Uniform(), pareto_pow_));
      break;
    case RandomDistribution::kNormal: {
      uint64_t sum = 0;
      for (int i = 0; i < kGaussDraws; ++i) sum += Bits32() % (n_ + 1);
      sum = (sum + kGaussDraws - 1) / kGaussDraws;
      if (deviation_ != 0) {
        int64_t dev = static_cast<int64_t>(static_cast<double>(deviation_) * Uniform()) -
                      static_cast<int64_t>(deviation_ / 2);
        while (dev != 0 && static_cast<int64_t>(sum) + dev >= static_cast<int64_t>(n_)) dev /= 2;
        sum = static_cast<uint64_t>(static_cast<int64_t>(sum) + dev);
      }
      rank = sum;
      break;
    }
    case RandomDistribution::kRandom: rank = Bits32(); break;
  }
  return (rank * kGoldenRatio64 + offset_) % n_;
}

}  // namespace faultbench
