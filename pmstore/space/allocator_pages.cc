// Page chunks (format version 2): a large value of 1-2 MiB takes a
// contiguous run of 64 KiB pages, which may cross from one page chunk into
// the next (chunks are contiguous in the file, so the value stays one
// view); a value of 2 MiB and more takes whole chunks, 2 MiB aligned, and
// its last partial chunk's worth as the first pages of the page chunk
// right after them. The page bitmap lives in the chunk table word, so a
// page changes hands through the same logged word writes as a chunk.
#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "pmstore/space/allocator.h"

namespace pmstore::internal {

namespace {

constexpr uint32_t kAllPages = ~0u;

// Start of `pages` (<= 32) set bits in `available`, lowest first, or -1.
int RunOfPages(uint32_t available, uint64_t pages) { return RunInWord(~uint64_t{available}, pages); }

}  // namespace

void SpaceAllocator::ForEachPageChunk(uint64_t first_page, uint64_t pages,
                                      const std::function<void(uint64_t chunk, uint32_t mask)>& fn) const {
  for (uint64_t g = first_page; g < first_page + pages;) {
    const uint64_t in_chunk = g % kPagesPerChunk;
    const uint64_t n = std::min(kPagesPerChunk - in_chunk, first_page + pages - g);
    fn(g / kPagesPerChunk, PageMask(in_chunk, n));
    g += n;
  }
}

uint32_t SpaceAllocator::AvailablePages(uint64_t c, bool claim) const {
  const uint64_t word = chunk_words_[c];
  if (ChunkKind(word) == kChunkPages) return ~PageBits(word) & ~page_busy_[c];
  return claim && ChunkAvailable(c) ? kAllPages : 0;
}

int64_t SpaceAllocator::FindPages(uint64_t pages, bool claim) const {
  uint64_t run = 0;    // available pages that end at the previous chunk's last page
  uint64_t start = 0;  // global page where they begin
  for (uint64_t c = 0; c < num_chunks(); ++c) {
    const uint32_t available = AvailablePages(c, claim);
    if (available == kAllPages) {
      if (run == 0) start = c * kPagesPerChunk;
      run += kPagesPerChunk;
      if (run >= pages) return static_cast<int64_t>(start);
      continue;
    }
    if (run > 0 && run + std::countr_one(available) >= pages) return static_cast<int64_t>(start);
    const int inside = RunOfPages(available, pages);
    if (inside >= 0) return static_cast<int64_t>(c * kPagesPerChunk + inside);
    run = std::countl_one(available);
    start = (c + 1) * kPagesPerChunk - run;
  }
  return -1;
}

int64_t SpaceAllocator::FindRunWithTail(uint64_t chunks, uint64_t tail) const {
  const uint32_t mask = PageMask(0, tail);
  uint64_t run = 0;  // available chunks just before c
  for (uint64_t c = 0; c < num_chunks(); ++c) {
    if (run >= chunks && (AvailablePages(c, true) & mask) == mask) return static_cast<int64_t>(c - chunks);
    run = ChunkAvailable(c) ? run + 1 : 0;
  }
  return -1;
}

uint64_t SpaceAllocator::TrailingAvailableChunks() const {
  uint64_t trailing = 0;
  while (trailing < num_chunks() && ChunkAvailable(num_chunks() - 1 - trailing)) ++trailing;
  return trailing;
}

void SpaceAllocator::TakePages(Transaction& tx, uint64_t first_page, uint64_t pages) {
  ForEachPageChunk(first_page, pages, [&](uint64_t c, uint32_t mask) {
    const uint64_t word = chunk_words_[c];
    const uint32_t bits = ChunkKind(word) == kChunkPages ? PageBits(word) : 0;
    SetChunkWord(tx, c, PageChunkWord(bits | mask));
    if (in_run_) {
      if (run_pages_.size() <= c) run_pages_.resize(c + 1, 0);
      run_pages_[c] |= mask;
    }
  });
  tx.MarkFresh(sb_.heap_offset + first_page * kValuePageSize, pages * kValuePageSize);
}

void SpaceAllocator::FreePages(Transaction& tx, uint64_t offset, uint64_t pages) {
  const uint64_t first_page = (offset - sb_.heap_offset) / kValuePageSize;
  // A damaged record may name pages it does not own: leak rather than
  // free another value's pages.
  bool owned = first_page + pages <= num_chunks() * kPagesPerChunk;
  if (owned) {
    ForEachPageChunk(first_page, pages, [&](uint64_t c, uint32_t mask) {
      owned = owned && ChunkKind(chunk_words_[c]) == kChunkPages && (PageBits(chunk_words_[c]) & mask) == mask;
    });
  }
  if (!owned) return;
  ForEachPageChunk(first_page, pages, [&](uint64_t c, uint32_t mask) {
    const uint32_t bits = PageBits(chunk_words_[c]) & ~mask;
    page_busy_[c] |= mask;
    if (bits == 0) {
      // The chunk's last page: it returns to free, for runs and small
      // chunks too, once the quarantine lets go of it.
      SetChunkWord(tx, c, kChunkFree);
      chunk_busy_[c] = true;
      quarantine_.Add(Quarantine::Kind::kChunks, ChunkOffset(c), 1);
    } else {
      SetChunkWord(tx, c, PageChunkWord(bits));
    }
  });
  tx.DropWritesInto(offset, pages * kValuePageSize);
  quarantine_.Add(Quarantine::Kind::kPages, offset, pages);
}

absl::StatusOr<uint64_t> SpaceAllocator::AllocPages(Transaction& tx, uint64_t pages) {
  // Pages of page chunks first, so that free chunks stay whole for runs;
  // then free chunks too; then a grown pool (one more chunk always fits
  // pages <= 32).
  int64_t first = FindPages(pages, false);
  if (first < 0) first = FindPages(pages, true);
  if (first < 0) {
    absl::Status grown = EnsureChunks(num_chunks() + 1);
    if (!grown.ok()) return grown;
    first = FindPages(pages, true);
    if (first < 0) return absl::ResourceExhaustedError("pool full: no free pages after growth");
  }
  TakePages(tx, static_cast<uint64_t>(first), pages);
  return sb_.heap_offset + static_cast<uint64_t>(first) * kValuePageSize;
}

absl::StatusOr<uint64_t> SpaceAllocator::AllocRunWithTail(Transaction& tx, uint64_t chunks, uint64_t tail) {
  int64_t first = FindRunWithTail(chunks, tail);
  if (first < 0) {
    absl::Status grown = EnsureChunks(num_chunks() + chunks + 1 - std::min(chunks + 1, TrailingAvailableChunks()));
    if (!grown.ok()) return grown;
    first = FindRunWithTail(chunks, tail);
    if (first < 0) return absl::ResourceExhaustedError("pool full: no run of free chunks after growth");
  }
  const uint64_t c0 = static_cast<uint64_t>(first);
  for (uint64_t c = c0; c < c0 + chunks; ++c)
    SetChunkWord(tx, c, c == c0 ? RunHeadWord(chunks, tail) : kChunkLargeTail);
  tx.MarkFresh(ChunkOffset(c0), chunks * kChunkSize);
  TakePages(tx, (c0 + chunks) * kPagesPerChunk, tail);
  return ChunkOffset(c0);
}

absl::StatusOr<uint64_t> SpaceAllocator::AllocValue(Transaction& tx, uint64_t bytes) {
  const LargeLayout layout = LayoutFor(bytes, paged_);
  if (layout.chunks == 0) return AllocPages(tx, layout.pages);
  if (layout.tail_pages == 0) return AllocRun(tx, layout.chunks);
  return AllocRunWithTail(tx, layout.chunks, layout.tail_pages);
}

void SpaceAllocator::FreeValue(Transaction& tx, uint64_t offset, uint64_t bytes) {
  if (IsRunHead(offset)) return FreeRun(tx, offset);
  if (offset < sb_.heap_offset || (offset - sb_.heap_offset) % kValuePageSize != 0) return;  // damaged: leak
  FreePages(tx, offset, LayoutFor(bytes, true).pages);
}

}  // namespace pmstore::internal
