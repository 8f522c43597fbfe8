// Store::Check: every checksum, every structural invariant of
// doc/FORMAT.md, and the allocator's bitmaps against what the index
// reaches.
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pmstore/db/store_impl.h"
#include "pmstore/format/record.h"

namespace pmstore {
namespace {

using namespace internal;  // NOLINT: a checker names most of the format

class Checker {
 public:
  Checker(const char* base, uint64_t length, const Superblock& sb, uint64_t chunks, uint64_t last_seq,
          CheckReport* report)
      : base_(base),
        length_(length),
        sb_(sb),
        geometry_(LeafGeometry::Of(sb)),
        chunks_(chunks),
        last_seq_(last_seq),
        report_(report),
        reached_(chunks),
        reached_pages_(chunks, 0) {
    for (auto& bits : reached_) bits.assign(kBitmapWords, 0);
  }

  void Run() {
    Root root;
    std::memcpy(&root, base_ + kRootOffset, sizeof(root));
    if (root.checksum != RootChecksum(root)) Problem("checksum failure in the root");
    CheckChunkTable();
    CheckLeaves(root.head_leaf);
    if (report_->keys != root.key_count) {
      Problem(absl::StrCat("root counts ", root.key_count, " keys, the index holds ", report_->keys));
    }
    if (root.separator_image != 0) CheckSeparatorImage(root);
    CheckBitmaps();
  }

 private:
  void Problem(std::string line) {
    if (report_->problems.size() < 100) report_->problems.push_back(std::move(line));
  }
  uint64_t ChunkWord(uint64_t c) const {
    uint64_t word;
    std::memcpy(&word, base_ + sb_.chunk_table_offset + c * 8, 8);
    return word;
  }
  uint64_t ChunkOffset(uint64_t c) const { return sb_.heap_offset + c * kChunkSize; }

  bool paged() const { return sb_.version >= kFirstPagedVersion; }

  void CheckChunkTable() {
    for (uint64_t c = 0; c < chunks_; ++c) {
      const uint64_t word = ChunkWord(c);
      if (ChunkKind(word) == kChunkLargeHead) {
        const uint64_t run = RunChunks(word);
        const uint64_t tail = RunTailPages(word);
        bool ok = run > 0 && c + run <= chunks_ && (word >> 48) == 0 && tail <= kPagesPerChunk &&
                  (paged() || tail == 0);
        for (uint64_t i = 1; ok && i < run; ++i) ok = ChunkWord(c + i) == kChunkLargeTail;
        // The tail: the first pages of the page chunk right after the run.
        const uint64_t after = ok && tail > 0 && c + run < chunks_ ? ChunkWord(c + run) : kChunkFree;
        if (ok && tail > 0) {
          ok = ChunkKind(after) == kChunkPages && (PageBits(after) & PageMask(0, tail)) == PageMask(0, tail);
        }
        if (!ok) Problem(absl::StrCat("chunk table: bad large run at chunk ", c));
        if (ok) c += run - 1;
      } else if (ChunkKind(word) == kChunkPages && paged() && (word & 0xffffff00ull) == 0) {
        continue;
      } else if (word != kChunkFree && word != kChunkSmall) {
        Problem(absl::StrCat("chunk table: bad word ", word, " for chunk ", c));
      }
    }
  }

  // Marks [offset, offset+units) reached; false when it is not inside one
  // small chunk or already reached (shared by two owners).
  bool Reach(uint64_t offset, uint64_t units, const std::string& what) {
    const uint64_t c = (offset - sb_.heap_offset) / kChunkSize;
    if (offset < sb_.heap_offset || c >= chunks_ || ChunkWord(c) != kChunkSmall ||
        (offset - ChunkOffset(c)) / kUnitSize + units > kUnitsPerChunk) {
      Problem(absl::StrCat(what, " at offset ", offset, " is not inside a small chunk"));
      return false;
    }
    const uint64_t first = (offset - ChunkOffset(c)) / kUnitSize;
    for (uint64_t u = first; u < first + units; ++u) {
      uint64_t& word = reached_[c][u / 64];
      if (word & (1ull << (u % 64))) {
        Problem(absl::StrCat(what, " at offset ", offset, " overlaps another object"));
        return false;
      }
      word |= 1ull << (u % 64);
    }
    return true;
  }

