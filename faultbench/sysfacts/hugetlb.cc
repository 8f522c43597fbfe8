#include "faultbench/sysfacts/hugetlb.h"

#include <sys/vfs.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/mount.h"
#include "faultbench/sysfacts/read_file.h"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

namespace faultbench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPoolsDir = "/sys/kernel/mm/hugepages";

HugetlbPool ReadPoolDirectory(const fs::path& dir, uint64_t page_size) {
  HugetlbPool pool;
  pool.page_size = page_size;
  pool.sysfs_dir = dir.string();
  pool.nr = ReadNumber(dir / "nr_hugepages").value_or(0);
  pool.free = ReadNumber(dir / "free_hugepages").value_or(0);
  pool.reserved = ReadNumber(dir / "resv_hugepages").value_or(0);
  pool.surplus = ReadNumber(dir / "surplus_hugepages").value_or(0);
  pool.overcommit = ReadNumber(dir / "nr_overcommit_hugepages").value_or(0);
  return pool;
}

}  // namespace

uint64_t HugetlbPool::Available() const {
  const uint64_t unpromised = free - std::min(free, reserved);
  return unpromised + (overcommit - std::min(overcommit, surplus));
}

std::string HugetlbPool::ReserveCommand(uint64_t pages) const {
  return absl::StrCat("echo ", pages, " > ", sysfs_dir, "/nr_hugepages");
}

std::optional<HugetlbPool> ReadHugetlbPool(uint64_t page_size) {
  const fs::path dir = fs::path(kPoolsDir) / absl::StrCat("hugepages-", page_size >> 10, "kB");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return ReadPoolDirectory(dir, page_size);
}

std::vector<HugetlbPool> ReadHugetlbPools() {
  std::vector<HugetlbPool> pools;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(kPoolsDir, ec)) {
    const std::string name = entry.path().filename();  // hugepages-2048kB
    uint64_t kb = 0;
    if (!name.starts_with("hugepages-") || !name.ends_with("kB")) continue;
    if (!absl::SimpleAtoi(name.substr(10, name.size() - 12), &kb)) continue;
    pools.push_back(ReadPoolDirectory(entry.path(), kb << 10));
  }
  std::sort(pools.begin(), pools.end(), [](const auto& a, const auto& b) { return a.page_size < b.page_size; });
  return pools;
}

std::optional<HugetlbfsFacts> ReadHugetlbfsFacts(const std::string& path) {
  std::error_code ec;
  fs::path where = fs::exists(path, ec) ? fs::path(path) : fs::path(path).parent_path();
  if (where.empty()) where = ".";
  struct statfs vfs {};
  if (statfs(where.c_str(), &vfs) != 0 || static_cast<uint64_t>(vfs.f_type) != HUGETLBFS_MAGIC) return std::nullopt;
  HugetlbfsFacts facts;
  facts.page_size = static_cast<uint64_t>(vfs.f_bsize);
  // hugetlbfs reports 0 blocks when the mount has no size= limit.
  if (vfs.f_blocks != 0) {
    facts.limit_pages = vfs.f_blocks;
    facts.mount_free_pages = vfs.f_bavail;
  }
  const fs::path real = fs::canonical(where, ec);
  if (auto mount = ReadMountFacts(ec ? where.string() : real.string()); mount.ok()) facts.mount_point = mount->mount_point;
  facts.pool = ReadHugetlbPool(facts.page_size);
  return facts;
}

}  // namespace faultbench
