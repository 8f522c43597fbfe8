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
    if (view->value_offset % kPageSize != 0 || view->value_offset > length ||
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

// Writes the record of `key` and a small `value` (below
// kLargeValueThreshold) at `at`, RecordBytes of them; returns its checksum.
inline uint64_t EncodeSmallRecord(char* at, std::string_view key, std::string_view value) {
  const RecordHeader header = {0, static_cast<uint32_t>(key.size()), 0, value.size()};
  std::memcpy(at, &header, sizeof(header));
  char* body = at + sizeof(header);
  if (!key.empty()) std::memcpy(body, key.data(), key.size());  // an empty view's data may be null
  if (!value.empty()) std::memcpy(body + key.size(), value.data(), value.size());
  const uint64_t checksum = RecordChecksum(at, nullptr);
  std::memcpy(at, &checksum, 8);
  return checksum;
}

// Key of the record a leaf slot names. The leaf's checksum vouches for
// the slot, but a pool written by a hostile or buggy writer can carry a
// valid checksum over a slot that points anywhere: the key is clamped to
// the `length` bytes of the pool (empty when the header itself is out of
// bounds), so a lookup through such a slot misses instead of reading past
// the mapping. Open reads no record per slot to rule this out.
inline std::string_view RecordKey(const char* base, uint64_t length, uint64_t offset) {
  if (offset > length || length - offset < sizeof(RecordHeader) + 8) return {};
  RecordHeader h;
  std::memcpy(&h, base + offset, sizeof(h));
  const uint64_t start = offset + sizeof(RecordHeader) + ((h.flags & kRecordLargeValue) ? 8 : 0);
  const uint64_t key_len = h.key_len < length - start ? h.key_len : length - start;
  return std::string_view(base + start, key_len);
}

// Bytewise order of `key` (with prefixes `prefix`, `prefix2`) against a
// slot's key.
inline int CompareToSlot(const char* base, uint64_t length, std::string_view key, uint64_t prefix,
                         uint64_t prefix2, const LeafSlot& slot) {
  if (prefix != slot.prefix) return prefix < slot.prefix ? -1 : 1;
  if (prefix2 != slot.prefix2) return prefix2 < slot.prefix2 ? -1 : 1;
  const std::string_view other = RecordKey(base, length, slot.record);
  const int c = key.compare(other);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace pmstore::internal
