// A follower's reads of the index: a read-only open beside a writer of
// another process (leaf_index.h, "a follower's reads").
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/index/leaf_index.h"
#include "pmstore/index/separator_change.h"

namespace pmstore::internal {
namespace {

// A writer applies a commit in microseconds; a leaf busy for longer than
// this was left mid-commit by a writer that died.
constexpr auto kStuckAfter = std::chrono::seconds(1);
// Copies tried at once before a busy leaf is waited for with a yield.
constexpr int kSpins = 64;

}  // namespace

template <typename Read>
LeafIndex::Copied LeafIndex::ReadStable(uint64_t offset, const Following& following, const Read& read) const {
  const auto applying = [&] { return following.ring->applying(); };
  std::chrono::steady_clock::time_point give_up;
  std::optional<uint64_t> version;
  for (int tries = 0; !(version = ReadStableLeaf(base_, offset, applying, read)); ++tries) {
    if (tries < kSpins) continue;
    if (tries == kSpins) give_up = std::chrono::steady_clock::now() + kStuckAfter;
    if (std::chrono::steady_clock::now() > give_up) return Copied::kStuck;
    std::this_thread::yield();
  }
  // A version above the newest published commit is no commit's: the word
  // is memory, not state, and a crash or a rolled-back run of unsynced
  // writes can leave it ahead (a commit being applied reads as busy
  // above). The next commit that changes the leaf stores its own number.
  if (*version > following.seen && *version <= following.ring->published().value_or(0)) return Copied::kChanged;
  return Copied::kStable;
}

LeafIndex::Copied LeafIndex::CopyLeaf(uint64_t offset, const Following& following, Leaf* copy) const {
  if (!LeafInHeap(pool_->length(), heap_offset_, geometry_, offset)) return Copied::kDamaged;
  const Copied copied = ReadStable(offset, following, [&] { std::memcpy(copy, base_ + offset, sizeof(Leaf)); });
  if (copied != Copied::kStable) return copied;
  return CheckLeafSlots(copy->header, *copy) == LeafFault::kSound ? Copied::kStable : Copied::kDamaged;
}

absl::Status LeafIndex::FollowingFault(Copied copied, uint64_t offset, const Following& following) const {
  switch (copied) {
    case Copied::kStable:
      return absl::OkStatus();
    case Copied::kChanged:
      return absl::AbortedError(absl::StrCat(
          "the index leaf at offset ", offset, " changed after commit ", following.seen,
          ", which this snapshot or iterator reads: another process writes the pool, and a read-only open's snapshot "
          "reads only leaves unchanged since it began (begin it again)"));
    case Copied::kDamaged:
      return absl::DataLossError(
          absl::StrCat("index leaf at offset ", offset, " fails its check (pmstore check names the damage)"));
    case Copied::kStuck:
      return absl::UnavailableError(
          absl::StrCat("the index leaf at offset ", offset,
                       " has been mid-commit for over a second: the process writing the pool "
                       "died inside a commit (pmstore readers lists it); the next writable open recovers the pool"));
  }
  return absl::InternalError("unknown leaf copy outcome");
}

uint64_t LeafIndex::FindInPlace(const Leaf& leaf, std::string_view key, uint64_t hash) const {
  const int pos = Find(leaf.header, leaf, key, FingerprintOf(hash));
  const uint8_t slot = pos >= 0 ? leaf.header.perm[pos] : kLeafSlots;
  return slot < kLeafSlots ? leaf.slots[slot].record : 0;
}

uint64_t LeafIndex::LeafToLookUp(std::string_view key, uint64_t* hash) const {
  const uint64_t offset = separators_.Floor(key)->second;
  if (!LeafInHeap(pool_->length(), heap_offset_, geometry_, offset)) return 0;
  *hash = KeyHash(key);
  PrefetchForKey(offset, *hash);
  return offset;
}

uint64_t LeafIndex::LookupQuiet(std::string_view key) const {
  uint64_t hash;
  const uint64_t offset = LeafToLookUp(key, &hash);
  return offset == 0 ? kDamagedLeaf : FindInPlace(*LeafAt(offset), key, hash);
}

uint64_t LeafIndex::LookupFollowing(std::string_view key, const Following& following) const {
  uint64_t hash;
  const uint64_t offset = LeafToLookUp(key, &hash);
  if (offset == 0) return kDamagedLeaf;
  // Read in place, as the writer's own Lookup reads: the header, the
  // fingerprints, the slots they match and those slots' records, a few
  // lines where a copy of the leaf would be twenty. Nothing is checked
  // beyond what keeps the reads in bounds: the walk that joined the
  // writer checked every leaf, and the leaves the writer changed since are
  // what its own process trusts (a recovery's in-place writes read as
  // busy, format/leaf.h kApplyingEveryLeaf).
  uint64_t record = 0;
  const Copied read = ReadStable(offset, following, [&] { record = FindInPlace(*LeafAt(offset), key, hash); });
  switch (read) {
    case Copied::kStable:
      return record;
    case Copied::kChanged:
      return kLeafChanged;
    case Copied::kDamaged:
      return kDamagedLeaf;
    case Copied::kStuck:
      return kLeafStuck;
  }
  return kDamagedLeaf;
}

absl::Status LeafIndex::ScanFromFollowing(std::string_view target, const Following& following,
                                          const std::function<bool(uint64_t record)>& visit) const {
  uint64_t offset = separators_.Floor(target)->second;
  Leaf copy;
  PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(offset, following, &copy), offset, following));
  bool found = false;
  int pos = Search(copy.header, copy.slots, target, &found);
  // The copies' own links: each leaf is as commit `seen` left it, so its
  // link is too (the map may be at a later commit).
  for (;;) {
    for (; pos < copy.header.count; ++pos) {
      if (!visit(copy.slots[copy.header.perm[pos]].record)) return absl::OkStatus();
    }
    offset = copy.header.next;
    if (offset == 0) return absl::OkStatus();
    PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(offset, following, &copy), offset, following));
    pos = 0;
  }
}

