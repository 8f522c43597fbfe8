#include "pmstore/index/leaf_index.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/format/record.h"

namespace pmstore::internal {
namespace {

// Bit i set where byte i of the 64 at `bytes` equals `value`.
#if defined(__SSE2__)
uint64_t MatchBytes64(const void* bytes, uint8_t value) {
  const __m128i needle = _mm_set1_epi8(static_cast<char>(value));
  const auto* p = static_cast<const __m128i*>(bytes);
  uint64_t mask = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i eq = _mm_cmpeq_epi8(_mm_loadu_si128(p + i), needle);
    mask |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (16 * i);
  }
  return mask;
}
#else
uint64_t MatchBytes64(const void* bytes, uint8_t value) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  uint64_t mask = 0;
  for (int i = 0; i < 64; ++i) mask |= static_cast<uint64_t>(p[i] == value) << i;
  return mask;
}
#endif

}  // namespace

void LeafIndex::UseImage(const SeparatorImage& image) {
  separators_.Clear();
  unchecked_.clear();
  edits_.clear();
  image_ = image;
  checked_ = std::make_unique<std::atomic<uint8_t>[]>(image.count());
}

bool LeafIndex::Checked(uint64_t i, uint64_t offset, uint64_t next) const {
  uint8_t state = checked_[i].load(std::memory_order_relaxed);
  if (state == 0) {
    const bool sound = CheckLeaf(base_, pool_->length(), heap_offset_, geometry_, offset) == LeafFault::kSound &&
                       LeafAt(offset)->header.next == next;
    state = sound ? 1 : 2;
    checked_[i].store(state, std::memory_order_relaxed);
  }
  return state == 1;
}

uint64_t LeafIndex::CheckedImageLeaf(uint64_t i) const {
  const uint64_t offset = image_.LeafAt(i);
  return Checked(i, offset, i + 1 < image_.count() ? image_.LeafAt(i + 1) : 0) ? offset : 0;
}

uint64_t LeafIndex::CheckedLeaf(SeparatorMap::const_iterator it) const {
  const uint64_t offset = it->second;
  if (unchecked_.empty()) return offset;
  const auto found = unchecked_.find(offset);
  if (found == unchecked_.end()) return offset;
  // The map's next entry is the committed chain's next leaf: a write that
  // changes which leaf follows this one changes this leaf's header, and
  // checks it first.
  const auto next = std::next(it);
  return Checked(found->second, offset, next == separators_.end() ? 0 : next->second) ? offset : 0;
}

absl::Status LeafIndex::CheckBeforeChange(SeparatorMap::const_iterator it) const {
  if (CheckedLeaf(it) != 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("checksum failure in index leaf at offset ", it->second));
}

void LeafIndex::LeaveImage() {
  if (!on_image()) return;
  // The image's leaves are unchanged since open: each read checked its
  // leaf against the image's next entry, which the map's order repeats.
  unchecked_.clear();
  for (uint64_t i = 0; i < image_.count(); ++i) {
    if (checked_[i].load(std::memory_order_relaxed) != 1) unchecked_.emplace(image_.LeafAt(i), i);
  }
  image_.ForEach([this](std::string_view separator, uint64_t leaf) { separators_.Set(separator, leaf); });
  image_ = SeparatorImage();
  if (unchecked_.empty()) checked_.reset();
}

void LeafIndex::SetSeparator(std::string_view separator, uint64_t leaf) {
  const auto present = separators_.Find(separator);
  edits_.push_back({std::string(separator), present == separators_.end() ? 0 : present->second});
  separators_.Set(separator, leaf);
}

void LeafIndex::RepointSeparator(SeparatorMap::iterator it, uint64_t leaf) {
  edits_.push_back({SeparatorMap::String(it->first), it->second});
  it->second = leaf;
}

SeparatorMap::iterator LeafIndex::EraseSeparator(SeparatorMap::iterator it) {
  edits_.push_back({SeparatorMap::String(it->first), it->second});
  return separators_.Erase(it);
}

void LeafIndex::ForEachChangedSeparator(
    const std::function<void(std::string_view separator, uint64_t before, uint64_t after)>& visit) const {
  absl::flat_hash_set<std::string_view> seen;
  for (const Edit& edit : edits_) {  // a separator's first edit holds its leaf before the transaction
    if (!seen.insert(edit.separator).second) continue;
    const auto now = separators_.Find(edit.separator);
    const uint64_t after = now == separators_.end() ? 0 : now->second;
    if (after != edit.leaf) visit(edit.separator, edit.leaf, after);  // else changed and changed back
  }
}

