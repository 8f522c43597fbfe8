// fio's non-uniform random_distribution kinds, drawn the way fio 3.33
// draws them (lib/zipf.c, lib/gauss.c), so a job file's zipf:1.2 hits the
// same share of hot blocks here as in fio:
//
//   zipf:theta    rank from Gray et al.'s zipf generator (zeta summed over
//                 at most 10 M ranks, as fio caps it);
//   pareto:h      rank = (n - 1) * u^(log h / log(1 - h));
//   normal:dev    the mean of 12 uniform draws over [0, n], plus a uniform
//                 deviation of dev percent of n (halved until it fits).
//
// Then, as in fio, a rank is scattered over the range by a 64-bit
// multiplicative hash (hot blocks are not adjacent) and shifted by an
// offset: a seeded random one, or n * center when the job gives a center
// (zipf:1.2:0.5). Every draw is with replacement.
//
// The uniform numbers come from this project's generator, not fio's
// Tausworthe one: the distribution is fio's, the individual offsets are not.
//
// Not thread-safe; each worker owns one.
#pragma once

#include <cstdint>

#include "faultbench/workload/job_options.h"

namespace faultbench {

class SkewedBlocks {
 public:
  // `distribution.kind` must not be kRandom. Computing zipf's zeta costs
  // one pow() per rank (capped at 10 M): done here, not per draw.
  SkewedBlocks(const Distribution& distribution, uint64_t blocks, uint64_t seed);

  // The next block in [0, blocks).
  uint64_t Next();

 private:
  // Uniform in [0, 1) and in [0, 2^32), from xoshiro256**.
  double Uniform();
  uint64_t Bits32();

  Distribution distribution_;
  uint64_t n_;
  uint64_t state_[4];
  uint64_t offset_ = 0;   // fio's rand_off
  double zetan_ = 0;      // zipf
  double zeta2_ = 0;      // zipf
  double pareto_pow_ = 0;
  uint64_t deviation_ = 0;  // normal: fio's stddev, in blocks
};

}  // namespace faultbench
