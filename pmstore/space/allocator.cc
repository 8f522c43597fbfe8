#include "pmstore/space/allocator.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pmstore::internal {

void SpaceAllocator::Load(uint64_t num_chunks) {
  chunk_words_.clear();
  chunk_busy_.clear();
  page_busy_.clear();
  small_.clear();
  AdoptChunks(num_chunks);
  quarantine_.ForEachHeld([this](const Quarantine::Item& item) { MarkHeld(item, true); });
  if (hold_all_through_ != 0) HoldAllFree();
  if (current_ >= num_chunks) current_ = 0;
}

void SpaceAllocator::AdoptChunks(uint64_t chunks) {
  const uint64_t old = num_chunks();
  if (chunks <= old) return;
  chunk_words_.resize(chunks, 0);
  chunk_busy_.resize(chunks, false);
  page_busy_.resize(chunks, 0);
  small_.resize(chunks);
  for (uint64_t c = old; c < chunks; ++c) {
    std::memcpy(&chunk_words_[c], base_ + ChunkWordOffset(c), 8);
    if (chunk_words_[c] == kChunkSmall) LoadSmallChunk(c);
  }
}

void SpaceAllocator::LoadSmallChunk(uint64_t c) {
  small_[c].reset();
  if (chunk_words_[c] != kChunkSmall) return;
  auto chunk = std::make_unique<SmallChunk>();
  std::memcpy(chunk->bits.data(), base_ + ChunkOffset(c), kBitmapWords * 8);
  chunk->bits[0] = ~0ull;  // the bitmap's own units, whatever the media says
  for (uint64_t word : chunk->bits) chunk->used += std::popcount(word);
  small_[c] = std::move(chunk);
}

void SpaceAllocator::HoldAllFree() {
  for (uint64_t c = 0; c < num_chunks(); ++c) {
    const uint64_t word = chunk_words_[c];
    if (word == kChunkFree) chunk_busy_[c] = true;
    if (ChunkKind(word) == kChunkPages) page_busy_[c] = ~PageBits(word);
    if (small_[c]) HoldAllUnits(*small_[c]);
  }
}

void SpaceAllocator::HoldAllUnits(SmallChunk& chunk) {
  chunk.bits.fill(~0ull);
  chunk.used = kUnitsPerChunk;
}

void SpaceAllocator::SetChunkWord(Transaction& tx, uint64_t c, uint64_t word) {
  chunk_words_[c] = word;
  tx.Write(ChunkWordOffset(c), word);
  journal_.chunk_words.push_back(c);
}

void SpaceAllocator::FollowCommit(uint64_t seq, const SpaceJournal& journal) {
  if (journal.released_through != 0) Release(journal.released_through - 1);
  AdoptChunks(journal.num_chunks);
  for (const uint64_t c : journal.chunk_words) {
    if (c >= num_chunks()) continue;  // beyond what the journal says the pool holds: ignored, not trusted
    std::memcpy(&chunk_words_[c], base_ + ChunkWordOffset(c), 8);
    // Loaded again even where it was small before: the chunk may have
    // been returned and claimed since, and the pool has its bits as the
    // newest commit left them (this view then marks what it holds).
    LoadSmallChunk(c);
    if (!small_[c]) continue;
    if (hold_all_through_ != 0) {
      HoldAllUnits(*small_[c]);
      continue;
    }
    quarantine_.ForEachHeld([&](const Quarantine::Item& item) {
      if (item.kind == Quarantine::Kind::kUnits && ChunkOf(item.offset) == c) MarkHeld(item, true);
    });
  }
  for (const SpaceJournal::Taken& taken : journal.taken) {
    if (taken.offset < sb_.heap_offset) continue;
    const uint64_t c = ChunkOf(taken.offset);
    if (c >= num_chunks() || !small_[c]) continue;
    MarkUnits(*small_[c], (taken.offset - ChunkOffset(c)) / kUnitSize, taken.units, true);
  }
  for (const Quarantine::Item& item : journal.freed) {
    if (item.kind != Quarantine::Kind::kCell &&
        (item.offset < sb_.heap_offset || ChunkOf(item.offset) >= num_chunks())) {
      continue;
    }
    if (item.kind == Quarantine::Kind::kCell) held_cells_[item.offset] |= 1ull << item.count;
    quarantine_.AddCommitted(item, seq);
    MarkHeld(item, true);
  }
}