  void CheckLeaves(uint64_t head) {
    std::string previous;
    bool have_previous = false;
    uint64_t offset = head;
    const uint64_t max_leaves = length_ / geometry_.bytes();
    for (uint64_t n = 0; offset != 0; ++n) {
      if (n > max_leaves) return Problem("index leaves form a cycle");
      const LeafFault fault = CheckLeaf(base_, length_, sb_.heap_offset, geometry_, offset);
      if (fault == LeafFault::kOutsideHeap) return Problem(LeafFaultMessage(fault, offset));
      if (!Reach(offset, geometry_.units, "index leaf")) return;
      ++report_->leaves;
      if (fault == LeafFault::kBadPermutation) return Problem(LeafFaultMessage(fault, offset));
      chain_.push_back({offset, {}, {}, false});
      if (fault == LeafFault::kBadChecksum) return Problem(LeafFaultMessage(fault, offset));
      const Leaf* leaf = reinterpret_cast<const Leaf*>(base_ + offset);
      const LeafHeader& h = leaf->header;
      for (int i = 0; i < h.count; ++i) {
        const LeafSlot& slot = leaf->slots[h.perm[i]];
        RecordView view;
        if (!ReadRecord(base_, length_, slot.record, &view)) {
          Problem(absl::StrCat("damaged record header at offset ", slot.record));
          continue;
        }
        ++report_->keys;
        if (have_previous && view.key <= previous) {
          Problem(absl::StrCat("keys out of order at record offset ", slot.record));
        }
        previous.assign(view.key.data(), view.key.size());
        have_previous = true;
        ChainLeaf& in_chain = chain_.back();
        if (!in_chain.has_keys) in_chain.first = previous;
        in_chain.last = previous;
        in_chain.has_keys = true;
        if (KeyPrefix(view.key) != slot.prefix || KeyPrefix(view.key, 8) != slot.prefix2) {
          Problem(absl::StrCat("stale key prefix for record ", slot.record));
        }
        if (KeyFingerprint(view.key) != leaf->fingerprints[h.perm[i]]) {
          Problem(absl::StrCat("stale key fingerprint for record ", slot.record));
        }
        CheckRecord(offset, h.perm[i], slot.record, view);
      }
      offset = h.next;
    }
  }

  // Marks pages [first_page, first_page+pages) reached; false when one is
  // not in a page chunk or already reached.
  bool ReachPages(uint64_t first_page, uint64_t pages, uint64_t record) {
    for (uint64_t g = first_page; g < first_page + pages; ++g) {
      const uint64_t c = g / kPagesPerChunk;
      const uint32_t bit = 1u << (g % kPagesPerChunk);
      if (c >= chunks_ || ChunkKind(ChunkWord(c)) != kChunkPages) {
        Problem(absl::StrCat("large value of record ", record, " is not in page chunks"));
        return false;
      }
      if (reached_pages_[c] & bit) {
        Problem(
            absl::StrCat("large value of record ", record, " shares page ", g % kPagesPerChunk, " of chunk ", c));
        return false;
      }
      reached_pages_[c] |= bit;
    }
    return true;
  }

  void CheckLargeValue(uint64_t record, const RecordView& view) {
    const LargeLayout layout = LayoutFor(view.value.size(), paged());
    const uint64_t first_page = (view.value_offset - sb_.heap_offset) / kValuePageSize;
    if (view.value_offset < sb_.heap_offset) {
      return Problem(absl::StrCat("large value of record ", record, " lies before the heap"));
    }
    if (layout.chunks == 0) {
      ReachPages(first_page, layout.pages, record);
      return;
    }
    const uint64_t c = first_page / kPagesPerChunk;
    if (first_page % kPagesPerChunk != 0 || c >= chunks_ ||
        ChunkWord(c) != RunHeadWord(layout.chunks, layout.tail_pages)) {
      Problem(absl::StrCat("large value of record ", record, " is not a run of ", layout.chunks, " chunks and ",
                           layout.tail_pages, " pages"));
    } else if (!large_heads_.insert(c).second) {
      Problem(absl::StrCat("large value of record ", record, " is shared"));
    } else {
      ReachPages((c + layout.chunks) * kPagesPerChunk, layout.tail_pages, record);
    }
  }

