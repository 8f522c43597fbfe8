// Transactions from the C++ API: reads see the transaction's own writes
// over the state it began from; Commit is atomic and Rollback drops; the
// conflict rule (transaction.h) aborts exactly what it says, phantoms
// aside; a write that another thread abandons conflicts with nothing; the
// iterator merges staged writes both ways against a model.
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "pmstore/transaction.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using Model = std::map<std::string, std::string>;
using testing::OpenOrDie;
using testing::SmallPool;

class StoreTransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(path_, SmallPool());
    ASSERT_NE(store_, nullptr);
  }
  std::string Value(std::string_view key) {
    std::string value;
    const absl::Status status = store_->Get(key, &value);
    return status.ok() ? value : absl::StrCat("<", absl::StatusCodeToString(status.code()), ">");
  }
  static std::string Read(Transaction& t, std::string_view key) {
    std::string value;
    const absl::Status status = t.Get(key, &value);
    return status.ok() ? value : absl::StrCat("<", absl::StatusCodeToString(status.code()), ">");
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTransactionTest, ReadsItsOwnWritesOverTheStateItBeganFrom) {
  ASSERT_TRUE(store_->Put("a", "1").ok());
  ASSERT_TRUE(store_->Put("b", "2").ok());
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("a", "10").ok());
  ASSERT_TRUE(t->Delete("b").ok());
  ASSERT_TRUE(t->Put("c", "30").ok());
  EXPECT_EQ(Read(*t, "a"), "10");
  EXPECT_EQ(Read(*t, "b"), "<NOT_FOUND>");
  EXPECT_EQ(Read(*t, "c"), "30");
  EXPECT_EQ(t->staged_writes(), 3u);
  // Nothing is visible outside before the commit.
  EXPECT_EQ(Value("a"), "1");
  EXPECT_EQ(Value("b"), "2");
  EXPECT_EQ(Value("c"), "<NOT_FOUND>");
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(Value("a"), "10");
  EXPECT_EQ(Value("b"), "<NOT_FOUND>");
  EXPECT_EQ(Value("c"), "30");
}

TEST_F(StoreTransactionTest, RollbackAndDestructionDropTheWrites) {
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("a", "1").ok());
  t->Rollback();
  EXPECT_EQ(Value("a"), "<NOT_FOUND>");
  {
    auto u = store_->BeginTransaction();
    ASSERT_TRUE(u->Put("b", "1").ok());
  }
  EXPECT_EQ(Value("b"), "<NOT_FOUND>");
}

TEST_F(StoreTransactionTest, EveryCallAfterTheEndIsFailedPrecondition) {
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("a", "1").ok());
  ASSERT_TRUE(t->Commit().ok());
  std::string value;
  EXPECT_TRUE(absl::IsFailedPrecondition(t->Get("a", &value)));
  EXPECT_TRUE(absl::IsFailedPrecondition(t->Put("a", "2")));
  EXPECT_TRUE(absl::IsFailedPrecondition(t->Delete("a")));
  EXPECT_TRUE(absl::IsFailedPrecondition(t->Commit()));
  auto it = t->NewIterator({});
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsFailedPrecondition(it->status()));
  EXPECT_EQ(Value("a"), "1");
}

TEST_F(StoreTransactionTest, AnIteratorOutlivesTheEndOfItsTransaction) {
  ASSERT_TRUE(store_->Put("a", "1").ok());
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("b", "2").ok());
  auto it = t->NewIterator({});
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(t->begin_sequence(), 1u);
  ASSERT_TRUE(store_->Delete("a").ok());
  std::string seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen += std::string(it->key()) + " ";
  EXPECT_EQ(seen, "a b ") << "what the transaction saw, its own write included";
  EXPECT_TRUE(it->status().ok()) << it->status();
}

TEST_F(StoreTransactionTest, AKeyOverTheLimitIsRefusedWhenStaged) {
  auto t = store_->BeginTransaction();
  const std::string huge(kMaxKeySize + 1, 'k');
  EXPECT_TRUE(absl::IsInvalidArgument(t->Put(huge, "v")));
  WriteBatch batch;
  batch.Put("fine", "v");
  batch.Put(huge, "v");
  EXPECT_TRUE(absl::IsInvalidArgument(t->Write(batch)));
  EXPECT_EQ(t->staged_writes(), 0u) << "a refused batch stages none of its writes";
}

