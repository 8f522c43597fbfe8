#include "pmstore/cli/bench_space.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "pmstore/base/units.h"

namespace pmstore::cli {
namespace {

// What `num` keys with their values and index take, with room for
// overwrites: in pmstore, values of 1 MiB and more take whole 2 MiB runs
// (store.h); LMDB fills its 4 KiB pages about half when keys come in
// random order, and gives a large value whole overflow pages.
struct SpaceNeeded {
  uint64_t pmstore;
  uint64_t lmdb;
};
SpaceNeeded SpaceFor(const BenchConfig& config) {
  constexpr uint64_t kMiB = 1ull << 20;
  const uint64_t key = config.key_size, value = config.value_size;
  const auto round_up = [](uint64_t bytes, uint64_t unit) { return (bytes + unit - 1) / unit * unit; };
  const uint64_t pmstore_per_key = value >= kMiB ? round_up(value, 2 * kMiB) + round_up(32 + key, 64)
                                                 : round_up(24 + key + value, 64) + 56;  // 56: a leaf slot's share
  const uint64_t lmdb_per_key = value >= 2048 ? round_up(value + key + 16, 4096) : 2 * (key + value + 16);
  const auto with_room = [&](uint64_t per_key, uint64_t extra) {
    const uint64_t data = config.num * per_key;
    return round_up(data + data / 2 + extra + 64 * kMiB, 2 * kMiB);
  };
  // Half again: room for overwrites, and for the holes a fill leaves (10 M
  // keys of fillseq claimed 1604 chunks at 70% use). Plus the separator
  // image a clean close writes in whole free chunks (32 B a leaf, a leaf
  // per 23 keys of fillseq; under 2 B a key).
  const uint64_t image = round_up(config.num * 2, 2 * kMiB) + 2 * kMiB;
  return {with_room(pmstore_per_key, image), with_room(lmdb_per_key, 0)};
}

}  // namespace

uint64_t PoolBytesFor(const BenchConfig& config) {
  const SpaceNeeded need = SpaceFor(config);
  return std::max<uint64_t>({1ull << 30, need.pmstore, need.lmdb});
}

absl::Status CheckRoom(const BenchConfig& config) {
  const size_t slash = config.pool.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : config.pool.substr(0, slash);
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) return absl::OkStatus();  // the open names the problem
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  // pmstore allocates its whole pool at creation; LMDB's file grows as it fills.
  const uint64_t need = config.size + (config.compare.empty() ? 0 : SpaceFor(config).lmdb);
  if (need <= free_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      config.num, " keys with values of ", config.value_size, " B need about ", base::FormatBytes(need),
      config.compare.empty() ? " (a pool sized to fit them)" : " (a pool sized to fit them, and LMDB's file)",
      ", but ", dir, " has ", base::FormatBytes(free_bytes), " free: lower --num or --value-size, or give --size"));
}

}  // namespace pmstore::cli
