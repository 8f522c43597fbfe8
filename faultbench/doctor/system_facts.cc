#include "faultbench/doctor/system_facts.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"

namespace faultbench::doctor {
namespace {

using pmstore::base::kHugePageSize;

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// mountinfo escapes blanks and backslashes in paths as octal ("\040").
std::string Unescape(const std::string& field) {
  const auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) && octal(field[i + 2]) &&
        octal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

std::string OptionValue(const std::string& options, const std::string& key) {
  for (absl::string_view option : absl::StrSplit(options, ',')) {
    if (option == key) return "always";  // bare "dax" means dax=always
    if (absl::StartsWith(option, key + "=")) return std::string(option.substr(key.size() + 1));
  }
  return "";
}

}  // namespace

std::optional<MountFacts> ParseMountInfoLine(const std::string& line) {
  // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
  std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  size_t sep = 0;
  while (sep < fields.size() && fields[sep] != "-") ++sep;
  if (sep < 6 || sep + 3 > fields.size()) return std::nullopt;
  MountFacts facts;
  facts.mount_point = Unescape(fields[4]);
  facts.fs_type = fields[sep + 1];
  facts.source = Unescape(fields[sep + 2]);
  // Per-mount options first, then the super block's, each named once.
  std::vector<std::string> options;
  for (const std::string& list : {fields[5], fields[sep + 3]}) {
    for (absl::string_view option : absl::StrSplit(list, ',')) {
      if (std::find(options.begin(), options.end(), option) == options.end()) options.emplace_back(option);
    }
  }
  facts.options = absl::StrJoin(options, ",");
  facts.dax_option = OptionValue(facts.options, "dax");
  if (facts.fs_type == "tmpfs") facts.tmpfs_huge = OptionValue(facts.options, "huge");
  return facts;
}

absl::StatusOr<MountFacts> ReadMountFacts(const std::string& real_path) {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return pmstore::base::ErrnoStatus(errno, "open", "/proc/self/mountinfo");
  std::optional<MountFacts> best;
  std::string line;
  while (std::getline(in, line)) {
    std::optional<MountFacts> facts = ParseMountInfoLine(line);
    if (!facts) continue;
    const std::string& mp = facts->mount_point;
    const bool covers = mp == "/" || real_path == mp || absl::StartsWith(real_path, mp + "/");
    // Later lines of the same mount point are mounts on top: they win.
    if (covers && (!best || mp.size() >= best->mount_point.size())) best = facts;
  }
  if (!best) return absl::NotFoundError(absl::StrCat("no mount found for ", real_path));
  return *best;
}

ExtentFacts ReadExtentFacts(int fd) {
  ExtentFacts facts;
  constexpr unsigned kBatch = 256;
  std::vector<char> buffer(sizeof(fiemap) + kBatch * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buffer.data());
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    facts.why_not = std::strerror(errno);
    return facts;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  facts.file_bytes = size / kHugePageSize * kHugePageSize;
  for (uint64_t start = 0; start < size;) {
    std::memset(buffer.data(), 0, buffer.size());
    map->fm_start = start;
    map->fm_length = size - start;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = kBatch;
    if (ioctl(fd, FS_IOC_FIEMAP, map) != 0) {
      facts.why_not = errno == EOPNOTSUPP ? "the file system does not support FIEMAP" : std::strerror(errno);
      return facts;
    }
    if (map->fm_mapped_extents == 0) break;
    bool last = false;
    for (unsigned i = 0; i < map->fm_mapped_extents; ++i) {
      const fiemap_extent& e = map->fm_extents[i];
      ++facts.extents;
      if ((e.fe_physical - e.fe_logical) % kHugePageSize == 0) {
        // Count the whole 2 MiB chunks of the file this extent covers.
        const uint64_t first = pmstore::base::RoundUp(e.fe_logical, kHugePageSize);
        const uint64_t end = std::min<uint64_t>(e.fe_logical + e.fe_length, size) / kHugePageSize * kHugePageSize;
        if (end > first) facts.aligned_bytes += end - first;
      }
      start = e.fe_logical + e.fe_length;
      last = e.fe_flags & FIEMAP_EXTENT_LAST;
    }
    if (last) break;
  }
  facts.examined = true;
  return facts;
}

std::string SelectedChoice(const std::string& line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(open + 1, close - open - 1);
}

ThpFacts ReadThpFacts() {
  const std::string dir = "/sys/kernel/mm/transparent_hugepage/";
  return ThpFacts{SelectedChoice(ReadLine(dir + "enabled")), SelectedChoice(ReadLine(dir + "shmem_enabled")),
                  SelectedChoice(ReadLine(dir + "defrag"))};
}

BlockFacts ReadBlockFacts(dev_t dev) {
  BlockFacts facts;
  facts.dev_id = absl::StrCat(major(dev), ":", minor(dev));
  std::error_code ec;
  const std::filesystem::path sys = "/sys/dev/block/" + facts.dev_id;
  const std::filesystem::path real = std::filesystem::canonical(sys, ec);
  if (ec) return facts;  // no block device: tmpfs, overlay, 9p, ...
  facts.device = real.filename();
  // A partition's device attributes live on its parent disk.
  std::filesystem::path disk = real;
  if (std::filesystem::exists(real / "partition")) disk = real.parent_path();
  int node = -1;
  if (absl::SimpleAtoi(ReadLine(disk / "device" / "numa_node"), &node)) facts.numa_node = node;
  facts.pmem = disk.filename().string().starts_with("pmem");
  if (facts.pmem) {
    uint64_t start = 0, size = 0;
    if (absl::SimpleHexAtoi(ReadLine(disk / "device" / "resource"), &start)) facts.pmem_start = start;
    if (absl::SimpleAtoi(ReadLine(disk / "device" / "size"), &size)) facts.pmem_size = size;
  }
  return facts;
}

std::string ReadPatMemtype(uint64_t start, uint64_t size) {
  // Lines look like "PAT: [mem 0x0000000040000000-0x0000000080000000] write-back".
  std::ifstream in("/sys/kernel/debug/x86/pat_memtype_list");
  std::string line, found;
  while (std::getline(in, line)) {
    unsigned long long lo = 0, hi = 0;
    char type[64] = {};
    if (std::sscanf(line.c_str(), "PAT: [mem 0x%llx-0x%llx] %63s", &lo, &hi, type) != 3) continue;
    if (lo < start + size && start < hi && found.find(type) == std::string::npos) {
      found = found.empty() ? type : absl::StrCat(found, ",", type);
    }
  }
  return found;
}

std::string KernelRelease() {
  utsname u{};
  uname(&u);
  return u.release;
}

bool KernelAtLeast(const std::string& release, int major_wanted, int minor_wanted) {
  int major_have = 0, minor_have = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major_have, &minor_have) != 2) return false;
  return major_have > major_wanted || (major_have == major_wanted && minor_have >= minor_wanted);
}

}  // namespace faultbench::doctor
