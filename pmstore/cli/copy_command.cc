// `pmstore copy POOL DEST`: Store::CopyTo from the shell, with progress on
// stderr for long copies and a summary (text or JSON) on stdout.
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "pmstore/base/units.h"
#include "pmstore/cli/commands.h"
#include "pmstore/store.h"

namespace pmstore::cli {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One stderr line a second once a copy has run for a second: a short copy
// prints none.
class CopyProgressLine {
 public:
  explicit CopyProgressLine(uint64_t total_keys) : total_keys_(total_keys) {}
  void operator()(uint64_t keys, uint64_t bytes) {
    const double elapsed = SecondsSince(start_);
    if (elapsed < next_report_) return;
    next_report_ = elapsed + 1;
    std::fprintf(stderr, "pmstore: copied %llu of %llu keys (%.0f%%), %s, %.1f s\n",
                 static_cast<unsigned long long>(keys), static_cast<unsigned long long>(total_keys_),
                 total_keys_ == 0 ? 100.0 : 100.0 * static_cast<double>(keys) / static_cast<double>(total_keys_),
                 base::FormatBytes(bytes).c_str(), elapsed);
  }
  Clock::time_point start() const { return start_; }

 private:
  const uint64_t total_keys_;
  const Clock::time_point start_ = Clock::now();
  double next_report_ = 1;
};

}  // namespace

int Copy(const CopyConfig& config) {
  // Read-only, as the commands that only read open a pool (a device DAX
  // pool cannot be: it is opened for writing).
  auto store =
      Store::Open(config.pool, Options{.read_only = !IsCharacterDevice(config.pool), .exclusive = config.exclusive});
  if (!store.ok()) return Fail(store.status());
  const Stats source = (*store)->GetStats();
  uint64_t keys = 0;
  uint64_t bytes = 0;
  CopyProgressLine progress_line(source.keys);
  const absl::Status copied = (*store)->CopyTo(ReadOptions(), config.dest, [&](uint64_t k, uint64_t b) {
    keys = k;
    bytes = b;
    if (config.progress) progress_line(k, b);
  });
  const double seconds = SecondsSince(progress_line.start());
  // The source was only read: its close cannot lose anything, but a
  // failure there still says something is wrong with its device.
  const absl::Status closed = (*store)->Close();
  if (!copied.ok()) return Fail(copied);
  if (!closed.ok()) return Fail(closed);
  const double mb_per_s = seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0;
  // A file copy has the source's geometry; a device is the size it is.
  uint64_t dest_pool_bytes = source.pool_bytes;
  uint64_t dest_max_pool_bytes = source.max_pool_bytes;
  std::string geometry = absl::StrCat(base::FormatBytes(dest_pool_bytes), ", may grow to ",
                                      base::FormatBytes(dest_max_pool_bytes));
  if (IsCharacterDevice(config.dest)) {
    auto dest = Store::Open(config.dest, Options());
    if (!dest.ok()) return Fail(dest.status());
    const Stats device = (*dest)->GetStats();
    if (const absl::Status status = (*dest)->Close(); !status.ok()) return Fail(status);
    dest_pool_bytes = dest_max_pool_bytes = device.pool_bytes;
    geometry = absl::StrCat(base::FormatBytes(device.pool_bytes), " on device DAX (align ",
                            base::FormatBytes(device.device_dax_align), ")");
  }
  if (config.json) {
    const nlohmann::json out = {{"pool", config.pool},
                                {"dest", config.dest},
                                {"keys", keys},
                                {"bytes", bytes},
                                {"seconds", seconds},
                                {"mb_per_s", mb_per_s},
                                {"dest_pool_bytes", dest_pool_bytes},
                                {"dest_max_pool_bytes", dest_max_pool_bytes}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("copied %llu keys (%s of keys and values) from %s to %s in %.2f s (%.1f MB/s); %s\n",
              static_cast<unsigned long long>(keys), base::FormatBytes(bytes).c_str(), config.pool.c_str(),
              config.dest.c_str(), seconds, mb_per_s, geometry.c_str());
  return 0;
}

}  // namespace pmstore::cli