TEST_F(StoreTransactionTest, AChangedReadAbortsAndWritesNothing) {
  ASSERT_TRUE(store_->Put("balance", "100").ok());
  auto t = store_->BeginTransaction();
  EXPECT_EQ(Read(*t, "balance"), "100");
  ASSERT_TRUE(t->Put("log", "read 100").ok());
  ASSERT_TRUE(store_->Put("balance", "50").ok());
  const absl::Status status = t->Commit();
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_NE(status.message().find("balance"), std::string_view::npos) << status;
  EXPECT_EQ(Value("log"), "<NOT_FOUND>");
}

TEST_F(StoreTransactionTest, AReadMissThatAnotherCommitFillsAborts) {
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(store_->Put("slot", "theirs").ok());
  // Not seen: the transaction reads the state it began from.
  EXPECT_EQ(Read(*t, "slot"), "<NOT_FOUND>");
  ASSERT_TRUE(t->Put("slot", "mine").ok());
  EXPECT_TRUE(absl::IsAborted(t->Commit()));
  EXPECT_EQ(Value("slot"), "theirs");
}

TEST_F(StoreTransactionTest, ABlindWriteToAKeyAnotherCommitChangedAborts) {
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("k", "mine").ok());
  ASSERT_TRUE(store_->Put("k", "theirs").ok());
  EXPECT_TRUE(absl::IsAborted(t->Commit()));
  EXPECT_EQ(Value("k"), "theirs");
}

TEST_F(StoreTransactionTest, WhatTheRuleDoesNotCountCommits) {
  ASSERT_TRUE(store_->Put("mine", "0").ok());
  auto t = store_->BeginTransaction();
  // A key written before it is read: the read is the transaction's own.
  ASSERT_TRUE(t->Put("own", "1").ok());
  EXPECT_EQ(Read(*t, "own"), "1");
  EXPECT_EQ(Read(*t, "mine"), "0");
  ASSERT_TRUE(t->Put("mine", "1").ok());
  // Another commit to a key the transaction never touched, and a Delete
  // of a key that was absent anyway (changes nothing).
  ASSERT_TRUE(store_->Put("other", "x").ok());
  ASSERT_TRUE(store_->Delete("absent").ok());
  EXPECT_EQ(Read(*t, "absent"), "<NOT_FOUND>");
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(Value("mine"), "1");
}

TEST_F(StoreTransactionTest, NoWriteSkew) {
  // Two doctors on call, at least one must stay (the classic write skew,
  // which snapshot isolation allows): each transaction reads both and
  // takes one off only if the other is still on.
  ASSERT_TRUE(store_->Put("alice", "on").ok());
  ASSERT_TRUE(store_->Put("bob", "on").ok());
  auto t1 = store_->BeginTransaction();
  auto t2 = store_->BeginTransaction();
  ASSERT_EQ(Read(*t1, "alice") + Read(*t1, "bob"), "onon");
  ASSERT_EQ(Read(*t2, "alice") + Read(*t2, "bob"), "onon");
  ASSERT_TRUE(t1->Put("alice", "off").ok());
  ASSERT_TRUE(t2->Put("bob", "off").ok());
  ASSERT_TRUE(t1->Commit().ok());
  EXPECT_TRUE(absl::IsAborted(t2->Commit()));
  EXPECT_EQ(Value("alice") + Value("bob"), "offon");
}

TEST_F(StoreTransactionTest, AnIteratorsRangeIsNotARead_ItsKeysAre) {
  for (const char* key : {"r/1", "r/3", "r/5"}) ASSERT_TRUE(store_->Put(key, "v").ok());
  auto t = store_->BeginTransaction();
  std::string seen;
  auto it = t->NewIterator({.prefix = "r/"});
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen += std::string(it->key()) + " ";
  EXPECT_EQ(seen, "r/1 r/3 r/5 ");
  ASSERT_TRUE(t->Put("count", "3").ok());
  // A phantom: a new key inside the range, between keys the iterator saw.
  ASSERT_TRUE(store_->Put("r/2", "v").ok());
  EXPECT_TRUE(t->Commit().ok()) << "phantoms do not count, as transaction.h says";

  auto u = store_->BeginTransaction();
  auto it2 = u->NewIterator({.prefix = "r/"});
  it2->SeekToLast();
  ASSERT_TRUE(it2->Valid());
  EXPECT_EQ(it2->key(), "r/5");
  ASSERT_TRUE(u->Put("count", "4").ok());
  ASSERT_TRUE(store_->Put("r/5", "changed").ok());  // a key it landed on
  EXPECT_TRUE(absl::IsAborted(u->Commit()));
}

