#include "faultbench/sysfacts/mount.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "pmstore/base/errno_status.h"

namespace faultbench {
namespace {

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

}  // namespace faultbench
