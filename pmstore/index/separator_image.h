// The separator image (format.h, doc/FORMAT.md "Separator image"): the
// separator map of one commit laid out in the pool, written by a clean
// close and searched in place after the next open, so that open does not
// walk the leaf chain. The first write builds the map from it again.
//
// Owns nothing: a view of mapped bytes, valid while the mapping is and
// while no commit frees the image (the store drops the view first).
// Depends on format.h and separator_map.h. Const methods are safe from
// any number of readers at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "pmstore/format/image_layout.h"
#include "pmstore/index/separator_map.h"

namespace pmstore::internal {

class SeparatorImage {
 public:
  // What the image must describe to be used: the last commit, and the
  // root it left.
  struct Expect {
    uint64_t seq;
    uint64_t head_leaf;
    uint64_t key_count;
  };

  // Bytes the image of `map` takes.
  static uint64_t BytesFor(const SeparatorMap& map);
  // Lays out the image of `map` at `dest` (BytesFor(map) bytes), naming
  // the commit and root of `describes`.
  static void Write(const SeparatorMap& map, const Expect& describes, char* dest);
  // The image at `offset` of the pool mapped at `base` (`length` bytes).
  // DataLoss when it is damaged (out of bounds, a checksum fails);
  // FailedPrecondition when it is intact but describes another commit or
  // root (stale). The message says which.
  static absl::StatusOr<SeparatorImage> Open(const char* base, uint64_t length, uint64_t offset, const Expect& expect);

  SeparatorImage() = default;
  bool empty() const { return count_ == 0; }
  uint64_t count() const { return count_; }
  uint64_t bytes() const { return header_ == nullptr ? 0 : header_->bytes; }
  // The entry of the greatest separator <= key (the first is ""), and
  // entry i's leaf.
  uint64_t FloorIndex(std::string_view key) const;
  uint64_t LeafAt(uint64_t i) const { return entries_[i].leaf; }
  // visit(separator, leaf) for each entry, in key order.
  void ForEach(const std::function<void(std::string_view separator, uint64_t leaf)>& visit) const;

 private:
  const SeparatorImageFence* fences() const {
    return reinterpret_cast<const SeparatorImageFence*>(entries_ + count_);
  }
  static uint64_t FenceCount(uint64_t entries) { return (entries + kImageFenceStride - 1) / kImageFenceStride; }

  const SeparatorImageHeader* header_ = nullptr;
  const SeparatorImageEntry* entries_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace pmstore::internal
