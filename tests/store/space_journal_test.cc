// Two writers' views of one pool's space, as two processes that take
// turns writing keep them (space/space_journal.h): each commit's journal
// goes through the codec to the other, which follows it before its own
// transaction. The pool is memory; a commit applies its logged words.
// What must hold: no writer hands out space that a live piece or a pinned
// reader may still read, whoever freed it; and both views agree with the
// pool once the quarantines let go.
#include "pmstore/space/space_journal.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/space/allocator.h"
#include "store/memory_pool.h"

namespace pmstore::internal {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMaxChunks = 64;

struct Writer {
  std::unique_ptr<Transaction> tx;
  std::unique_ptr<SpaceAllocator> alloc;
  size_t followed = 0;  // commits of the ring followed (or made) so far
};

// A piece of space a transaction took: what readers of the commits from
// `born` up to (not including) `died` may read.
struct Piece {
  uint64_t offset;
  uint64_t bytes;
  bool value;  // AllocValue's (else AllocUnits')
  uint64_t born;
  uint64_t died = UINT64_MAX;
};

class SpaceJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (Writer& w : writers_) {
      w.tx = std::make_unique<Transaction>(pool_.base());
      w.alloc = std::make_unique<SpaceAllocator>(pool_.base(), sb_, [this](uint64_t want) -> absl::StatusOr<uint64_t> {
        chunks_ = std::max(chunks_, std::min(want, kMaxChunks));
        return chunks_;
      });
      w.alloc->Load(chunks_);
    }
  }

  // The turn passes to `w`: it follows every commit of the other writer
  // it has not, in order, each journal cut into small parts.
  void Follow(Writer& w) {
    for (; w.followed < ring_.size(); ++w.followed) {
      const Published& commit = ring_[w.followed];
      if (commit.writer == &w) continue;
      for (const std::string& part : commit.parts) {
        absl::StatusOr<SpaceJournal> journal = DecodeSpaceJournal(part);
        ASSERT_TRUE(journal.ok()) << journal.status();
        w.alloc->FollowCommit(commit.seq, *journal);
      }
    }
  }
  // What no pin reads any more becomes reusable in `w`'s view.
  void Release(Writer& w) { w.alloc->ReleaseThrough(pins_.empty() ? seq_ : *pins_.begin()); }
  void Commit(Writer& w) {
    pool_.Apply(*w.tx);
    ++seq_;
    ring_.push_back({seq_, &w, EncodeSpaceJournal(w.alloc->journal(), 200)});
    w.alloc->Committed(seq_);
    w.followed = ring_.size();
  }
  // Whether [offset, offset + bytes) meets a piece that a live key or a
  // pin still reads.
  const Piece* Readable(uint64_t offset, uint64_t bytes) const {
    for (const Piece& piece : pieces_) {
      if (offset >= piece.offset + piece.bytes || piece.offset >= offset + bytes) continue;
      if (piece.died == UINT64_MAX) return &piece;
      for (const uint64_t pin : pins_) {
        if (piece.born <= pin && pin < piece.died) return &piece;
      }
    }
    return nullptr;
  }
  // Allocates in `w`'s open transaction (to be committed as seq_ + 1),
  // and checks that nobody may still read what it got.
  void Take(Writer& w, uint64_t bytes, bool value) {
    absl::StatusOr<uint64_t> offset =
        value ? w.alloc->AllocValue(*w.tx, bytes) : w.alloc->AllocUnits(*w.tx, UnitsFor(bytes));
    ASSERT_TRUE(offset.ok()) << offset.status();
    const Piece* clash = Readable(*offset, bytes);
    ASSERT_EQ(clash, nullptr) << "writer " << (&w - writers_) << " took " << *offset << " (+" << bytes << ") in commit "
                              << seq_ + 1 << " over " << clash->offset << " (+" << clash->bytes << ") born at "
                              << clash->born << ", died at " << clash->died << ", oldest pin "
                              << (pins_.empty() ? -1 : static_cast<int64_t>(*pins_.begin()));
    pieces_.push_back({*offset, bytes, value, seq_ + 1});
  }
  void Drop(Writer& w, Piece& piece) {
    if (piece.value) {
      w.alloc->FreeValue(*w.tx, piece.offset, piece.bytes);
    } else {
      w.alloc->FreeUnits(*w.tx, piece.offset, UnitsFor(piece.bytes));
    }
    piece.died = seq_ + 1;
  }
  struct Published {
    uint64_t seq;
    const Writer* writer;
    std::vector<std::string> parts;
  };
  MemoryPool pool_{kFormatVersion, kMaxChunks};
  const Superblock& sb_ = pool_.sb;
  uint64_t chunks_ = 2;  // the pool's chunks, as its file holds them
  Writer writers_[2];
  std::vector<Published> ring_;
  uint64_t seq_ = 0;
  std::vector<Piece> pieces_;
  std::multiset<uint64_t> pins_;  // commits pinned by readers
};

