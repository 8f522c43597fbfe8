#include "pmstore/format/record.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace pmstore::internal {

uint64_t RecordChecksum(const char* record, const char* large_value) {
  RecordHeader h;
  std::memcpy(&h, record, sizeof(h));
  const bool large = (h.flags & kRecordLargeValue) != 0;
  const uint64_t body = 16 + (large ? 8 : 0) + h.key_len + (large ? 0 : h.value_len);
  if (!large) return Checksum(record + 8, body);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, record + 8, body);
  XXH3_64bits_update(&state, large_value, h.value_len);
  return XXH3_64bits_digest(&state);
}

bool RecordIsIntact(const char* base, uint64_t length, uint64_t offset) {
  RecordView view;
  if (!ReadRecord(base, length, offset, &view)) return false;
  return RecordChecksum(base + offset, view.large ? view.value.data() : nullptr) == StoredChecksum(base + offset);
}

uint64_t EncodeSmallRecord(char* at, std::string_view key, std::string_view value) {
  const RecordHeader header = {0, static_cast<uint32_t>(key.size()), 0, value.size()};
  std::memcpy(at, &header, sizeof(header));
  char* body = at + sizeof(header);
  if (!key.empty()) std::memcpy(body, key.data(), key.size());  // an empty view's data may be null
  if (!value.empty()) std::memcpy(body + key.size(), value.data(), value.size());
  const uint64_t checksum = RecordChecksum(at, nullptr);
  std::memcpy(at, &checksum, 8);
  return checksum;
}

uint64_t EncodeLargeRecord(char* at, std::string_view key, const char* base, uint64_t value_offset,
                           uint64_t value_len) {
  const RecordHeader header = {0, static_cast<uint32_t>(key.size()), kRecordLargeValue, value_len};
  std::memcpy(at, &header, sizeof(header));
  std::memcpy(at + sizeof(header), &value_offset, 8);
  if (!key.empty()) std::memcpy(at + sizeof(header) + 8, key.data(), key.size());
  const uint64_t checksum = RecordChecksum(at, base + value_offset);
  std::memcpy(at, &checksum, 8);
  return checksum;
}

}  // namespace pmstore::internal
