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
    char* block = data_.get();
    const uint64_t line = ((stamp ^ offset) & 7) << 6;
    for (uint64_t b = 0; b < blocks_; ++b, block += 512, offset += 512) {
      *reinterpret_cast<uint64_t*>(block + line) = offset;
      reinterpret_cast<uint64_t*>(block + 64 - 16)[0] = stamp;
      reinterpret_cast<uint64_t*>(block + 64 - 16)[1] = offset ^ stamp;
    }
  }

 private:
  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };
  IoBuffer(char* data, uint64_t bs) : data_(data), blocks_(bs / 512) {}

  std::unique_ptr<char, FreeDeleter> data_;
  uint64_t blocks_;  // 512-byte blocks a scramble stamps
};

}  // namespace faultbench