TEST_F(SpaceJournalTest, WritersTakingTurnsNeverHandOutSpaceThatAPinOrALiveKeyStillReads) {
  std::mt19937_64 rng(20261207);
  for (int turn = 0; turn < 3000; ++turn) {
    Writer& w = writers_[rng() % 2];
    Follow(w);
    Release(w);
    const int ops = 1 + static_cast<int>(rng() % 8);
    for (int op = 0; op < ops; ++op) {
      const uint64_t dice = rng() % 100;
      std::vector<Piece*> live;
      for (Piece& piece : pieces_) {
        if (piece.died == UINT64_MAX) live.push_back(&piece);
      }
      if (dice < 45 || live.empty()) {
        ASSERT_NO_FATAL_FAILURE(Take(w, 64 * (1 + rng() % 20), false));
      } else if (dice < 48 && live.size() < 400) {
        const uint64_t sizes[] = {kMiB, 3 * kMiB / 2, 2 * kMiB + kMiB / 10, 2 * kChunkSize};
        ASSERT_NO_FATAL_FAILURE(Take(w, sizes[rng() % 4], true));
      } else if (dice < 95) {
        Drop(w, *live[rng() % live.size()]);
      } else {
        w.alloc->FreeEmptySmallChunks(*w.tx);
      }
    }
    Commit(w);
    if (rng() % 4 == 0) pins_.insert(seq_);
    if (!pins_.empty() && rng() % 3 == 0) pins_.erase(std::next(pins_.begin(), rng() % pins_.size()));
    // A piece freed no later than the oldest pin is read by no pin, now or
    // later (a new pin is at the newest commit).
    const uint64_t oldest = pins_.empty() ? seq_ : *pins_.begin();
    std::erase_if(pieces_, [&](const Piece& p) { return p.died <= oldest; });
  }

  // Once nobody pins anything, both views are the pool's own.
  pins_.clear();
  SpaceAllocator fresh(pool_.base(), sb_, [this](uint64_t) -> absl::StatusOr<uint64_t> { return chunks_; });
  fresh.Load(chunks_);
  const SpaceUsage pool = fresh.Usage();
  for (Writer& w : writers_) {
    Follow(w);
    Release(w);
    const SpaceUsage view = w.alloc->Usage();
    EXPECT_EQ(view.live_bytes, pool.live_bytes) << "writer " << (&w - writers_);
    EXPECT_EQ(view.free_bytes, pool.free_bytes) << "writer " << (&w - writers_);
    EXPECT_EQ(w.alloc->quarantined(), 0u);
  }
}

TEST_F(SpaceJournalTest, ReleasingWhatAnotherWriterTookSinceLeavesItTaken) {
  Writer& a = writers_[0];
  Writer& b = writers_[1];
  ASSERT_NO_FATAL_FAILURE(Take(a, 4 * 64, false));
  Commit(a);
  const uint64_t x = pieces_.back().offset;
  Drop(a, pieces_.back());
  Commit(a);
  // B sees no pin on the commit before the free and reuses the units
  // first; A still holds them in its quarantine.
  Follow(b);
  Release(b);
  bool taken = false;
  for (int i = 0; i < 20000 && !taken; ++i) {
    ASSERT_NO_FATAL_FAILURE(Take(b, 4 * 64, false));
    taken = pieces_.back().offset == x;
  }
  ASSERT_TRUE(taken) << "B never reused the units A freed";
  Commit(b);
  // A follows B and then releases its own hold on them: they stay B's.
  Follow(a);
  Release(a);
  for (int i = 0; i < 20000; ++i) {
    absl::StatusOr<uint64_t> offset = a.alloc->AllocUnits(*a.tx, 4);
    if (!offset.ok()) break;  // the pool is full: fine, A never took them
    ASSERT_NE(*offset, x) << "A took units that B holds, after " << i << " allocations";
  }
}