void SpaceAllocator::LoseTrack(uint64_t seq, uint64_t num_chunks) {
  hold_all_through_ = seq + 1;
  Load(num_chunks);
}

void SpaceAllocator::MarkUnits(SmallChunk& chunk, uint64_t first, uint64_t units, bool used) {
  for (uint64_t u = first; u < first + units; ++u) {
    const uint64_t mask = 1ull << (u % 64);
    const bool was = (chunk.bits[u / 64] & mask) != 0;
    if (was == used) continue;
    chunk.bits[u / 64] ^= mask;
    chunk.used += used ? 1 : -1;
  }
}

int RunInWord(uint64_t word, uint64_t units) {
  uint64_t starts = ~word;
  for (uint64_t have = 1; have < units && starts != 0;) {
    const uint64_t shift = std::min(have, units - have);
    starts &= starts >> shift;
    have += shift;
  }
  return starts == 0 ? -1 : std::countr_zero(starts);
}

int64_t SpaceAllocator::FindRun(const SmallChunk& chunk, uint64_t units) const {
  if (units <= 64) {
    // Fast path: a run inside one word, next fit from the hint's word.
    const uint64_t first_word = chunk.hint / 64;
    for (uint64_t i = 0; i < kBitmapWords; ++i) {
      const uint64_t w = (first_word + i) % kBitmapWords;
      const int bit = RunInWord(chunk.bits[w], units);
      if (bit >= 0) return static_cast<int64_t>(w * 64 + bit);
    }
    // A run across a word boundary is rare enough not to pay a bit-by-bit
    // scan of 32768 units for it on every small allocation.
    return -1;
  }
  // Next fit: continue after the last allocation, then wrap around once.
  const int64_t found = FindRunFrom(chunk, units, chunk.hint);
  return found >= 0 || chunk.hint == kBitmapUnits ? found : FindRunFrom(chunk, units, kBitmapUnits);
}

int64_t SpaceAllocator::FindRunFrom(const SmallChunk& chunk, uint64_t units, uint64_t from) const {
  uint64_t run = 0;
  uint64_t start = 0;
  for (uint64_t u = from; u < kUnitsPerChunk;) {
    const uint64_t word = chunk.bits[u / 64];
    if (u % 64 == 0 && word == ~0ull) {
      run = 0;
      u += 64;
      continue;
    }
    if (u % 64 == 0 && word == 0) {
      if (run == 0) start = u;
      run += 64;
      u += 64;
      if (run >= units) return static_cast<int64_t>(start);
      continue;
    }
    if ((word >> (u % 64)) & 1) {
      run = 0;
    } else {
      if (run == 0) start = u;
      if (++run >= units) return static_cast<int64_t>(start);
    }
    ++u;
  }
  return -1;
}

void SpaceAllocator::SetPersistentBits(Transaction& tx, uint64_t chunk, uint64_t first, uint64_t units, bool used) {
  const uint64_t last = first + units - 1;
  for (uint64_t w = first / 64; w <= last / 64; ++w) {
    const uint64_t lo = w == first / 64 ? first % 64 : 0;
    const uint64_t hi = w == last / 64 ? last % 64 : 63;
    const uint64_t mask = (hi == 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);
    const uint64_t offset = ChunkOffset(chunk) + w * 8;
    const uint64_t old = tx.Read(offset);
    tx.Write(offset, used ? (old | mask) : (old & ~mask));
  }
}