void LeafIndex::Abandoned() {
  for (auto edit = edits_.rbegin(); edit != edits_.rend(); ++edit) {
    if (edit->leaf != 0) {
      separators_.Set(edit->separator, edit->leaf);
    } else {
      separators_.Erase(separators_.Floor(edit->separator));  // the transaction added it
    }
  }
  edits_.clear();
  changed_headers_.clear();
  old_head_ = 0;
}

void LeafIndex::Forget() {
  separators_.Clear();
  image_ = SeparatorImage();
  checked_.reset();
  unchecked_.clear();
  edits_.clear();
  changed_headers_.clear();
  old_head_ = 0;
}

absl::Status LeafIndex::Load(uint64_t head, uint64_t length) {
  Forget();
  // The chain always has a first leaf: lookups start from it.
  if (head == 0) return absl::DataLossError("the root names no first index leaf (head leaf offset 0)");
  const uint64_t max_leaves = length / geometry_.bytes();
  uint64_t offset = head;
  std::string previous;
  for (uint64_t n = 0; offset != 0; ++n) {
    if (n > max_leaves) return absl::DataLossError("index leaves form a cycle");
    // A chain walk waits for each leaf in turn; the next one loads while
    // this one is checked (PrefetchLeaf passes over an offset outside the
    // pool). The link is copied out: this leaf is not yet known to be
    // aligned, and a misaligned Leaf* would be undefined behaviour.
    if (offset <= length - sizeof(LeafHeader)) {
      uint64_t next;
      std::memcpy(&next, base_ + offset + offsetof(LeafHeader, next), sizeof(next));
      if (next != 0) PrefetchLeaf(next);
    }
    const LeafFault fault = CheckLeaf(base_, length, heap_offset_, geometry_, offset);
    if (fault != LeafFault::kSound) return absl::DataLossError(LeafFaultMessage(fault, offset));
    const Leaf* leaf = LeafAt(offset);
    const LeafHeader& h = leaf->header;
    if (n == 0) {
      separators_.Set("", offset);
    } else if (h.count > 0) {
      RecordView record;
      if (!ReadRecord(base_, length, leaf->slots[h.perm[0]].record, &record)) {
        return absl::DataLossError(absl::StrCat("damaged record referenced by index leaf at offset ", offset));
      }
      if (record.key <= previous && separators_.size() > 1) {
        return absl::DataLossError(absl::StrCat("index leaf at offset ", offset, " is out of key order"));
      }
      previous.assign(record.key);  // keeps its buffer: no allocation per leaf
      separators_.Set(previous, offset);
    }
    offset = h.next;
  }
  return absl::OkStatus();
}

