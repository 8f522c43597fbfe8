// Sizes: the page sizes the project reasons about, rounding, and the
// human size syntax shared by every command line ("4k", "2M", "1GiB").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace pmstore::base {

inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kHugePageSize = 2ull << 20;  // one PMD entry on x86-64
inline constexpr uint64_t kGiantPageSize = 1ull << 30;  // one PUD entry on x86-64
inline constexpr uint64_t kCacheLineSize = 64;

constexpr uint64_t RoundUp(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
constexpr uint64_t RoundDown(uint64_t value, uint64_t multiple) {
  return value / multiple * multiple;
}

// Parses "4096", "4k", "4K", "4KiB", "2m", "2MB", "1g", "1GiB", "1t".
// Suffixes are powers of 1024, as in fio. Rejects empty strings, negative
// numbers, unknown suffixes and values that overflow 64 bits.
absl::StatusOr<uint64_t> ParseSize(std::string_view text);

// "4.0 KiB", "2.0 MiB", "1.5 GiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace pmstore::base
