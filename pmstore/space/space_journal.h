// What one commit did to the space of the pool, as the writers of other
// processes must learn it (doc/FORMAT.md, "Writers in several
// processes"). Each writing process keeps its own view of the space
// (allocator.h) and its own quarantine; the pool's chunk table and
// bitmaps hold the truth of what is used, but not what is freed and still
// read by some pin. So a commit's writer hands the next writer, through
// the change ring, the chunk table words it changed, the units it took
// and every piece it freed; the next writer, holding the turn, applies
// them to its view (SpaceAllocator::FollowCommit) before it allocates.
//
// The views release in lockstep: a writer's release of its quarantine
// travels in the journal of its next commit, and every view releases
// through the same commit at the same place in the sequence of commits.
// So no view still holds, as freed, units that another writer has taken
// since: a hold released later than the taker's would then free them
// under the taker's live record.
//
// Payload of one part (little-endian, as the machine stores it): u64
// num_chunks after the commit; u64 released_through; u32 words, u32
// taken, u32 freed; then
// `words` u64 chunk numbers, `taken` pairs of u64 offset and u64 units,
// `freed` triples of u64 kind (Quarantine::Kind), u64 offset and u64
// count. A journal too large for one change of the ring is cut into
// parts, each of which stands alone. Depends on quarantine.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pmstore/space/quarantine.h"

namespace pmstore::internal {

struct SpaceJournal {
  struct Taken {
    uint64_t offset;
    uint64_t units;
  };
  // The heap's chunks after the commit (it may have grown the pool).
  uint64_t num_chunks = 0;
  // 1 + the newest commit through which the writer released its
  // quarantine since its last commit, before this commit's allocations
  // (0: none).
  uint64_t released_through = 0;
  // Chunks whose table word the commit changed: a small chunk claimed or
  // returned, a run taken or freed, pages taken or freed. The word itself
  // is read from the pool, which the commit has reached.
  std::vector<uint64_t> chunk_words;
  // Units of small chunks taken.
  std::vector<Taken> taken;
  // What the commit freed (Item::seq unset): quarantined by every writer
  // until the reader table lets it go.
  std::vector<Quarantine::Item> freed;

  // Forgets what the transaction changed (not the release before it).
  void ClearChanges() {
    chunk_words.clear();
    taken.clear();
    freed.clear();
  }
};

// `journal` as payloads of at most `max_bytes` each (at least one, even
// for an empty journal, which still carries num_chunks).
std::vector<std::string> EncodeSpaceJournal(const SpaceJournal& journal, size_t max_bytes);

// One part back. DataLoss when `payload` is not one EncodeSpaceJournal
// made (a region scribbled on).
absl::StatusOr<SpaceJournal> DecodeSpaceJournal(std::string_view payload);

}  // namespace pmstore::internal
