// The record codec: a key and its value (or, for a value of 1 MiB and
// more, where the value lies), written once and never changed.
//
//   u64 checksum      XXH3 over everything after this field (and over the large value)
//   u32 key_len       0 .. 65536
//   u32 flags         bit 0: large value
//   u64 value_len
//   [u64 value_off]   only when large: offset of the value (its run, or its first page)
//   key bytes
//   [value bytes]     only when not large
//
// Reading is bounds-checked against the pool's length, so a damaged record
// never sends a read outside the mapping.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "pmstore/format/layout.h"

namespace pmstore::internal {

inline constexpr uint32_t kRecordLargeValue = 1;
struct RecordHeader {
  uint64_t checksum;  // XXH3 of everything after this field, the large value included
  uint32_t key_len;
  uint32_t flags;
  uint64_t value_len;
};
static_assert(sizeof(RecordHeader) == 24);

inline bool IsLargeValue(uint64_t value_len) { return value_len >= kLargeValueThreshold; }

// Bytes of the record of a key and value of these lengths.
inline uint64_t RecordBytes(uint64_t key_len, uint64_t value_len) {
  return IsLargeValue(value_len) ? sizeof(RecordHeader) + 8 + key_len : sizeof(RecordHeader) + key_len + value_len;
}

// Of the record at `record` whose header is filled in (value at
// `large_value` when the record says it is large).
uint64_t RecordChecksum(const char* record, const char* large_value);

// The checksum a record stores (its first word).
inline uint64_t StoredChecksum(const char* record) {
  uint64_t stored;
  std::memcpy(&stored, record, 8);
  return stored;
}

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
  if (large != IsLargeValue(h.value_len)) return false;
  const uint64_t bytes = RecordBytes(h.key_len, h.value_len);
  if (bytes > kChunkSize || length - offset < bytes) return false;
  const char* p = base + offset + sizeof(RecordHeader);
  view->large = large;
  view->units = UnitsFor(bytes);
  if (large) {
    std::memcpy(&view->value_offset, p, 8);
    p += 8;
    if (view->value_offset % kValuePageSize != 0 || view->value_offset > length ||
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

// Whether the record at `offset` reads back and carries the checksum of
// its contents: what recovery asks of a record a commit names, a read
// with verify_checksums of the record it returns, and check of every record.
bool RecordIsIntact(const char* base, uint64_t length, uint64_t offset);

// Writes the record of `key` and a small `value` (below
// kLargeValueThreshold) at `at`, RecordBytes of them; returns its checksum.
uint64_t EncodeSmallRecord(char* at, std::string_view key, std::string_view value);

// Writes the record of `key` whose large `value` already lies at
// `value_offset` of the pool mapped at `base` (the checksum covers it) at
// `at`; returns its checksum.
uint64_t EncodeLargeRecord(char* at, std::string_view key, const char* base, uint64_t value_offset,
                           uint64_t value_len);

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

}  // namespace pmstore::internal
