// Reading records in place: the key and value of the record at an offset,
// with the bounds checks that keep a damaged record from sending a read
// outside the mapping.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "pmstore/src/format.h"

namespace pmstore::internal {

struct RecordView {
  std::string_view key;
  std::string_view value;
  bool large = false;
  uint64_t units = 0;          // units of the record itself
  uint64_t value_offset = 0;   // of a large value
};

// False when the record at `offset` would reach past `length` bytes of
// the pool or is implausible.
inline bool ReadRecord(const char* base, uint64_t length, uint64_t offset, RecordView* view) {
  if (offset % kUnitSize != 0 || offset > length || length - offset < sizeof(RecordHeader)) return false;
  RecordHeader h;
  std::memcpy(&h, base + offset, sizeof(h));
  const bool large = (h.flags & kRecordLargeValue) != 0;
  if (h.key_len > 64 * 1024 || (h.flags & ~kRecordLargeValue) != 0) return false;
  if (large != (h.value_len >= kLargeValueThreshold)) return false;
  const uint64_t bytes = RecordBytes(h.key_len, h.value_len);
  if (bytes > kChunkSize || length - offset < bytes) return false;
  const char* p = base + offset + sizeof(RecordHeader);
  view->large = large;
  view->units = UnitsFor(bytes);
  if (large) {
    std::memcpy(&view->value_offset, p, 8);
    p += 8;
    if (view->value_offset % kChunkSize != 0 || view->value_offset > length ||
        length - view->value_offset < h.value_len) {
      return false;
    }
    view->value = std::string_view(base + view->value_offset, h.value_len);
  } else {
    view->value = std::string_view(p + h.key_len, h.value_len);
  }
  view->key = std::string_view(p, h.key_len);
  return true;
}

// Key of a record that recovery already vouched for (no bounds checks).
inline std::string_view RecordKey(const char* base, uint64_t offset) {
  RecordHeader h;
  std::memcpy(&h, base + offset, sizeof(h));
  const char* p = base + offset + sizeof(RecordHeader) + ((h.flags & kRecordLargeValue) ? 8 : 0);
  return std::string_view(p, h.key_len);
}

// Bytewise order of `key` (with prefixes `prefix`, `prefix2`) against a
// slot's key.
inline int CompareToSlot(const char* base, std::string_view key, uint64_t prefix, uint64_t prefix2,
                         const LeafSlot& slot) {
  if (prefix != slot.prefix) return prefix < slot.prefix ? -1 : 1;
  if (prefix2 != slot.prefix2) return prefix2 < slot.prefix2 ? -1 : 1;
  const std::string_view other = RecordKey(base, slot.record);
  const int c = key.compare(other);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace pmstore::internal