int LeafIndex::Search(const LeafHeader& header, const LeafSlot* slots, std::string_view key, bool* found) const {
  const uint64_t prefix = KeyPrefix(key);
  const uint64_t prefix2 = KeyPrefix(key, 8);
  int lo = 0;
  int hi = header.count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (CompareToSlot(base_, pool_->length(), key, prefix, prefix2, slots[header.perm[mid]]) > 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *found = lo < header.count &&
           CompareToSlot(base_, pool_->length(), key, prefix, prefix2, slots[header.perm[lo]]) == 0;
  return lo;
}

uint64_t LeafIndex::Candidates(const Leaf& leaf, uint8_t fingerprint) {
  static_assert(sizeof(leaf.fingerprints) == 64 && sizeof(LeafHeader) == 64);
  constexpr uint64_t kSlotBits = (1ull << kLeafSlots) - 1;
  return MatchBytes64(leaf.fingerprints, fingerprint) & kSlotBits;
}

int LeafIndex::NextNamed(const LeafHeader& header, const Leaf& leaf, const KeyPrefixes& key, uint64_t* candidates,
                         int* pos) {
  const uint64_t count = std::min<uint64_t>(header.count, kLeafSlots);
  const uint64_t perm_bits = ((1ull << count) - 1) << offsetof(LeafHeader, perm);
  for (; *candidates != 0; *candidates &= *candidates - 1) {
    const int slot = std::countr_zero(*candidates);
    if (leaf.slots[slot].prefix != key.prefix || leaf.slots[slot].prefix2 != key.prefix2) continue;
    // A slot is in use only while the header's permutation names it; a
    // free one may still hold a deleted entry.
    const uint64_t named = MatchBytes64(&header, static_cast<uint8_t>(slot)) & perm_bits;
    if (named == 0) continue;
    *candidates &= *candidates - 1;
    *pos = std::countr_zero(named) - static_cast<int>(offsetof(LeafHeader, perm));
    return slot;
  }
  return -1;
}

int LeafIndex::Find(const LeafHeader& header, const Leaf& leaf, std::string_view key, uint8_t fingerprint) const {
  // Usually one candidate slot, often none: the header is then scanned
  // once, for that slot, instead of walked entry by entry.
  uint64_t candidates = Candidates(leaf, fingerprint);
  if (candidates == 0) return -1;
  const KeyPrefixes prefixes(key);
  int pos = -1;
  for (int slot; (slot = NextNamed(header, leaf, prefixes, &candidates, &pos)) >= 0;) {
    // The record's next lines (a small value's bytes) load while its
    // first is read for the key comparison.
    const uint64_t record = leaf.slots[slot].record;
    PrefetchBytes(record + 64, kSmallRecordBytes - 64);
    if (RecordKey(base_, pool_->length(), record) == key) return pos;
  }
  return -1;
}

void LeafIndex::PrefetchForKey(uint64_t leaf, uint64_t hash) const {
  // The fingerprints tell which slot to read only once they arrive; with
  // the slots requested now, the slot's line is already on its way and a
  // lookup waits for two misses in the leaf no longer, but one. In a
  // version 2 leaf the slot is usually the home slot, and its record the
  // home cell: requested too, a hit there costs that one miss in all.
  if (!geometry_.cells()) return PrefetchLeaf(leaf);
  const int home = HomeSlot(hash);
  PrefetchBytes(leaf, offsetof(Leaf, slots));
  const uint64_t slot = SlotOffset(leaf, home);
  PrefetchBytes(slot, 2 * sizeof(LeafSlot));  // the home slot and the next (a key a slot or two past home)
  PrefetchBytes(slot + 2 * sizeof(LeafSlot) - 1, 1);
  PrefetchBytes(geometry_.CellOffset(leaf, home), geometry_.cell_bytes);
}

uint64_t LeafIndex::Lookup(std::string_view key) const {
  const uint64_t offset = FindLeaf(key);
  if (offset == 0) return kDamagedLeaf;
  const uint64_t hash = KeyHash(key);
  PrefetchForKey(offset, hash);
  const Leaf* leaf = LeafAt(offset);
  const int pos = Find(leaf->header, *leaf, key, FingerprintOf(hash));
  return pos >= 0 ? leaf->slots[leaf->header.perm[pos]].record : 0;
}

void LeafIndex::MultiLookup(const std::string_view* keys, size_t count, uint64_t* records) const {
  for (size_t first = 0; first < count; first += kMultiLookupChunk) {
    MultiLookupChunk(keys + first, std::min(kMultiLookupChunk, count - first), records + first);
  }
}

void LeafIndex::MultiLookupChunk(const std::string_view* keys, size_t count, uint64_t* records) const {
  // Each stage reads only what the previous one requested for every key
  // of the chunk, and requests what the next one reads: the misses of a
  // stage overlap across keys, where Lookup waits for each in turn.
  struct Pending {
    uint64_t leaf;
    uint64_t hash;        // the key's (KeyHash)
    uint64_t candidates;  // slots whose fingerprint matches, not yet tried
    int slot;             // the first candidate the header names, or -1
  };
  Pending pending[kMultiLookupChunk];
  // 0: the separator search, level by level across the chunk's keys
  // (separator_map.h FloorMany); an image is searched key by key.
  static_assert(kMultiLookupChunk <= SeparatorMap::kMaxBatch);
  SeparatorMap::const_iterator floors[kMultiLookupChunk];
  if (!on_image()) separators_.FloorMany(keys, count, floors);
  // 1: the leaf, its header and fingerprint lines (version 2: with the
  // home slot and cell, PrefetchForKey).
  for (size_t i = 0; i < count; ++i) {
    pending[i].leaf = on_image() ? CheckedImageLeaf(image_.FloorIndex(keys[i])) : CheckedLeaf(floors[i]);
    pending[i].hash = KeyHash(keys[i]);
    if (geometry_.cells() && pending[i].leaf != 0) {
      PrefetchForKey(pending[i].leaf, pending[i].hash);
    } else {
      PrefetchBytes(pending[i].leaf, offsetof(Leaf, slots));
    }
  }
  // 2: the fingerprints; the line of the first matching slot.
  for (size_t i = 0; i < count; ++i) {
    pending[i].slot = -1;
    pending[i].candidates = 0;
    if (pending[i].leaf == 0) continue;  // damaged (CheckedImageLeaf)
    const Leaf& leaf = *LeafAt(pending[i].leaf);
    pending[i].candidates = Candidates(leaf, FingerprintOf(pending[i].hash));
    if (pending[i].candidates == 0) continue;
    const uint64_t slot_offset =
        SlotOffset(pending[i].leaf, std::countr_zero(pending[i].candidates));
    PrefetchBytes(slot_offset, sizeof(LeafSlot));  // a slot may straddle two lines
    PrefetchBytes(slot_offset + sizeof(LeafSlot) - 1, 1);
  }
  // 3: the slot and the header's permutation; the record's lines.
  for (size_t i = 0; i < count; ++i) {
    records[i] = pending[i].leaf == 0 ? kDamagedLeaf : 0;
    if (pending[i].candidates == 0) continue;
    const Leaf& leaf = *LeafAt(pending[i].leaf);
    int pos;
    pending[i].slot = NextNamed(leaf.header, leaf, KeyPrefixes(keys[i]), &pending[i].candidates, &pos);
    if (pending[i].slot >= 0) PrefetchBytes(leaf.slots[pending[i].slot].record, kSmallRecordBytes);
  }
  // 4: the record's key. A fingerprint that matched another key (about
  // one lookup in 256 per entry of the leaf) goes on to the next
  // candidate, as Find does.
  for (size_t i = 0; i < count; ++i) {
    if (pending[i].leaf == 0) continue;
    const Leaf& leaf = *LeafAt(pending[i].leaf);
    const KeyPrefixes prefixes(keys[i]);
    int pos;
    int slot = pending[i].slot;
    while (slot >= 0 && RecordKey(base_, pool_->length(), leaf.slots[slot].record) != keys[i]) {
      slot = NextNamed(leaf.header, leaf, prefixes, &pending[i].candidates, &pos);
    }
    if (slot >= 0) records[i] = leaf.slots[slot].record;
  }
}

absl::Status LeafIndex::ScanFrom(std::string_view target,
                                const std::function<bool(uint64_t record)>& visit) const {
  const auto damaged = [] {
    return absl::DataLossError("checksum failure in an index leaf the scan reached (pmstore check names it)");
  };
  // Records lie where they were allocated, not in key order, so each visit
  // would wait for a miss: they are requested kScanAhead visits early, and
  // the next leaf when a leaf is entered.
  constexpr int kScanAhead = 8;
  uint64_t offset = FindLeaf(target);
  if (offset == 0) return damaged();
  // The search's probes then wait for about one miss, not one each.
  PrefetchLeaf(offset);
  // Through the image the next leaf is the next entry's, checked first;
  // while some leaves are unchecked, the map's next entry's, the same.
  uint64_t entry = on_image() ? image_.FloorIndex(target) : 0;
  auto it = on_image() ? separators_.end() : separators_.Floor(target);
  bool found = false;
  int pos = Search(LeafAt(offset)->header, LeafAt(offset)->slots, target, &found);
  for (;;) {
    const Leaf* leaf = LeafAt(offset);
    const LeafHeader& header = leaf->header;
    const auto record_at = [&](int i) { return leaf->slots[header.perm[i]].record; };
    if (header.next != 0) PrefetchLeaf(header.next);
    for (int i = pos; i < std::min<int>(pos + kScanAhead, header.count); ++i) {
      PrefetchBytes(record_at(i), kSmallRecordBytes);
    }
    for (; pos < header.count; ++pos) {
      if (pos + kScanAhead < header.count) PrefetchBytes(record_at(pos + kScanAhead), kSmallRecordBytes);
      if (!visit(record_at(pos))) return absl::OkStatus();
    }
    // The next leaf, or the end of the scan.
    if (on_image()) {
      if (++entry == image_.count()) return absl::OkStatus();
      offset = CheckedImageLeaf(entry);
    } else if (!unchecked_.empty()) {
      if (++it == separators_.end()) return absl::OkStatus();
      offset = CheckedLeaf(it);
    } else {
      offset = header.next;
      if (offset == 0) return absl::OkStatus();
    }
    if (offset == 0) return damaged();
    pos = 0;
  }
}

absl::Status LeafIndex::ScanBackFrom(std::string_view target, bool inclusive, bool from_end,
                                    const std::function<bool(uint64_t record)>& visit) const {
  const auto damaged = [] {
    return absl::DataLossError("checksum failure in an index leaf the scan reached (pmstore check names it)");
  };
  constexpr int kScanAhead = 8;  // as in ScanFrom
  uint64_t entry = 0;
  SeparatorMap::const_iterator it;
  uint64_t offset;
  if (on_image()) {
    entry = from_end ? image_.count() - 1 : image_.FloorIndex(target);
    offset = CheckedImageLeaf(entry);
  } else {
    it = from_end ? std::prev(separators_.end()) : separators_.Floor(target);
    offset = CheckedLeaf(it);
  }
  if (offset == 0) return damaged();
  PrefetchLeaf(offset);  // as in ScanFrom
  // The leaf before, which the walk reaches unless it stops early, is
  // requested as each leaf is entered, as ScanFrom requests the next.
  const auto prefetch_previous = [&] {
    if (on_image()) {
      if (entry > 0) PrefetchLeaf(image_.LeafAt(entry - 1));
    } else if (it != separators_.begin()) {
      PrefetchLeaf(std::prev(it)->second);
    }
  };
  // The place after the first record to visit.
  int pos = LeafAt(offset)->header.count;
  if (!from_end) {
    bool found = false;
    pos = Search(LeafAt(offset)->header, LeafAt(offset)->slots, target, &found);
    if (found && inclusive) ++pos;
  }
  for (;;) {
    const Leaf* leaf = LeafAt(offset);
    const LeafHeader& header = leaf->header;
    const auto record_at = [&](int i) { return leaf->slots[header.perm[i]].record; };
    prefetch_previous();
    for (int i = pos - 1; i >= std::max(0, pos - kScanAhead); --i) PrefetchBytes(record_at(i), kSmallRecordBytes);
    for (; pos > 0; --pos) {
      if (pos - 1 - kScanAhead >= 0) PrefetchBytes(record_at(pos - 1 - kScanAhead), kSmallRecordBytes);
      if (!visit(record_at(pos - 1))) return absl::OkStatus();
    }
    // The leaf before, or the start of the chain.
    if (on_image()) {
      if (entry == 0) return absl::OkStatus();
      offset = CheckedImageLeaf(--entry);
    } else {
      if (it == separators_.begin()) return absl::OkStatus();
      offset = CheckedLeaf(--it);
    }
    if (offset == 0) return damaged();
    pos = LeafAt(offset)->header.count;
  }
}

LeafHeader LeafIndex::LoadHeader(const Transaction& tx, uint64_t offset) const {
  uint64_t words[kLeafHeaderWords];
  for (uint64_t i = 0; i < kLeafHeaderWords; ++i) words[i] = tx.Read(offset + 8 * i);
  LeafHeader header;
  std::memcpy(&header, words, sizeof(header));
  return header;
}

void LeafIndex::StoreHeader(Transaction& tx, uint64_t offset, LeafHeader header) {
  header.checksum = LeafChecksum(header, *LeafAt(offset));
  if (tx.IsFresh(offset)) tx.Verify(kVerifyLeaf, offset, header.checksum);
  uint64_t words[kLeafHeaderWords];
  std::memcpy(words, &header, sizeof(header));
  bool changed = false;
  for (uint64_t i = 0; i < kLeafHeaderWords; ++i) {
    if (tx.Read(offset + 8 * i) == words[i]) continue;
    tx.Write(offset + 8 * i, words[i]);
    changed = true;
  }
  // A leaf listed twice is stamped twice, which costs less than a search.
  if (changed && (changed_headers_.empty() || changed_headers_.back().offset != offset)) {
    changed_headers_.push_back({offset, /*born=*/false, 0});
  }
}

void LeafIndex::RecordLeafImages(LeafImageRing& images, uint64_t seq, std::optional<uint64_t> newest_pin) const {
  if (old_head_ != 0) images.Record(seq, LeafImageRing::kChainHead, nullptr, old_head_);
  if (newest_pin.has_value()) {
    // Each leaf once, born when any listing says so (a leaf written whole
    // may have its header changed after in the same commit).
    std::vector<ChangedLeaf> changed = changed_headers_;
    std::sort(changed.begin(), changed.end(), [](const ChangedLeaf& a, const ChangedLeaf& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.born > b.born;
    });
    for (size_t i = 0; i < changed.size(); ++i) {
      if (i > 0 && changed[i].offset == changed[i - 1].offset) continue;
      if (changed[i].born) {
        images.Record(seq, changed[i].offset, nullptr, changed[i].from);
        continue;
      }
      // A pin before the leaf's last change reads the image that change
      // recorded; one from it on reads the leaf as it is, until now. A
      // long snapshot beside a busy writer so costs one entry per leaf,
      // not one per change (a dump of the pool needs no more entries than
      // it has leaves).
      const uint64_t changed_by = VersionCommit(LeafVersion(base_, changed[i].offset).load(std::memory_order_relaxed));
      if (changed_by <= *newest_pin) images.Record(seq, changed[i].offset, LeafAt(changed[i].offset));
    }
  }
  LeafImageRing::Recorded();
}

void LeafIndex::StampChangedLeaves(uint64_t seq) const {
  for (const ChangedLeaf& leaf : changed_headers_) {
    std::atomic_ref<uint64_t> word = LeafVersion(base_, leaf.offset);
    word.store(NextVersionWord(word.load(std::memory_order_relaxed), seq), std::memory_order_relaxed);
  }
  // The words before the header words they guard (a seqlock's writer).
  std::atomic_thread_fence(std::memory_order_release);
}

int LeafIndex::FreeSlot(const Transaction& tx, uint64_t offset, const LeafHeader& header, int from,
                        uint64_t held_cells) const {
  uint64_t used = held_cells;
  for (int i = 0; i < header.count; ++i) used |= 1ull << header.perm[i];
  if (!tx.IsFresh(offset)) {
    // Slots the committed header still names stay untouched until commit.
    const LeafHeader& committed = LeafAt(offset)->header;
    for (int i = 0; i < committed.count; ++i) used |= 1ull << committed.perm[i];
  }
  for (uint64_t n = 0; n < kLeafSlots; ++n) {
    const uint64_t s = (from + n) % kLeafSlots;
    if ((used & (1ull << s)) == 0) return static_cast<int>(s);
  }
  return -1;
}

void LeafIndex::LinkAfter(Transaction& tx, SeparatorMap::iterator leaf, uint64_t next) {
  if (leaf == separators_.begin()) {
    if (old_head_ == 0) old_head_ = leaf->second;
    tx.Write(kRootHeadLeafWord, next);
    return;
  }
  const uint64_t prev = std::prev(leaf)->second;
  LeafHeader header = LoadHeader(tx, prev);
  header.next = next;
  StoreHeader(tx, prev, header);
}

absl::Status LeafIndex::Split(Transaction& tx, SpaceAllocator& alloc, SeparatorMap::iterator leaf,
                             std::string_view key, int pos) {
  const uint64_t offset = leaf->second;
  LeafHeader header = LoadHeader(tx, offset);
  const int count = header.count;
  // The entries [from, to) move to a new leaf, before the kept one or
  // after it; see the header. A leaf this transaction changed already (or
  // made) has no slot left that a later write of the same transaction
  // could take, so it is replaced by two new leaves, whose slots all are;
  // but an append leaves it behind (the keys that follow go after it).
  const bool touched = tx.IsFresh(offset) || std::memcmp(&header, &LeafAt(offset)->header, sizeof(header)) != 0;
  const bool append = pos == count && header.next == 0 && count > kAppendSpare;
  int from = 0, to = count;
  if (append) {
    from = count - kAppendSpare;
  } else if (touched || count < static_cast<int>(kLeafSlots)) {
    // Replaced: two new leaves.
  } else if (pos >= count / 2) {
    from = count / 2;
  } else {
    to = count / 2;
  }
  const bool replaced = from == 0 && to == count;
  const bool before = !replaced && from == 0;  // the new leaf takes the lower keys
  // Replacing the leaf, or putting one before it, rewrites the previous
  // leaf's header (LinkAfter), checksum and all.
  if ((replaced || before) && leaf != separators_.begin()) {
    PMSTORE_RETURN_IF_ERROR(CheckBeforeChange(std::prev(leaf)));
  }
  struct Entry {
    LeafSlot slot;
    uint8_t fingerprint;
    int home;      // the slot it takes in a new leaf, or the first free after it
    bool in_cell;  // its record lies in its cell, and moves with it
  };
  std::vector<Entry> entries(count);
  for (int i = 0; i < count; ++i) {
    const uint8_t s = header.perm[i];
    const LeafSlot& slot = LeafAt(offset)->slots[s];
    // Version 1 fills a new leaf's slots from 0; version 2 from each key's home.
    entries[i] = Entry{slot, LeafAt(offset)->fingerprints[s], 0, geometry_.InCell(offset, s, slot.record)};
    if (geometry_.cells() && i >= from && i < to) {
      entries[i].home = HomeSlot(KeyHash(RecordKey(base_, pool_->length(), slot.record)));
    }
  }
  const auto first_key = [&](int i) { return RecordKey(base_, pool_->length(), entries[i].slot.record); };

  // New leaves are written whole, in place: nothing refers to them yet.
  // Records in cells are copied into the new leaf's cells; their old cells
  // are held (a kept leaf) or go with the old leaf to the quarantine, so a
  // pin or snapshot that reads the old copy keeps it.
  auto write_leaf = [&](uint64_t at, int first, int last, uint64_t next) {
    LeafImage image(next);
    for (int i = first; i < last; ++i) {
      Entry& e = entries[i];
      const int s = image.Add(e.slot, e.fingerprint, e.home);
      if (e.in_cell) image.SetRecord(s, writer_.CopyCell(tx, e.slot.record, geometry_.CellOffset(at, s)));
    }
    const Leaf& made = image.Finish();
    std::memcpy(base_ + at, &made, sizeof(made));
    tx.MarkFresh(at, geometry_.bytes());
    tx.WroteInPlace(at, sizeof(made));
    tx.Verify(kVerifyLeaf, at, made.header.checksum);
    // Stamped too: a follower's map, caught up past this commit, leads a
    // snapshot older than it here, and the image's word (0) would read as
    // a leaf unchanged since before the snapshot.
    changed_headers_.push_back({at, /*born=*/true, offset});
  };
  if (replaced) {
    const int left_count = count >= 2 ? count / 2 : count;
    const bool two = left_count < count;
    PMSTORE_ASSIGN_OR_RETURN(const uint64_t left, alloc.AllocUnits(tx, geometry_.units));
    uint64_t right = 0;
    if (two) {
      PMSTORE_ASSIGN_OR_RETURN(right, alloc.AllocUnits(tx, geometry_.units));
      write_leaf(right, left_count, count, header.next);
    }
    write_leaf(left, 0, left_count, two ? right : header.next);
    LinkAfter(tx, leaf, left);
    alloc.FreeUnits(tx, offset, geometry_.units);
    RepointSeparator(leaf, left);
    if (two) SetSeparator(first_key(left_count), right);
    return absl::OkStatus();
  }
  PMSTORE_ASSIGN_OR_RETURN(const uint64_t made, alloc.AllocUnits(tx, geometry_.units));
  write_leaf(made, from, to, before ? offset : header.next);
  // The moved entries leave the kept leaf: their cells are unlinked by
  // this commit, their out-of-line records move with their slots.
  for (int i = from; i < to; ++i) {
    if (entries[i].in_cell) writer_.Free(tx, alloc, offset, header.perm[i], entries[i].slot.record, pool_->length());
  }
  std::memmove(&header.perm[0], &header.perm[before ? to : 0], count - (to - from));
  std::memset(&header.perm[count - (to - from)], 0, to - from);
  header.count = static_cast<uint8_t>(count - (to - from));
  if (before) {
    LinkAfter(tx, leaf, made);
    StoreHeader(tx, offset, header);
    RepointSeparator(leaf, made);
    SetSeparator(first_key(to), offset);
  } else {
    header.next = made;
    StoreHeader(tx, offset, header);
    // The new key, when it goes right at the cut, opens the new leaf.
    SetSeparator(pos == from && !append ? key : first_key(from), made);
  }
  return absl::OkStatus();
}

absl::Status LeafIndex::Upsert(Transaction& tx, SpaceAllocator& alloc, std::string_view key, std::string_view value,
                               uint64_t* replaced) {
  *replaced = 0;
  const uint64_t prefix = KeyPrefix(key);
  const uint64_t prefix2 = KeyPrefix(key, 8);
  const uint64_t hash = KeyHash(key);
  const bool fits_cell = writer_.FitsCell(key, value);
  const int home = geometry_.cells() ? HomeSlot(hash) : 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto it = separators_.Floor(key);
    const uint64_t offset = it->second;
    // Every line of the slot part loads at once (the key's place in key
    // order, and the header's checksum, read them all), with the home
    // cell the record goes to: one wait, where the binary search would
    // wait for each slot it reads in turn.
    PrefetchLeaf(offset);
    if (geometry_.cells()) PrefetchBytes(geometry_.CellOffset(offset, home), geometry_.cell_bytes);
    PMSTORE_RETURN_IF_ERROR(CheckBeforeChange(it));
    LeafHeader header = LoadHeader(tx, offset);
    Leaf* leaf = reinterpret_cast<Leaf*>(base_ + offset);
    int pos = Find(header, *leaf, key, FingerprintOf(hash));
    const bool found = pos >= 0;
    if (!found) {
      bool equal = false;
      pos = Search(header, leaf->slots, key, &equal);
    }
    // A free slot: no committed header names it, so it is written in
    // place, and so is its cell when the record fits one that no pin,
    // snapshot or unsynced run may still read (held cells are passed over).
    int slot = fits_cell ? FreeSlot(tx, offset, header, home, alloc.HeldCells(offset)) : -1;
    const bool in_cell = slot >= 0;
    if (slot < 0) slot = FreeSlot(tx, offset, header, home, 0);
    if (slot < 0) {
      PMSTORE_RETURN_IF_ERROR(Split(tx, alloc, it, key, pos));
      continue;
    }
    if (!tx.IsFresh(offset)) {
      absl::Status guarded = tx.BeforeInPlace({{offset, sizeof(LeafHeader)},
                                               {SlotOffset(offset, slot), sizeof(LeafSlot)},
                                               {FingerprintOffset(offset, slot), 1}});
      if (!guarded.ok()) return guarded;
    }
    PMSTORE_ASSIGN_OR_RETURN(const uint64_t record,
                             writer_.Write(tx, alloc, key, value, in_cell ? geometry_.CellOffset(offset, slot) : 0));
    leaf->slots[slot] = LeafSlot{prefix, prefix2, record};
    leaf->fingerprints[slot] = FingerprintOf(hash);
    tx.WroteInPlace(SlotOffset(offset, slot), sizeof(LeafSlot));
    tx.WroteInPlace(FingerprintOffset(offset, slot), 1);
    if (found) {
      const uint8_t old_slot = header.perm[pos];
      *replaced = leaf->slots[old_slot].record;
      writer_.Free(tx, alloc, offset, old_slot, *replaced, pool_->length());
    } else {
      std::memmove(&header.perm[pos + 1], &header.perm[pos], header.count - pos);
      ++header.count;
    }
    header.perm[pos] = static_cast<uint8_t>(slot);
    StoreHeader(tx, offset, header);
    return absl::OkStatus();
  }
  return absl::InternalError("index leaf split did not make room");
}