TEST_F(SpaceJournalTest, AViewThatLostTrackHoldsEveryFreePieceUntilThePinsPassTheCommitsItMissed) {
  Writer& a = writers_[0];
  Writer& b = writers_[1];
  for (int i = 0; i < 50; ++i) ASSERT_NO_FATAL_FAILURE(Take(a, 64 * (1 + i % 7), false));
  ASSERT_NO_FATAL_FAILURE(Take(a, kMiB, true));
  Commit(a);
  Follow(b);
  pins_.insert(seq_);  // a reader reads everything A has taken
  for (Piece& piece : pieces_) Drop(a, piece);
  a.alloc->HoldCell(pieces_.front().offset, 3);
  Commit(a);
  // B misses that commit's journal (as when the ring overran).
  b.followed = ring_.size();
  b.alloc->LoseTrack(seq_, chunks_);
  EXPECT_EQ(b.alloc->HeldCells(12345 * 64), ~uint64_t{0});
  const uint64_t chunks_before = chunks_;
  for (int i = 0; i < 20; ++i) ASSERT_NO_FATAL_FAILURE(Take(b, 64 * (1 + i % 7), false));
  ASSERT_NO_FATAL_FAILURE(Take(b, kMiB, true));
  EXPECT_GT(chunks_, chunks_before) << "B could only grow the pool";
  Commit(b);

  // The reader is gone: B gets the space A freed back, and its cells.
  SpaceAllocator fresh(pool_.base(), sb_, [this](uint64_t) -> absl::StatusOr<uint64_t> { return chunks_; });
  fresh.Load(chunks_);
  EXPECT_LT(b.alloc->Usage().free_bytes, fresh.Usage().free_bytes);
  pins_.clear();
  Release(b);
  EXPECT_EQ(b.alloc->HeldCells(12345 * 64), 0u);
  EXPECT_EQ(b.alloc->Usage().free_bytes, fresh.Usage().free_bytes);
  EXPECT_EQ(b.alloc->Usage().live_bytes, fresh.Usage().live_bytes);
}

TEST_F(SpaceJournalTest, AFollowedFreeOfACellHoldsItUntilReleased) {
  Writer& a = writers_[0];
  Writer& b = writers_[1];
  const uint64_t leaf = sb_.heap_offset + 64 * 64;
  a.alloc->HoldCell(leaf, 5);
  Commit(a);
  pins_.insert(seq_ - 1);
  Follow(b);
  Release(b);
  EXPECT_EQ(b.alloc->HeldCells(leaf), 1u << 5);
  pins_.clear();
  Release(b);
  EXPECT_EQ(b.alloc->HeldCells(leaf), 0u);
}

TEST(SpaceJournalCodecTest, PartsCarryEveryEntryAndDamageIsDataLoss) {
  SpaceJournal journal;
  journal.num_chunks = 77;
  journal.released_through = 41;
  for (uint64_t i = 0; i < 100; ++i) {
    journal.chunk_words.push_back(i);
    journal.taken.push_back({i * 64, i % 9 + 1});
    journal.freed.push_back({static_cast<Quarantine::Kind>(i % 4), i * 128, i});
  }
  const std::vector<std::string> parts = EncodeSpaceJournal(journal, 300);
  EXPECT_GT(parts.size(), 10u);
  SpaceJournal joined;
  for (const std::string& part : parts) {
    EXPECT_LE(part.size(), 300u);
    absl::StatusOr<SpaceJournal> one = DecodeSpaceJournal(part);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(one->num_chunks, 77u);
    EXPECT_EQ(one->released_through, 41u);
    joined.chunk_words.insert(joined.chunk_words.end(), one->chunk_words.begin(), one->chunk_words.end());
    joined.taken.insert(joined.taken.end(), one->taken.begin(), one->taken.end());
    joined.freed.insert(joined.freed.end(), one->freed.begin(), one->freed.end());
  }
  EXPECT_EQ(joined.chunk_words, journal.chunk_words);
  ASSERT_EQ(joined.taken.size(), journal.taken.size());
  ASSERT_EQ(joined.freed.size(), journal.freed.size());
  for (size_t i = 0; i < journal.freed.size(); ++i) {
    EXPECT_EQ(joined.taken[i].offset, journal.taken[i].offset);
    EXPECT_EQ(joined.taken[i].units, journal.taken[i].units);
    EXPECT_EQ(joined.freed[i].kind, journal.freed[i].kind);
    EXPECT_EQ(joined.freed[i].offset, journal.freed[i].offset);
    EXPECT_EQ(joined.freed[i].count, journal.freed[i].count);
  }
  EXPECT_EQ(EncodeSpaceJournal(SpaceJournal{}, 300).size(), 1u);

  std::string cut = parts[0];
  cut.pop_back();
  EXPECT_TRUE(absl::IsDataLoss(DecodeSpaceJournal(cut).status()));
  std::string bad_kind =
      EncodeSpaceJournal(SpaceJournal{.num_chunks = 1, .freed = {{Quarantine::Kind::kUnits, 0, 1}}}, 300)[0];
  bad_kind[28] = 9;  // the first freed entry's kind, after the 28-byte header
  EXPECT_TRUE(absl::IsDataLoss(DecodeSpaceJournal(bad_kind).status()));
}

}  // namespace
}  // namespace pmstore::internal
