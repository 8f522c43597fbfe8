#include "pmstore/index/separator_change.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace pmstore::internal {
namespace {

struct Leaves {
  uint64_t before;
  uint64_t after;
};

}  // namespace

std::string EncodeSeparatorChange(std::string_view separator, uint64_t before, uint64_t after) {
  const Leaves leaves{before, after};
  std::string payload(sizeof(leaves) + separator.size(), '\0');
  std::memcpy(payload.data(), &leaves, sizeof(leaves));
  std::memcpy(payload.data() + sizeof(leaves), separator.data(), separator.size());
  return payload;
}

namespace {

absl::Status Apply(std::string_view payload, SeparatorMap* map, bool check) {
  Leaves leaves;
  if (payload.size() < sizeof(leaves)) {
    return absl::DataLossError(absl::StrCat("a separator change of ", payload.size(),
                                            " bytes, too short to name two leaves (", sizeof(leaves), " bytes)"));
  }
  std::memcpy(&leaves, payload.data(), sizeof(leaves));
  const std::string_view separator = payload.substr(sizeof(leaves));
  const auto present = map->Find(separator);
  const uint64_t named = present == map->end() ? 0 : present->second;
  if (check && named != leaves.before) {
    return absl::FailedPreconditionError(
        absl::StrCat("the separator map maps \"", absl::CHexEscape(std::string(separator.substr(0, 64))), "\" to leaf ",
                     named, " (0: none), where the writer's mapped it to leaf ", leaves.before,
                     ": it did not follow the writer's; rebuild it"));
  }
  if (leaves.after != 0) {
    map->Set(separator, leaves.after);
  } else if (named != 0) {
    map->Erase(map->Floor(separator));  // Find's entry, as an iterator that can erase
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplySeparatorChange(std::string_view payload, SeparatorMap* map) { return Apply(payload, map, true); }

absl::Status ForceSeparatorChange(std::string_view payload, SeparatorMap* map) { return Apply(payload, map, false); }

}  // namespace pmstore::internal
