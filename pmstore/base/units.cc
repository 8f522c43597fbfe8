#include "pmstore/base/units.h"

#include <cctype>
#include <charconv>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pmstore::base {

absl::StatusOr<uint64_t> ParseSize(std::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid size '", std::string(text), "': expected a number with an optional suffix k, m, g or t (e.g. 4k, 2M, 1GiB)"));
  };
  uint64_t number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || rest == begin) return invalid();

  std::string suffix = absl::AsciiStrToLower(std::string(rest, end));
  if (suffix.ends_with("ib")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() == 2 && suffix[1] == 'b') suffix.resize(1);
  int shift = 0;
  if (suffix.empty() || suffix == "b") shift = 0;
  else if (suffix == "k") shift = 10;
  else if (suffix == "m") shift = 20;
  else if (suffix == "g") shift = 30;
  else if (suffix == "t") shift = 40;
  else return invalid();

  if (shift > 0 && number > (std::numeric_limits<uint64_t>::max() >> shift)) {
    return absl::OutOfRangeError(absl::StrCat("size '", std::string(text), "' does not fit in 64 bits"));
  }
  return number << shift;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

}  // namespace pmstore::base