absl::Status SpaceAllocator::EnsureChunks(uint64_t chunks) {
  if (chunks <= num_chunks()) return absl::OkStatus();
  if (chunks > sb_.max_chunks) {
    return absl::ResourceExhaustedError(
        absl::StrCat("pool full: needs ", chunks, " chunks of 2 MiB and holds at most ", sb_.max_chunks,
                     " (its maximum size, or its device's size)"));
  }
  auto grown = grow_(chunks);
  if (!grown.ok()) return grown.status();
  // Chunks past the ones the view knows were in no commit it missed
  // (LoseTrack loads every chunk the newest commit names; later ones are
  // followed): no pin reads them, even while all free space is held.
  AdoptChunks(*grown);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> SpaceAllocator::ClaimSmallChunk(Transaction& tx) {
  uint64_t c = 0;
  while (c < num_chunks() && !ChunkAvailable(c)) ++c;
  if (c == num_chunks()) {
    absl::Status grown = EnsureChunks(c + 1);
    if (!grown.ok()) return grown;
  }
  // The new bitmap goes through the log (512 words, once per 2 MiB): recovery
  // has no checksum to tell a bitmap that reached the media from one that
  // did not.
  const uint64_t offset = ChunkOffset(c);
  auto chunk = std::make_unique<SmallChunk>();
  chunk->bits.fill(0);
  chunk->bits[0] = ~0ull;
  chunk->used = kBitmapUnits;
  for (uint64_t w = 0; w < kBitmapWords; ++w) tx.Write(offset + w * 8, chunk->bits[w]);
  SetChunkWord(tx, c, kChunkSmall);
  small_[c] = std::move(chunk);
  if (in_run_) {
    if (run_chunks_.size() <= c) run_chunks_.resize(c + 1, false);
    run_chunks_[c] = true;
  }
  return c;
}

absl::StatusOr<uint64_t> SpaceAllocator::AllocUnits(Transaction& tx, uint64_t units) {
  if (units == 0 || units > kUnitsPerChunk - kBitmapUnits) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate ", units, " units in one chunk"));
  }
  const uint64_t n = num_chunks();
  int64_t first = -1;
  uint64_t chunk = 0;
  for (uint64_t i = 0; i < n && first < 0; ++i) {
    chunk = (current_ + i) % n;
    SmallChunk* candidate = small_[chunk].get();
    if (!candidate || kUnitsPerChunk - candidate->used < units || units >= candidate->failed_units) continue;
    first = FindRun(*candidate, units);
    if (first < 0) candidate->failed_units = units;
  }
  if (first < 0) {
    auto claimed = ClaimSmallChunk(tx);
    if (!claimed.ok()) return claimed.status();
    chunk = *claimed;
    first = FindRun(*small_[chunk], units);
  }
  current_ = chunk;
  small_[chunk]->hint = std::min(kUnitsPerChunk - 1, static_cast<uint64_t>(first) + units);
  MarkUnits(*small_[chunk], static_cast<uint64_t>(first), units, true);
  SetPersistentBits(tx, chunk, static_cast<uint64_t>(first), units, true);
  journal_.taken.push_back({ChunkOffset(chunk) + static_cast<uint64_t>(first) * kUnitSize, units});
  if (in_run_) {
    if (run_units_.size() <= chunk) run_units_.resize(chunk + 1);
    if (!run_units_[chunk]) run_units_[chunk] = std::make_unique<std::array<uint64_t, kBitmapWords>>();  // zeroed
    auto& bits = *run_units_[chunk];
    for (uint64_t u = static_cast<uint64_t>(first); u < static_cast<uint64_t>(first) + units; ++u) {
      bits[u / 64] |= 1ull << (u % 64);
    }
  }
  return ChunkOffset(chunk) + static_cast<uint64_t>(first) * kUnitSize;
}

void SpaceAllocator::EndRun() {
  in_run_ = false;
  run_units_.clear();
  run_chunks_.clear();
  run_pages_.clear();
}

bool SpaceAllocator::FreshInRun(uint64_t offset) const {
  if (!in_run_ || offset < sb_.heap_offset) return false;
  const uint64_t c = ChunkOf(offset);
  if (c < run_chunks_.size() && run_chunks_[c]) return true;
  if (c < run_pages_.size() && ((run_pages_[c] >> ((offset - ChunkOffset(c)) / kValuePageSize)) & 1)) return true;
  if (c >= run_units_.size() || !run_units_[c]) return false;
  const uint64_t unit = (offset - ChunkOffset(c)) / kUnitSize;
  return ((*run_units_[c])[unit / 64] >> (unit % 64)) & 1;
}