absl::Status LeafIndex::ScanBackFromFollowing(std::string_view target, bool inclusive, bool from_end,
                                              const Following& following,
                                              const std::function<bool(uint64_t record)>& visit) const {
  auto it = from_end ? std::prev(separators_.end()) : separators_.Floor(target);
  uint64_t offset = it->second;
  Leaf copy;
  PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(offset, following, &copy), offset, following));
  int pos = copy.header.count;
  if (!from_end) {
    bool found = false;
    pos = Search(copy.header, copy.slots, target, &found);
    if (found && inclusive) ++pos;
  }
  for (;;) {
    for (; pos > 0; --pos) {
      if (!visit(copy.slots[copy.header.perm[pos - 1]].record)) return absl::OkStatus();
    }
    if (it == separators_.begin()) return absl::OkStatus();
    // The map's entry before, which may be at a later commit than `seen`:
    // a leaf unchanged since `seen` that still links to the one just read
    // was the leaf before it then too.
    const uint64_t after = offset;
    offset = (--it)->second;
    PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(offset, following, &copy), offset, following));
    if (copy.header.next != after) return FollowingFault(Copied::kChanged, offset, following);
    pos = copy.header.count;
  }
}

absl::Status LeafIndex::LoadFollowing(uint64_t head, uint64_t length, const ChangeRing& ring) {
  Forget();
  const Following any_commit{&ring, UINT64_MAX};
  const uint64_t max_leaves = length / geometry_.bytes();
  uint64_t offset = head;
  Leaf copy;
  for (uint64_t n = 0; offset != 0; ++n) {
    if (n > max_leaves) return absl::AbortedError("the walk of the index leaves met a cycle");
    const Copied copied = CopyLeaf(offset, any_commit, &copy);
    // A leaf that fails its check as the writer changes the pool may be
    // one a recovery is rewriting: the caller walks again.
    if (copied == Copied::kDamaged) {
      return absl::AbortedError(absl::StrCat("index leaf at offset ", offset, " failed its check during the walk"));
    }
    PMSTORE_RETURN_IF_ERROR(FollowingFault(copied, offset, any_commit));
    if (n == 0) {
      separators_.Set("", offset);
    } else if (copy.header.count > 0) {
      RecordView record;
      if (!ReadRecord(base_, length, copy.slots[copy.header.perm[0]].record, &record)) {
        return absl::AbortedError(absl::StrCat("damaged record referenced by index leaf at offset ", offset));
      }
      separators_.Set(record.key, offset);
    }
    offset = copy.header.next;
  }
  return absl::OkStatus();
}

absl::Status LeafIndex::ApplySeparatorChanges(const std::vector<ChangeRing::Change>& changes, bool after_walk) {
  for (const ChangeRing::Change& change : changes) {
    if (change.kind != kSeparatorChangeKind) continue;
    PMSTORE_RETURN_IF_ERROR(after_walk ? ForceSeparatorChange(change.payload, &separators_)
                                       : ApplySeparatorChange(change.payload, &separators_));
  }
  return absl::OkStatus();
}

}  // namespace pmstore::internal
