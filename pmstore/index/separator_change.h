// A change to the separator map, as the change ring carries it to the
// other processes that have the pool open (share/change_ring.h; doc/FORMAT.md
// "Many processes on one pool"). The leaves are in the pool, which every
// process maps; their separators are in each process's memory, and a
// separator cannot be read back from a leaf that left the chain. So a
// commit that split leaves or took some out of the chain publishes one
// change for each separator of the writer's map it touched: the leaf the
// separator named before the commit, and the leaf it names after.
//
// Every process's map holds the same separators for the same pool: each
// leaf's least key, the first leaf's "" (LeafIndex keeps that rule through
// splits and deletes, and a walk of the chain builds it). So a change names
// its separator exactly, and the leaf it names before lets another process
// tell that its map did follow the writer's. A commit's changes name
// distinct separators, so they may be applied in any order.
//
// Payload: u64 leaf before (0: the separator was not in the map), u64 leaf
// after (0: it left the map), then the separator's bytes. Depends on
// separator_map.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pmstore/index/separator_map.h"

namespace pmstore::internal {

// The change ring's kind byte for a separator change. The ring's kinds
// are the store's: this is the first.
inline constexpr uint8_t kSeparatorChangeKind = 1;

// The kind a writable open publishes before its first commit: whatever
// its recovery changed in place is in no change, and a follower whose map
// a dead writer's commit left behind cannot tell, so every follower walks
// the chain again. No payload.
inline constexpr uint8_t kWalkAgainKind = 2;

std::string EncodeSeparatorChange(std::string_view separator, uint64_t before, uint64_t after);

// Applies one change to `map`. DataLoss, `map` unchanged, when `payload`
// is not a change EncodeSeparatorChange made; FailedPrecondition, `map`
// unchanged, when `map` does not map the separator to `before` (none when
// 0): it did not follow the writer's map, and is to be rebuilt from the
// pool.
absl::Status ApplySeparatorChange(std::string_view payload, SeparatorMap* map);

// The same without the check: the separator ends as the change leaves
// it, whatever `map` named. For the changes published while a follower
// walked the chain, some of which the walk saw and some not: applied in
// order, each separator they touch ends as the last of them leaves it,
// and the others are as the walk found them, which no change since
// altered. DataLoss as above.
absl::Status ForceSeparatorChange(std::string_view payload, SeparatorMap* map);

}  // namespace pmstore::internal