TEST_F(StoreTransactionTest, AWriteAnotherThreadAbandonedIsNoConflict) {
  // A pool that may not grow: a batch too large for it fails after its
  // first key was staged, and leaves nothing behind, in the overlays too.
  store_.reset();
  store_ = OpenOrDie(dir_.File("full"), SmallPool(8ull << 20, 8ull << 20));
  ASSERT_TRUE(store_->Put("k", "0").ok());
  auto t = store_->BeginTransaction();
  EXPECT_EQ(Read(*t, "k"), "0");
  ASSERT_TRUE(t->Put("k", "1").ok());
  WriteBatch too_large;
  too_large.Put("k", "abandoned");
  too_large.Put("big", std::string(16ull << 20, 'x'));
  ASSERT_TRUE(absl::IsResourceExhausted(store_->Write(too_large)));
  EXPECT_TRUE(t->Commit().ok());
  EXPECT_EQ(Value("k"), "1");
}

TEST_F(StoreTransactionTest, AReadOnlyTransactionCommits) {
  ASSERT_TRUE(store_->Put("k", "0").ok());
  auto t = store_->BeginTransaction();
  EXPECT_EQ(Read(*t, "k"), "0");
  ASSERT_TRUE(store_->Put("k", "1").ok());
  EXPECT_TRUE(t->Commit().ok()) << "its reads came from one snapshot";
}

TEST_F(StoreTransactionTest, CommitsAfterCloseFail) {
  auto t = store_->BeginTransaction();
  ASSERT_TRUE(t->Put("k", "v").ok());
  t.reset();
  auto u = store_->BeginTransaction();
  ASSERT_TRUE(u->Put("k", "v").ok());
  u->Rollback();
  u.reset();
  ASSERT_TRUE(store_->Close().ok());
  auto late = store_->BeginTransaction();
  ASSERT_TRUE(late->Put("k", "v").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(late->Commit()));
}

// The iterator against a model of store contents with staged writes laid
// over them, walking both ways and turning at random points.
TEST_F(StoreTransactionTest, IteratorMergesStagedWritesBothWays) {
  std::mt19937_64 rng(7);
  Model model;
  const auto key_of = [](uint64_t i) { return absl::StrCat("k", i % 10, "/", i); };
  for (int i = 0; i < 300; ++i) {
    const std::string key = key_of(rng() % 400);
    ASSERT_TRUE(store_->Put(key, "stored").ok());
    model[key] = "stored";
  }
  auto t = store_->BeginTransaction();
  for (int i = 0; i < 150; ++i) {
    const std::string key = key_of(rng() % 400);
    if (rng() % 3 == 0) {
      ASSERT_TRUE(t->Delete(key).ok());
      model.erase(key);
    } else {
      ASSERT_TRUE(t->Put(key, absl::StrCat("staged", i)).ok());
      model[key] = absl::StrCat("staged", i);
    }
  }
  for (const IterateOptions& range :
       {IterateOptions{}, IterateOptions{.prefix = "k3/"}, IterateOptions{.lower_bound = "k2", .upper_bound = "k6/2"}}) {
    Model in_range;
    for (const auto& [key, value] : model) {
      if (key.starts_with(range.prefix) && key >= range.lower_bound &&
          (range.upper_bound.empty() || key < range.upper_bound)) {
        in_range.emplace(key, value);
      }
    }
    auto it = t->NewIterator(range);
    for (int walk = 0; walk < 40; ++walk) {
      const std::string target = key_of(rng() % 400);
      auto at = in_range.end();
      const bool forward = rng() % 2 == 0;
      if (forward) {
        it->Seek(target);
        at = in_range.lower_bound(target);
      } else {
        it->SeekForPrev(target);
        at = in_range.upper_bound(target);
        at = at == in_range.begin() ? in_range.end() : std::prev(at);
      }
      for (int step = 0; step < 30; ++step) {
        ASSERT_EQ(it->Valid(), at != in_range.end()) << "walk " << walk << " step " << step;
        if (at == in_range.end()) break;
        ASSERT_EQ(it->key(), at->first);
        ASSERT_EQ(it->value(), at->second);
        if (rng() % 2 == 0) {
          it->Next();
          ++at;
        } else {
          it->Prev();
          at = at == in_range.begin() ? in_range.end() : std::prev(at);
        }
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
  }
  // Unchanged by the walks: an iterator reads, it does not stage.
  ASSERT_TRUE(t->Commit().ok());
  Model stored;
  auto it = store_->NewIterator({}, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) stored.emplace(it->key(), it->value());
  EXPECT_EQ(stored, model);
}

}  // namespace
}  // namespace pmstore
