// A follower's reads of the index: a read-only open beside a writer of
// another process (leaf_index.h, "a follower's reads").
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/format/record.h"
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

LeafIndex::Copied LeafIndex::CopyLeaf(uint64_t offset, const Following& following, Leaf* copy,
                                      uint64_t* born_from) const {
  if (!LeafInHeap(pool_->length(), heap_offset_, geometry_, offset)) return Copied::kDamaged;
  Copied copied = ReadStable(offset, following, [&] { std::memcpy(copy, base_ + offset, sizeof(Leaf)); });
  if (copied == Copied::kChanged && following.images != nullptr) {
    uint64_t from = 0;
    switch (following.images->ImageAt(offset, following.seen, copy, &from)) {
      case LeafImageRing::Found::kImage: {
        // The image is the leaf before the first commit after `seen` that
        // the ring holds: one that changed it earlier may have gone
        // unrecorded (no pin seen), and then the image's own version,
        // that commit's, is above `seen`.
        uint64_t word;
        std::memcpy(&word, reinterpret_cast<const char*>(copy) + kLeafVersionOffset, sizeof(word));
        if (VersionCommit(word) > following.seen) return Copied::kChanged;
        copied = Copied::kFromImage;
        break;
      }
      case LeafImageRing::Found::kBorn:
        if (born_from != nullptr) *born_from = from;
        return Copied::kBorn;
      case LeafImageRing::Found::kNone:
      case LeafImageRing::Found::kUnknown:
        return Copied::kChanged;
    }
  }
  if (copied != Copied::kStable && copied != Copied::kFromImage) return copied;
  return CheckLeafSlots(copy->header, *copy) == LeafFault::kSound ? copied : Copied::kDamaged;
}

LeafIndex::Copied LeafIndex::StartAt(SeparatorMap::const_iterator it, const Following& following, Leaf* copy,
                                     uint64_t* offset) const {
  *offset = it->second;
  // The head may have moved since `seen` (the first leaf emptied or was
  // replaced): the map's first leaf then holds keys of leaves before it.
  if (it == separators_.begin() && following.images != nullptr) {
    uint64_t head = 0;
    switch (following.images->ImageAt(LeafImageRing::kChainHead, following.seen, nullptr, &head)) {
      case LeafImageRing::Found::kBorn:
        *offset = head;
        break;
      case LeafImageRing::Found::kNone:
        break;
      case LeafImageRing::Found::kImage:
      case LeafImageRing::Found::kUnknown:
        return Copied::kChanged;
    }
  }
  // A leaf born after `seen` took its keys from a leaf that was one then,
  // or was born after `seen` too: a split of a split.
  for (int hops = 0;; ++hops) {
    uint64_t from = 0;
    const Copied copied = CopyLeaf(*offset, following, copy, &from);
    if (copied != Copied::kBorn || from == 0 || hops == kMaxBornHops) return copied;
    *offset = from;
  }
}

absl::Status LeafIndex::FollowingFault(Copied copied, uint64_t offset, const Following& following) const {
  switch (copied) {
    case Copied::kStable:
    case Copied::kFromImage:
      return absl::OkStatus();
    case Copied::kBorn:
    case Copied::kChanged:
      return absl::AbortedError(absl::StrCat(
          "the index leaf at offset ", offset, " changed after commit ", following.seen,
          ", which this snapshot or iterator reads, and the pool's leaf image ring no longer holds it as it was: "
          "another process writes the pool faster than this snapshot reads it (begin it again)"));
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
    case Copied::kFromImage:  // not from an in-place read
    case Copied::kBorn:
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
  // The map may be at a later commit than `seen`: it leads to a leaf of
  // `seen` whose keys below `target` the scan passes over. From there the
  // copies' links lead through the chain as `seen` left it, and keys below
  // `target` may lie in the leaves after the first too (a separator moves
  // up when a leaf's least keys go).
  Leaf copy;
  uint64_t offset;
  const Copied started = StartAt(separators_.Floor(target), following, &copy, &offset);
  PMSTORE_RETURN_IF_ERROR(FollowingFault(started, offset, following));
  for (bool reached = false;;) {
    bool found = false;
    int pos = reached ? 0 : Search(copy.header, copy.slots, target, &found);
    reached = reached || pos < copy.header.count;
    for (; pos < copy.header.count; ++pos) {
      if (!visit(copy.slots[copy.header.perm[pos]].record)) return absl::OkStatus();
    }
    offset = copy.header.next;
    if (offset == 0) return absl::OkStatus();
    PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(offset, following, &copy), offset, following));
  }
}

