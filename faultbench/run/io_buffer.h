// The buffer a worker's writes copy from and its reads copy into: bs
// bytes, 4 KiB aligned, filled once with the job's buffer_pattern repeated
// (fio's buffer_pattern; zero_buffers is the one-byte pattern 0), or else
// with non-zero bytes from the worker's seed.
//
// With scramble_buffers=1 (fio's default in job files) each write first
// stamps every 512-byte block of it, as fio's small_content_scramble does:
// the write's file offset at the start of one of the block's eight cache
// lines (picked by the stamp and the offset), the stamp at the end of the
// first line. No two writes then carry the same bytes, at the cost of two
// cache lines touched per 512 bytes. The worker does it outside the timed
// copy, as fio does it before it starts the completion clock.
//
// bs need only be a multiple of 64 here, so a write may end in a block
// shorter than 512 bytes (or be one): that block is stamped too, the
// offset in one of the lines it has. fio counts whole 512-byte blocks
// only, and leaves writes under 512 B and the tail of longer ones as they
// were.
//
// Not thread-safe: one per worker.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace faultbench {

class IoBuffer {
 public:
  static absl::StatusOr<IoBuffer> Make(uint64_t bs, const std::string& pattern, uint64_t seed);

  char* data() const { return data_.get(); }

  void Scramble(uint64_t offset, uint64_t stamp) {
    const uint64_t pick = (stamp ^ offset) & 7;  // the line of a whole block that gets the offset
    char* block = data_.get();
    for (uint64_t left = bs_; left > 0;) {
      const uint64_t bytes = left < 512 ? left : 512;
      const uint64_t line = (bytes == 512 ? pick : pick % (bytes / 64)) << 6;
      *reinterpret_cast<uint64_t*>(block + line) = offset;
      reinterpret_cast<uint64_t*>(block + 64 - 16)[0] = stamp;
      reinterpret_cast<uint64_t*>(block + 64 - 16)[1] = offset ^ stamp;
      block += bytes;
      offset += bytes;
      left -= bytes;
    }
  }

 private:
  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };
  IoBuffer(char* data, uint64_t bs) : data_(data), bs_(bs) {}

  std::unique_ptr<char, FreeDeleter> data_;
  uint64_t bs_;  // a multiple of 64 (ValidateJob): every block of it has a first cache line
};

}  // namespace faultbench
