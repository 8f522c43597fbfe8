#include "pmstore/src/format.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace pmstore::internal {

uint64_t Checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

uint64_t SuperblockChecksum(const Superblock& sb) { return Checksum(&sb, offsetof(Superblock, checksum)); }

uint64_t RootChecksum(const Root& root) { return Checksum(&root, offsetof(Root, checksum)); }

uint64_t SeparatorImageHeaderChecksum(const SeparatorImageHeader& header) {
  return Checksum(&header, offsetof(SeparatorImageHeader, checksum));
}

uint64_t KeyHash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

uint64_t LeafChecksum(const LeafHeader& header, const Leaf& leaf) {
  // next, count, perm[0..count), then the slots and fingerprints in key order.
  const LeafSlot* slots = leaf.slots;
  unsigned char buffer[8 + 1 + kLeafSlots + kLeafSlots * (sizeof(LeafSlot) + 1)];
  size_t n = 0;
  std::memcpy(buffer, &header.next, 8);
  n += 8;
  const uint8_t count = header.count > kLeafSlots ? kLeafSlots : header.count;
  buffer[n++] = header.count;
  std::memcpy(buffer + n, header.perm, count);
  n += count;
  for (uint8_t i = 0; i < count; ++i) {
    const uint8_t slot = header.perm[i] < kLeafSlots ? header.perm[i] : 0;
    std::memcpy(buffer + n, &slots[slot], sizeof(LeafSlot));
    n += sizeof(LeafSlot);
    buffer[n++] = leaf.fingerprints[slot];
  }
  return Checksum(buffer, n);
}

uint64_t LogChecksum(const LogHeader& header, const LogEntry* entries) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, &header.seq, 8);
  XXH3_64bits_update(&state, &header.count, 8);
  XXH3_64bits_update(&state, entries, header.count * sizeof(LogEntry));
  return XXH3_64bits_digest(&state);
}

char* PutEmptyRecord(char* base, uint64_t seq, LogHeader* record) {
  *record = LogHeader{};
  record->seq = seq;
  record->checksum = LogChecksum(*record, nullptr);
  char* slot = base + kLogOffset + (seq % 2) * kLogSlotSize;
  std::memcpy(slot, record, sizeof(*record));
  return slot;
}

uint64_t UndoHeaderChecksum(const UndoHeader& header) { return Checksum(&header, offsetof(UndoHeader, checksum)); }

uint64_t UndoEntryChecksum(uint64_t run_id, uint64_t index, const UndoEntry& entry) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, &run_id, 8);
  XXH3_64bits_update(&state, &index, 8);
  XXH3_64bits_update(&state, &entry.offset, 8);
  XXH3_64bits_update(&state, entry.line, sizeof(entry.line));
  return XXH3_64bits_digest(&state);
}

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

}  // namespace pmstore::internal
