// The redo log: two slots of 1 MiB after the root line; commit N's record
// lies in slot N % 2 (doc/FORMAT.md, "Commit protocol"). A record is a
// header {seq, count, checksum} and `count` entries: (offset, value) word
// writes to live metadata, applied after the record is durable, and
// verification entries (kVerifyRecord, kVerifyLeaf) that name an object
// the commit wrote in place, with the checksum it must carry.
//
// RedoLog owns the slots: where a commit's record goes, writing it (the
// caller flushes and fences), the empty record that retires an unsynced
// run's base, and recovery's replay of the last one or two commits.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/persist/persister.h"

namespace pmstore::internal {

struct LogHeader {
  uint64_t seq;
  uint64_t count;
  uint64_t checksum;  // XXH3 of seq, count and the entries
  uint64_t reserved[5];
};
struct LogEntry {
  uint64_t offset;
  uint64_t value;
};
inline constexpr uint64_t kLogCapacity = (kLogSlotSize - sizeof(LogHeader)) / sizeof(LogEntry);
// Log entries whose offset carries one of these bits are not writes: they
// name an object the commit wrote in place (a record, a new leaf), which
// recovery verifies by its checksum before it trusts the newest commit.
inline constexpr uint64_t kVerifyRecord = 1ull << 63;
inline constexpr uint64_t kVerifyLeaf = 1ull << 62;
inline constexpr uint64_t kVerifyMask = kVerifyRecord | kVerifyLeaf;

uint64_t LogChecksum(const LogHeader& header, const LogEntry* entries);

// Whether a logged word at `offset` may be replayed into a pool of
// `length` bytes: 8-aligned, in the root line or the chunk table and heap.
inline bool IsLoggableWord(uint64_t offset, uint64_t length) {
  const bool in_root = offset >= kRootOffset && offset < kRootOffset + sizeof(Root);
  const bool in_tables = offset >= kChunkTableOffset && offset < length - 8;
  return offset % 8 == 0 && (in_root || in_tables);
}

class RedoLog {
 public:
  explicit RedoLog(char* base) : base_(base) {}

  // Bytes written at the slot: what a caller flushes.
  struct Written {
    char* at;
    uint64_t bytes;
  };
  // Writes commit `seq`'s record (`entries`, at most kLogCapacity) into
  // its slot; *header gets its header. Not durable until flushed and fenced.
  Written Write(uint64_t seq, const std::vector<LogEntry>& entries, LogHeader* header);
  // An empty record (no words) with sequence number `seq`, in its slot.
  Written WriteEmpty(uint64_t seq, LogHeader* header);
  // Whether slot seq % 2 holds the record `seq` with `checksum`.
  bool Holds(uint64_t seq, uint64_t checksum) const;

  // At open: finds the last commit (the newer of the two slots, when
  // everything it wrote in place reached the media; else the older),
  // replays its words, preceded by the commit before it when that one is
  // still in its slot, and makes them durable. *next_seq: the next
  // commit's number; *last: the last commit's header (seq 0: none).
  // DataLoss when a record that passes its checksum writes outside the
  // pool's metadata; a persister failure as is. With `verify_only` (a pool
  // mapped without write permission) nothing is written: FailedPrecondition
  // when replay would change a word.
  static absl::Status Replay(const PoolView& pool, uint64_t heap_offset, const LeafGeometry& geometry,
                             Persister& persister, uint64_t* next_seq, LogHeader* last, bool verify_only = false);

  static char* SlotOf(char* base, uint64_t seq) { return base + kLogOffset + (seq % 2) * kLogSlotSize; }

 private:
  // Replay's check when it may not write: FailedPrecondition when a word
  // of `older` (where `newest` does not write it too) or of `newest`
  // differs from the pool's.
  static absl::Status VerifyReplayed(const PoolView& pool, const LogHeader* older, const LogHeader* newest);

  char* base_;
};

}  // namespace pmstore::internal