  // A record in a leaf cell lies in its own slot's cell, whole, and its
  // units belong to the leaf; one out of line owns its units.
  void CheckRecord(uint64_t leaf, int slot, uint64_t record, const RecordView& view) {
    if (geometry_.cells() && record >= leaf && record < leaf + geometry_.bytes()) {
      if (!geometry_.InCell(leaf, slot, record)) {
        return Problem(absl::StrCat("slot ", slot, " of index leaf at offset ", leaf, " names record offset ", record,
                                    ", inside the leaf but not its own cell"));
      }
      if (view.large || view.units * kUnitSize > geometry_.cell_bytes) {
        return Problem(absl::StrCat("record in the cell at offset ", record, " overruns its cell"));
      }
    } else if (!Reach(record, view.units, "record")) {
      return;
    }
    if (!RecordIsIntact(base_, length_, record)) {
      Problem(absl::StrCat("checksum failure in record at offset ", record));
    }
    ++report_->records_verified;
    report_->bytes_verified += view.key.size() + view.value.size();
    if (view.large) CheckLargeValue(record, view);
  }

  // The image's run is owned (not leaked). An image that is stale (open
  // passes it over; the next write frees it) is no problem; a damaged
  // one, or one that disagrees with the chain, is: open would walk.
  void CheckSeparatorImage(const Root& root) {
    const uint64_t offset = root.separator_image;
    const uint64_t c = (offset - sb_.heap_offset) / kChunkSize;
    if (offset < sb_.heap_offset || (offset - sb_.heap_offset) % kChunkSize != 0 || c >= chunks_ ||
        ChunkKind(ChunkWord(c)) != kChunkLargeHead) {
      return Problem(absl::StrCat("the root names a separator image at offset ", offset, ", which is not a large run"));
    }
    large_heads_.insert(c);
    auto image = SeparatorImage::Open(base_, std::min(length_, offset + RunChunks(ChunkWord(c)) * kChunkSize), offset,
                                      {last_seq_, root.head_leaf, root.key_count});
    if (absl::IsFailedPrecondition(image.status())) return;
    if (!image.ok()) return Problem(absl::StrCat(image.status().message(), " (open walks the leaf chain instead)"));
    if (image->count() != chain_.size()) {
      return Problem(absl::StrCat("separator image names ", image->count(), " leaves, the chain holds ", chain_.size()));
    }
    uint64_t i = 0;
    bool agrees = true;
    image->ForEach([&](std::string_view separator, uint64_t leaf) {
      const ChainLeaf& l = chain_[i];
      // Each leaf's keys lie from its separator to below the next one.
      bool ok = leaf == l.offset && (i > 0 || separator.empty());
      if (l.has_keys) ok = ok && separator <= l.first;
      if (i > 0 && chain_[i - 1].has_keys) ok = ok && separator > chain_[i - 1].last;
      if (!ok && agrees) {
        Problem(absl::StrCat("separator image entry ", i, " disagrees with index leaf ", i, " at offset ", l.offset));
      }
      agrees = agrees && ok;
      ++i;
    });
  }