void SpaceAllocator::FreeUnits(Transaction& tx, uint64_t offset, uint64_t units) {
  const uint64_t chunk = ChunkOf(offset);
  SetPersistentBits(tx, chunk, (offset - ChunkOffset(chunk)) / kUnitSize, units, false);
  tx.DropWritesInto(offset, units * kUnitSize);
  quarantine_.Add(Quarantine::Kind::kUnits, offset, units);
}

absl::StatusOr<uint64_t> SpaceAllocator::AllocRun(Transaction& tx, uint64_t chunks) {
  auto find = [&]() -> int64_t {
    uint64_t run = 0;
    for (uint64_t c = 0; c < num_chunks(); ++c) {
      run = ChunkAvailable(c) ? run + 1 : 0;
      if (run == chunks) return static_cast<int64_t>(c + 1 - chunks);
    }
    return -1;
  };
  int64_t first = find();
  if (first < 0) {
    absl::Status grown = EnsureChunks(num_chunks() + chunks - TrailingAvailableChunks());
    if (!grown.ok()) return grown;
    first = find();
    if (first < 0) return absl::ResourceExhaustedError("pool full: no run of free chunks after growth");
  }
  const uint64_t c0 = static_cast<uint64_t>(first);
  for (uint64_t c = c0; c < c0 + chunks; ++c) SetChunkWord(tx, c, c == c0 ? RunHeadWord(chunks, 0) : kChunkLargeTail);
  tx.MarkFresh(ChunkOffset(c0), chunks * kChunkSize);
  return ChunkOffset(c0);
}

void SpaceAllocator::FreeRun(Transaction& tx, uint64_t offset) {
  const uint64_t c0 = ChunkOf(offset);
  const uint64_t chunks = RunChunks(chunk_words_[c0]);
  const uint64_t tail = RunTailPages(chunk_words_[c0]);
  if (tail > 0 && c0 + chunks < num_chunks()) FreePages(tx, ChunkOffset(c0 + chunks), tail);
  for (uint64_t c = c0; c < c0 + chunks && c < num_chunks(); ++c) {
    SetChunkWord(tx, c, kChunkFree);
    chunk_busy_[c] = true;
  }
  tx.DropWritesInto(offset, chunks * kChunkSize);
  quarantine_.Add(Quarantine::Kind::kChunks, offset, chunks);
}

bool SpaceAllocator::IsRunHead(uint64_t offset) const {
  if (offset < sb_.heap_offset || (offset - sb_.heap_offset) % kChunkSize != 0) return false;
  const uint64_t c = ChunkOf(offset);
  return c < num_chunks() && ChunkKind(chunk_words_[c]) == kChunkLargeHead;
}

uint64_t SpaceAllocator::FreeEmptySmallChunks(Transaction& tx) {
  uint64_t freed = 0;
  for (uint64_t c = 0; c < num_chunks(); ++c) {
    if (chunk_words_[c] == kChunkPages) {  // no page in use (FreePages frees such chunks itself)
      SetChunkWord(tx, c, kChunkFree);
      chunk_busy_[c] = true;
      quarantine_.Add(Quarantine::Kind::kChunks, ChunkOffset(c), 1);
      ++freed;
      continue;
    }
    if (!small_[c] || small_[c]->used != kBitmapUnits) continue;
    SetChunkWord(tx, c, kChunkFree);
    tx.DropWritesInto(ChunkOffset(c), kChunkSize);
    chunk_busy_[c] = true;
    small_[c].reset();
    quarantine_.Add(Quarantine::Kind::kChunks, ChunkOffset(c), 1);
    ++freed;
  }
  return freed;
}

