#include "pmstore/format/redo_log.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/format/record.h"
#include "pmstore/persist/persist_site.h"

namespace pmstore::internal {
namespace {

const LogEntry* EntriesOf(const LogHeader* header) { return reinterpret_cast<const LogEntry*>(header + 1); }

// Whether everything the newest commit wrote in place reached the media:
// the objects it names, and the leaves whose headers it changes (their
// checksums cover the slots written in place). `older`, when not null, is
// the commit before it, whose applied words may not all be durable yet.
bool CommitDataIsDurable(const PoolView& pool, uint64_t heap, const LeafGeometry& geometry, const LogHeader* older,
                         const LogHeader* newest) {
  const char* base = pool.base;
  const uint64_t length = pool.length;
  // The leaves whose header the newest commit changes (a leaf it frees has
  // no words in it: Transaction::DropWritesInto), as replay would leave
  // them: media, then the older commit's words, then the newest's. Leaves
  // only the older commit touched are not checked: the newest commit may
  // have freed them, and the commit in progress reused the space.
  // Misaligned words are not header words (replay refuses them below); an
  // entry at leaf + 60 would otherwise overlay 4 bytes past the copy.
  auto is_header_word = [&](const LogEntry& e) {
    return (e.offset & kVerifyMask) == 0 && e.offset % 8 == 0 && e.offset >= heap &&
           (e.offset - heap) % kChunkSize >= kBitmapWords * 8;
  };
  std::map<uint64_t, LeafHeader> headers;
  for (uint64_t i = 0; i < newest->count; ++i) {
    const LogEntry& e = EntriesOf(newest)[i];
    if (!is_header_word(e)) continue;
    const uint64_t leaf = e.offset & ~(kUnitSize - 1);
    if (leaf > length - sizeof(LeafHeader)) return false;
    auto [it, added] = headers.try_emplace(leaf);
    if (added) std::memcpy(&it->second, base + leaf, sizeof(LeafHeader));
  }
  auto overlay = [&](const LogHeader* log) {
    for (uint64_t i = 0; i < log->count; ++i) {
      const LogEntry& e = EntriesOf(log)[i];
      if (!is_header_word(e)) continue;
      const uint64_t leaf = e.offset & ~(kUnitSize - 1);
      auto it = headers.find(leaf);
      if (it != headers.end()) std::memcpy(reinterpret_cast<char*>(&it->second) + (e.offset - leaf), &e.value, 8);
    }
  };
  if (older != nullptr) overlay(older);
  overlay(newest);
  for (const auto& [leaf, header] : headers) {
    if (CheckLeaf(base, length, heap, geometry, leaf, header) != LeafFault::kSound) return false;
  }
  for (uint64_t i = 0; i < newest->count; ++i) {
    const LogEntry& e = EntriesOf(newest)[i];
    const uint64_t offset = e.offset & ~kVerifyMask;
    if ((e.offset & kVerifyLeaf) != 0) {
      if (CheckLeaf(base, length, heap, geometry, offset) != LeafFault::kSound) return false;
      if (reinterpret_cast<const LeafHeader*>(base + offset)->checksum != e.value) return false;
    } else if ((e.offset & kVerifyRecord) != 0) {
      // The stored checksum must be the one named (stale bytes of an
      // object once freed there carry another) and match the contents.
      if (offset < heap || !RecordIsIntact(base, length, offset) || StoredChecksum(base + offset) != e.value) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

uint64_t LogChecksum(const LogHeader& header, const LogEntry* entries) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, &header.seq, 8);
  XXH3_64bits_update(&state, &header.count, 8);
  XXH3_64bits_update(&state, entries, header.count * sizeof(LogEntry));
  return XXH3_64bits_digest(&state);
}

RedoLog::Written RedoLog::Write(uint64_t seq, const std::vector<LogEntry>& entries, LogHeader* header) {
  *header = LogHeader{};
  header->seq = seq;
  header->count = entries.size();
  header->checksum = LogChecksum(*header, entries.data());
  char* slot = SlotOf(base_, seq);
  if (!entries.empty()) std::memcpy(slot + sizeof(LogHeader), entries.data(), entries.size() * sizeof(LogEntry));
  std::memcpy(slot, header, sizeof(LogHeader));
  return {slot, sizeof(LogHeader) + entries.size() * sizeof(LogEntry)};
}

RedoLog::Written RedoLog::WriteEmpty(uint64_t seq, LogHeader* header) { return Write(seq, {}, header); }

bool RedoLog::Holds(uint64_t seq, uint64_t checksum) const {
  LogHeader record;
  std::memcpy(&record, SlotOf(base_, seq), sizeof(record));
  return record.seq == seq && record.checksum == checksum;
}

absl::Status RedoLog::Replay(const PoolView& pool, uint64_t heap_offset, const LeafGeometry& geometry,
                             Persister& persister, uint64_t* next_seq, LogHeader* last, bool verify_only) {
  *last = LogHeader{};
  char* base = pool.base;
  const uint64_t length = pool.length;
  const LogHeader* valid[2] = {nullptr, nullptr};
  for (uint64_t slot = 0; slot < 2; ++slot) {
    const auto* header = reinterpret_cast<const LogHeader*>(SlotOf(base, slot));
    if (header->seq == 0 || header->seq % 2 != slot || header->count > kLogCapacity) continue;
    if (LogChecksum(*header, EntriesOf(header)) != header->checksum) continue;
    valid[slot] = header;
  }
  const LogHeader* newest = valid[0];
  const LogHeader* older = valid[1];
  if (newest == nullptr || (older != nullptr && older->seq > newest->seq)) std::swap(newest, older);
  if (older != nullptr && older->seq + 1 != newest->seq) older = nullptr;
  if (newest == nullptr) {
    *next_seq = 1;
    return absl::OkStatus();
  }
  // The newest commit counts only if its data reached the media; else it
  // was never acknowledged and the one before it is the last commit.
  if (!CommitDataIsDurable(pool, heap_offset, geometry, older, newest)) {
    *next_seq = newest->seq;
    newest = older;
    older = nullptr;
    if (newest == nullptr) return absl::OkStatus();
  } else {
    *next_seq = newest->seq + 1;
  }
  *last = *newest;
  // Two consecutive commits are replayed oldest first: the older one's
  // writes may not all be durable yet (FORMAT.md, "Commit protocol").
  for (const LogHeader* header : {older, newest}) {
    if (header == nullptr) continue;
    const LogEntry* entries = EntriesOf(header);
    for (uint64_t i = 0; i < header->count; ++i) {
      const uint64_t offset = entries[i].offset;
      if ((offset & kVerifyMask) != 0) continue;
      if (IsLoggableWord(offset, length)) continue;
      if (offset % 8 == 0 && offset >= kChunkTableOffset && offset < (uint64_t{1} << 50)) {
        return absl::DataLossError(absl::StrCat(pool.path, ": truncated file: redo log commit ", header->seq,
                                                " writes at offset ", offset, ", past the ", length,
                                                " bytes the file holds in whole chunks"));
      }
      return absl::DataLossError(absl::StrCat(pool.path, ": redo log commit ", header->seq,
                                              " writes outside the pool's metadata (offset ", offset, ")"));
    }
    if (verify_only) continue;
    for (uint64_t i = 0; i < header->count; ++i) {
      if ((entries[i].offset & kVerifyMask) != 0) continue;
      std::memcpy(base + entries[i].offset, &entries[i].value, 8);
      PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kReplayFlush, persister.Flush(base + entries[i].offset, 8)));
    }
  }
  if (verify_only) return VerifyReplayed(pool, older, newest);
  return PMSTORE_PERSIST(kReplayDrain, persister.Drain());
}

absl::Status RedoLog::VerifyReplayed(const PoolView& pool, const LogHeader* older, const LogHeader* newest) {
  // What replay would leave: the newest commit's words, and the older
  // one's where the newest did not write.
  std::vector<uint64_t> newest_words;
  for (uint64_t i = 0; i < newest->count; ++i) newest_words.push_back(EntriesOf(newest)[i].offset);
  std::sort(newest_words.begin(), newest_words.end());
  for (const LogHeader* header : {older, newest}) {
    if (header == nullptr) continue;
    const LogEntry* entries = EntriesOf(header);
    for (uint64_t i = 0; i < header->count; ++i) {
      const LogEntry& e = entries[i];
      if ((e.offset & kVerifyMask) != 0) continue;
      if (header == older && std::binary_search(newest_words.begin(), newest_words.end(), e.offset)) continue;
      if (std::memcmp(pool.base + e.offset, &e.value, 8) == 0) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          pool.path, ": commit ", header->seq, " was cut short by a crash or a kill and is still to be recovered, "
          "which an open that may not write the pool cannot do; open the pool for writing once"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pmstore::internal