  void CheckBitmaps() {
    for (uint64_t c = 0; c < chunks_; ++c) {
      const uint64_t word = ChunkWord(c);
      if (ChunkKind(word) == kChunkLargeHead && large_heads_.count(c) == 0) {
        Problem(absl::StrCat("large run at chunk ", c, " belongs to no record (leaked)"));
      }
      if (ChunkKind(word) == kChunkPages && PageBits(word) != reached_pages_[c]) {
        const uint32_t leaked = PageBits(word) & ~reached_pages_[c];
        const uint32_t unmarked = reached_pages_[c] & ~PageBits(word);
        if (leaked) {
          Problem(absl::StrCat("chunk ", c, ": pages allocated but unreachable from page ", std::countr_zero(leaked)));
        }
        if (unmarked) {
          Problem(absl::StrCat("chunk ", c, ": reachable pages marked free from page ", std::countr_zero(unmarked)));
        }
      }
      if (word != kChunkSmall) continue;
      const uint64_t* bits = reinterpret_cast<const uint64_t*>(base_ + ChunkOffset(c));
      reached_[c][0] |= ~0ull;  // the bitmap itself
      for (uint64_t w = 0; w < kBitmapWords; ++w) {
        if (bits[w] == reached_[c][w]) continue;
        const uint64_t leaked = bits[w] & ~reached_[c][w];
        const uint64_t unmarked = reached_[c][w] & ~bits[w];
        if (leaked) Problem(absl::StrCat("chunk ", c, ": units allocated but unreachable near unit ", w * 64));
        if (unmarked) Problem(absl::StrCat("chunk ", c, ": reachable units marked free near unit ", w * 64));
      }
    }
  }

  const char* base_;
  uint64_t length_;
  Superblock sb_;
  LeafGeometry geometry_;
  uint64_t chunks_;
  uint64_t last_seq_;
  CheckReport* report_;
  // The chain in order: each leaf and its first and last keys (empty when it holds none).
  struct ChainLeaf {
    uint64_t offset;
    std::string first;
    std::string last;
    bool has_keys;
  };
  std::vector<ChainLeaf> chain_;
  std::vector<std::vector<uint64_t>> reached_;
  std::vector<uint32_t> reached_pages_;  // per page chunk: pages a value or a run's tail owns
  std::set<uint64_t> large_heads_;
};

}  // namespace

CheckReport StoreImpl::CheckNow() {
  CheckReport report;
  if (Forked()) {
    report.problems.push_back(std::string(ForkedError().message()));
    return report;
  }
  // A follower checks one commit: it holds the writers' turn, which a
  // writer takes for each commit (and to recover the pool at its open),
  // for as long as it checks, then checks what the newest commit left.
  // Readers go on meanwhile; a writer's next commit waits.
  std::optional<internal::TurnHeld> turn;
  if (following_) {
    turn.emplace(region_turn());
    if (!turn->status().ok()) {
      report.problems.push_back(absl::StrCat(path_, ": not checked: ", turn->status().message()));
      return report;
    }
    if (turn->holder_died() || change_ring_->applying() != 0) {
      // Nothing here to recover: the next writable open does (and takes
      // the turn, given back as a holder's that recovered).
      turn->Recovered();
      report.problems.push_back(
          absl::StrCat(path_,
                       ": not checked: the process writing the pool died inside a commit, which the next writable "
                       "open recovers (pmstore readers lists the processes that have the pool open)"));
      return report;
    }
  }
  // At the newest commit, which no writer changes now.
  if (following_) LoadWritersSpace();
  EnsureSpaceLoaded();
  internal::SharedGuard lock(&mu_);
  if (closed_) {
    report.problems.push_back(std::string(ClosedError().message()));
    return report;
  }
  // The last commit (no commit is applied while the gate is held shared).
  const uint64_t last_seq = committer_.last_seq();
  Checker(base_, pool_->length(), pool_->superblock, alloc_.num_chunks(), last_seq, &report).Run();
  return report;
}

absl::StatusOr<CheckReport> Store::Check(const std::string& path) {
  // Read-only: a check leaves the pool as it found it, and a pool a crash
  // left mid-commit is checked as recovery would leave it. Shared: a pool
  // another process writes is checked at one commit (CheckNow).
  // A pool on device DAX is mapped without write permission: one left to
  // recover is opened for writing instead, and recovered in place.
  auto store = StoreImpl::OpenWith(path, Options{.read_only = true}, &internal::MakeMappingPersister);
  struct stat st;
  if (absl::IsFailedPrecondition(store.status()) && stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
    store = StoreImpl::OpenWith(path, Options{.exclusive = true}, &internal::MakeMappingPersister);
  }
  if (store.ok()) return (*store)->CheckNow();
  if (store.status().code() != absl::StatusCode::kDataLoss) return store.status();
  CheckReport report;
  report.problems.push_back(std::string(store.status().message()));
  return report;
}

}  // namespace pmstore
