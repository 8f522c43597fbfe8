#include "faultbench/run/io_buffer.h"

#include "absl/status/status.h"

namespace faultbench {

absl::StatusOr<IoBuffer> IoBuffer::Make(uint64_t bs, const std::string& pattern, uint64_t seed) {
  if (bs == 0 || bs % 64 != 0) return absl::InvalidArgumentError("the I/O buffer's size must be a positive multiple of 64");
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, bs) != 0) return absl::ResourceExhaustedError("cannot allocate the I/O buffer");
  char* data = static_cast<char*>(memory);
  for (uint64_t i = 0; i < bs; ++i) {
    // Without a pattern, non-zero data, so writes are not special-cased anywhere below us.
    data[i] = pattern.empty() ? static_cast<char>((i * 131 + seed) | 1) : pattern[i % pattern.size()];
  }
  return IoBuffer(data, bs);
}

}  // namespace faultbench