void SpaceAllocator::Abandoned() {
  // A cell held by the abandoned transaction was not held before it: a
  // held cell takes no new record, so its slot cannot be freed again.
  for (const Quarantine::Item& item : quarantine_.TakeAbandoned()) {
    if (item.kind == Quarantine::Kind::kCell) Unhold(item.offset, static_cast<int>(item.count));
  }
  journal_.ClearChanges();
  Load(num_chunks());
}

void SpaceAllocator::HoldCell(uint64_t leaf, int slot) {
  held_cells_[leaf] |= 1ull << slot;
  quarantine_.Add(Quarantine::Kind::kCell, leaf, static_cast<uint64_t>(slot));
}

void SpaceAllocator::Unhold(uint64_t leaf, int slot) {
  auto it = held_cells_.find(leaf);
  if (it == held_cells_.end()) return;
  it->second &= ~(1ull << slot);
  if (it->second == 0) held_cells_.erase(it);
}

void SpaceAllocator::MarkHeld(const Quarantine::Item& item, bool held) {
  const uint64_t c = ChunkOf(item.offset);
  switch (item.kind) {
    case Quarantine::Kind::kUnits:
      if (c < num_chunks() && small_[c]) {
        MarkUnits(*small_[c], (item.offset - ChunkOffset(c)) / kUnitSize, item.count, held);
        if (!held) small_[c]->failed_units = kUnitsPerChunk;
      }
      return;
    case Quarantine::Kind::kChunks:
      for (uint64_t i = 0; i < item.count && c + i < num_chunks(); ++i) chunk_busy_[c + i] = held;
      return;
    case Quarantine::Kind::kPages:
      ForEachPageChunk((item.offset - sb_.heap_offset) / kValuePageSize, item.count, [&](uint64_t chunk, uint32_t mask) {
        if (chunk < num_chunks()) page_busy_[chunk] = held ? page_busy_[chunk] | mask : page_busy_[chunk] & ~mask;
      });
      return;
    case Quarantine::Kind::kCell:
      // A leaf freed meanwhile is in the quarantine too, released by the
      // same or a later commit: its cells go before it can be reused.
      if (!held) Unhold(item.offset, static_cast<int>(item.count));
      return;
  }
}

void SpaceAllocator::ReleaseThrough(uint64_t seq) {
  journal_.released_through = std::max(journal_.released_through, seq + 1);
  Release(seq);
}

void SpaceAllocator::Release(uint64_t seq) {
  if (hold_all_through_ != 0 && seq + 1 < hold_all_through_) {
    // Everything free stays held: the quarantine lets go of its items
    // (the Load that ends the hold marks what is left), cells aside, which
    // Load leaves as they are.
    quarantine_.ReleaseThrough(seq, [this](const Quarantine::Item& item) {
      if (item.kind == Quarantine::Kind::kCell) MarkHeld(item, false);
    });
    return;
  }
  quarantine_.ReleaseThrough(seq, [this](const Quarantine::Item& item) { MarkHeld(item, false); });
  if (hold_all_through_ != 0) {
    hold_all_through_ = 0;
    Load(num_chunks());  // what is held now is the quarantine's alone
  }
}

SpaceUsage SpaceAllocator::Usage() const {
  SpaceUsage usage;
  for (uint64_t c = 0; c < num_chunks(); ++c) {
    if (chunk_words_[c] == kChunkFree) {
      usage.free_bytes += kChunkSize;
    } else if (ChunkKind(chunk_words_[c]) == kChunkPages) {
      const uint64_t used = std::popcount(PageBits(chunk_words_[c]));
      usage.live_bytes += used * kValuePageSize;
      usage.free_bytes += (kPagesPerChunk - used) * kValuePageSize;
      usage.free_in_partial_chunks += (kPagesPerChunk - used) * kValuePageSize;
    } else if (small_[c]) {
      const uint64_t free_units = kUnitsPerChunk - small_[c]->used;
      usage.free_bytes += free_units * kUnitSize;
      usage.free_in_partial_chunks += free_units * kUnitSize;
      usage.live_bytes += (small_[c]->used - kBitmapUnits) * kUnitSize;
    } else {
      usage.live_bytes += kChunkSize;
    }
  }
  return usage;
}

}  // namespace pmstore::internal