absl::StatusOr<uint64_t> LeafIndex::LookupAtSnapshot(std::string_view key, const Following& following) const {
  uint64_t found = 0;
  bool damaged = false;
  PMSTORE_RETURN_IF_ERROR(ScanFromFollowing(key, following, [&](uint64_t record) {
    RecordView view;
    damaged = !ReadRecord(base_, pool_->length(), record, &view);
    if (!damaged && view.key == key) found = record;
    return false;
  }));
  return damaged ? kDamagedLeaf : found;
}

absl::Status LeafIndex::ScanBackFromFollowing(std::string_view target, bool inclusive, bool from_end,
                                              const Following& following,
                                              const std::function<bool(uint64_t record)>& visit) const {
  // The chain links forward only. Each step back starts at a leaf of
  // `seen` the map leads to (StartAt) and copies the leaves from there as
  // `seen` linked them, up to the one visited last; the first step goes
  // on past the map's leaf for `target` while the leaves hold keys the scan
  // visits (separators move up when least keys go). Each run of copies is
  // visited last leaf first.
  const auto holds_visited = [&](const Leaf& leaf) {
    if (leaf.header.count == 0) return false;
    if (from_end) return true;
    bool found = false;
    const int pos = Search(leaf.header, leaf.slots, target, &found);
    return pos > 0 || (found && inclusive);
  };
  auto it = from_end ? std::prev(separators_.end()) : separators_.Floor(target);
  std::vector<Leaf> run(1);
  uint64_t start;
  const Copied started = StartAt(it, following, &run[0], &start);
  PMSTORE_RETURN_IF_ERROR(FollowingFault(started, start, following));
  for (uint64_t next = run.back().header.next; next != 0; next = run.back().header.next) {
    Leaf leaf;
    PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(next, following, &leaf), next, following));
    if (!holds_visited(leaf)) break;
    run.push_back(leaf);
  }
  bool first_run = true;
  for (;;) {
    for (size_t i = run.size(); i-- > 0;) {
      const Leaf& leaf = run[i];
      int pos = leaf.header.count;
      if (first_run && !from_end && i + 1 == run.size()) {
        bool found = false;
        pos = Search(leaf.header, leaf.slots, target, &found);
        if (found && inclusive) ++pos;
      }
      for (; pos > 0; --pos) {
        if (!visit(leaf.slots[leaf.header.perm[pos - 1]].record)) return absl::OkStatus();
      }
    }
    first_run = false;
    if (it == separators_.begin()) return absl::OkStatus();
    // The leaves before `start` as `seen` linked them, from the map's
    // entry before (itself at a later commit than `seen`, perhaps).
    const uint64_t after = start;
    run.assign(1, Leaf());
    const Copied before = StartAt(--it, following, &run[0], &start);
    PMSTORE_RETURN_IF_ERROR(FollowingFault(before, start, following));
    if (start == after) {
      run.clear();
      continue;
    }
    while (run.back().header.next != after) {
      const uint64_t next = run.back().header.next;
      if (next == 0 || run.size() > kMaxBornHops) return FollowingFault(Copied::kChanged, start, following);
      Leaf leaf;
      PMSTORE_RETURN_IF_ERROR(FollowingFault(CopyLeaf(next, following, &leaf), next, following));
      run.push_back(leaf);
    }
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