absl::Status LeafIndex::Remove(Transaction& tx, SpaceAllocator& alloc, std::string_view key, uint64_t* removed) {
  *removed = 0;
  auto it = separators_.Floor(key);
  PMSTORE_RETURN_IF_ERROR(CheckBeforeChange(it));
  const uint64_t offset = it->second;
  LeafHeader header = LoadHeader(tx, offset);
  const int pos = Find(header, *LeafAt(offset), key);
  if (pos < 0) return absl::OkStatus();
  const bool first = it == separators_.begin();
  const bool emptied = header.count == 1 && !(first && header.next == 0);
  if (emptied && !first) PMSTORE_RETURN_IF_ERROR(CheckBeforeChange(std::prev(it)));
  const uint8_t slot = header.perm[pos];
  *removed = LeafAt(offset)->slots[slot].record;
  writer_.Free(tx, alloc, offset, slot, *removed, pool_->length());
  std::memmove(&header.perm[pos], &header.perm[pos + 1], header.count - pos - 1);
  --header.count;
  header.perm[header.count] = 0;
  if (!emptied) {
    StoreHeader(tx, offset, header);
    // A leaf's separator is its least key (the first leaf's ""), as a walk
    // of the chain finds it: every process that follows this one's commits
    // holds the same map (separator_change.h).
    if (pos == 0 && !first) {
      EraseSeparator(it);
      SetSeparator(RecordKey(base_, pool_->length(), LeafAt(offset)->slots[header.perm[0]].record), offset);
    }
    return absl::OkStatus();
  }
  // An empty leaf leaves the chain; the first leaf's successor inherits "".
  LinkAfter(tx, it, header.next);
  alloc.FreeUnits(tx, offset, geometry_.units);
  auto next = EraseSeparator(it);
  if (first) {
    const uint64_t successor = next->second;
    EraseSeparator(next);
    SetSeparator("", successor);
  }
  return absl::OkStatus();
}

}  // namespace pmstore::internal
