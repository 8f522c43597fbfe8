// Transactions through the C names only (pmstore/c.h, "Transactions"):
// reads of their own writes, commit and rollback, conflicts, iterators,
// the end of a transaction, and the arguments a C caller can get wrong.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capi/c_api_fixture.h"
#include "capi/err_msg.h"
#include "gtest/gtest.h"
#include "pmstore/c.h"
#include "support/temp_dir.h"

namespace {

using pmstore_c_test::ValueOrCode;

class CApiTransactionTest : public pmstore_c_test::CApiFixture {
 protected:
  void SetUp() override {
    CApiFixture::SetUp();
    Open();
  }
  void Close() {
    ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
    db_ = nullptr;
  }
  pmstore_transaction_t* Begin(const pmstore_transactionoptions_t* options = nullptr) {
    pmstore_transaction_t* txn = nullptr;
    ErrMsg err;
    EXPECT_EQ(pmstore_transaction_begin(db_, options, &txn, err.out()), PMSTORE_OK) << err.str();
    return txn;
  }
};

void TxnPut(pmstore_transaction_t* txn, const std::string& key, const std::string& value) {
  ErrMsg err;
  ASSERT_EQ(pmstore_transaction_put(txn, key.data(), key.size(), value.data(), value.size(), err.out()), PMSTORE_OK)
      << err.str();
}
void TxnDelete(pmstore_transaction_t* txn, const std::string& key) {
  ErrMsg err;
  ASSERT_EQ(pmstore_transaction_delete(txn, key.data(), key.size(), err.out()), PMSTORE_OK) << err.str();
}
std::string TxnGet(pmstore_transaction_t* txn, const std::string& key) {
  char* val = nullptr;
  size_t len = 0;
  const pmstore_code_t code = pmstore_transaction_get(txn, key.data(), key.size(), &val, &len, nullptr);
  return ValueOrCode(code, val, len);
}
std::string KeyOf(const pmstore_iterator_t* iter) {
  size_t len = 0;
  const char* key = pmstore_iter_key(iter, &len);
  return std::string(key, len);
}
std::string EntryOf(const pmstore_iterator_t* iter) {
  size_t len = 0;
  const char* value = pmstore_iter_value(iter, &len);
  return KeyOf(iter) + "=" + std::string(value, len);
}
// "key=value" for every entry, first to last or last to first.
std::vector<std::string> Entries(pmstore_iterator_t* iter, bool forward) {
  std::vector<std::string> out;
  if (forward) {
    for (pmstore_iter_seek_to_first(iter); pmstore_iter_valid(iter); pmstore_iter_next(iter)) {
      out.push_back(EntryOf(iter));
    }
  } else {
    for (pmstore_iter_seek_to_last(iter); pmstore_iter_valid(iter); pmstore_iter_prev(iter)) {
      out.push_back(EntryOf(iter));
    }
  }
  EXPECT_EQ(pmstore_iter_get_error(iter, nullptr), PMSTORE_OK);
  return out;
}

TEST_F(CApiTransactionTest, ReadsItsOwnWritesWhichNothingElseSees) {
  Put("a", "store-a");
  Put("b", "store-b");
  pmstore_transaction_t* txn = Begin();
  EXPECT_EQ(TxnGet(txn, "a"), "store-a");
  TxnPut(txn, "a", "mine");
  TxnDelete(txn, "b");
  TxnPut(txn, "c", "new");
  TxnPut(txn, "empty", "");
  EXPECT_EQ(TxnGet(txn, "a"), "mine");
  EXPECT_EQ(TxnGet(txn, "b"), "<NOT_FOUND>");
  EXPECT_EQ(TxnGet(txn, "c"), "new");
  EXPECT_EQ(TxnGet(txn, "empty"), "");
  TxnPut(txn, "a", "again");
  EXPECT_EQ(TxnGet(txn, "a"), "again");
  EXPECT_EQ(pmstore_transaction_staged_writes(txn), 4u) << "a written twice counts once";
  EXPECT_EQ(Get("a"), "store-a");
  EXPECT_EQ(Get("b"), "store-b");
  EXPECT_EQ(Get("c"), "<NOT_FOUND>");
  pmstore_transaction_destroy(txn);
}

TEST_F(CApiTransactionTest, CommitMakesEveryStagedWriteVisibleAndDurable) {
  Put("a", "old");
  Put("gone", "soon");
  pmstore_transaction_t* txn = Begin();
  TxnPut(txn, "a", "new");
  TxnPut(txn, "b", "added");
  TxnDelete(txn, "gone");
  pmstore_writeoptions_t* sync = pmstore_writeoptions_create();
  pmstore_writeoptions_set_sync(sync, true);
  ErrMsg err;
  ASSERT_EQ(pmstore_transaction_commit(txn, sync, err.out()), PMSTORE_OK) << err.str();
  pmstore_writeoptions_destroy(sync);
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("a"), "new");
  EXPECT_EQ(Get("b"), "added");
  EXPECT_EQ(Get("gone"), "<NOT_FOUND>");
  Close();
  Open();
  EXPECT_EQ(Get("a"), "new");
  EXPECT_EQ(Get("b"), "added");
  EXPECT_EQ(Get("gone"), "<NOT_FOUND>");
}

TEST_F(CApiTransactionTest, RollbackAndDestroyDropStagedWrites) {
  Put("k", "kept");
  pmstore_transaction_t* txn = Begin();
  TxnPut(txn, "k", "dropped");
  TxnPut(txn, "new", "dropped");
  ErrMsg err;
  ASSERT_EQ(pmstore_transaction_rollback(txn, err.out()), PMSTORE_OK);
  EXPECT_EQ(pmstore_transaction_rollback(txn, err.out()), PMSTORE_FAILED_PRECONDITION) << "already ended";
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_FAILED_PRECONDITION);
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("k"), "kept");
  EXPECT_EQ(Get("new"), "<NOT_FOUND>");

  txn = Begin();  // destroyed without an end: rolled back
  TxnDelete(txn, "k");
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("k"), "kept");
}

TEST_F(CApiTransactionTest, WriteStagesEveryOperationOfABatchInOrder) {
  Put("old", "1");
  pmstore_writebatch_t* batch = pmstore_writebatch_create();
  pmstore_writebatch_put(batch, "a", 1, "first", 5);
  pmstore_writebatch_put(batch, "a", 1, "second", 6);
  pmstore_writebatch_delete(batch, "old", 3);
  pmstore_transaction_t* txn = Begin();
  ErrMsg err;
  ASSERT_EQ(pmstore_transaction_write(txn, batch, err.out()), PMSTORE_OK) << err.str();
  pmstore_writebatch_clear(batch);  // staged copies, not the batch's bytes
  pmstore_writebatch_destroy(batch);
  EXPECT_EQ(TxnGet(txn, "a"), "second");
  EXPECT_EQ(TxnGet(txn, "old"), "<NOT_FOUND>");
  EXPECT_EQ(Get("old"), "1");
  ASSERT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_OK) << err.str();
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("a"), "second");
  EXPECT_EQ(Get("old"), "<NOT_FOUND>");
}

TEST_F(CApiTransactionTest, CommitIsAbortedWhenAnotherCommitChangedAKeyItRead) {
  Put("k", "v1");
  pmstore_transaction_t* txn = Begin();
  EXPECT_EQ(TxnGet(txn, "k"), "v1");
  Put("k", "v2");  // another commit, after the read
  TxnPut(txn, "k", "from txn");
  TxnPut(txn, "other", "from txn");
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_ABORTED);
  EXPECT_FALSE(err.str().empty());
  EXPECT_EQ(pmstore_transaction_rollback(txn, nullptr), PMSTORE_FAILED_PRECONDITION) << "the commit ended it";
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("k"), "v2");
  EXPECT_EQ(Get("other"), "<NOT_FOUND>") << "an aborted commit writes nothing";
  EXPECT_STREQ(pmstore_code_name(PMSTORE_ABORTED), "ABORTED");
}

TEST_F(CApiTransactionTest, KeyFoundAbsentConflictsWithItsCreation) {
  pmstore_transaction_t* txn = Begin();
  EXPECT_EQ(TxnGet(txn, "k"), "<NOT_FOUND>");
  Put("k", "created");
  TxnPut(txn, "elsewhere", "x");
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, nullptr), PMSTORE_ABORTED);
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("elsewhere"), "<NOT_FOUND>");
}

TEST_F(CApiTransactionTest, KeyWrittenUnreadConflictsWithAnotherCommitOfIt) {
  pmstore_transaction_t* txn = Begin();
  TxnPut(txn, "k", "from txn");
  Put("k", "other");
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, nullptr), PMSTORE_ABORTED);
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("k"), "other");
}

TEST_F(CApiTransactionTest, CommitsOfKeysItNeitherReadNorWroteDoNotAbortIt) {
  Put("read", "1");
  pmstore_transaction_t* txn = Begin();
  EXPECT_EQ(TxnGet(txn, "read"), "1");
  TxnPut(txn, "written", "2");
  Put("unrelated", "3");
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_OK) << err.str();
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("written"), "2");
}

TEST_F(CApiTransactionTest, IteratorMergesStagedWritesWithTheStoreBothWays) {
  for (const char* key : {"a", "b", "c", "d"}) Put(key, std::string("s") + key);
  pmstore_transaction_t* txn = Begin();
  TxnPut(txn, "a", "ta");  // overwrites
  TxnPut(txn, "b2", "tb2");  // between store keys
  TxnDelete(txn, "c");
  TxnPut(txn, "e", "te");  // past the last
  pmstore_iterator_t* iter = pmstore_transaction_create_iterator(txn, nullptr);
  ASSERT_NE(iter, nullptr);
  TxnPut(txn, "b1", "late");  // staged after the iterator was made
  const std::vector<std::string> forward = {"a=ta", "b=sb", "b2=tb2", "d=sd", "e=te"};
  EXPECT_EQ(Entries(iter, true), forward);
  EXPECT_EQ(Entries(iter, false), std::vector<std::string>(forward.rbegin(), forward.rend()));
  pmstore_iter_seek(iter, "b1", 2);
  ASSERT_TRUE(pmstore_iter_valid(iter));
  EXPECT_EQ(EntryOf(iter), "b2=tb2");
  pmstore_iter_seek_for_prev(iter, "c", 1);
  ASSERT_TRUE(pmstore_iter_valid(iter));
  EXPECT_EQ(EntryOf(iter), "b2=tb2") << "c is deleted in the transaction";
  pmstore_iter_prev(iter);
  EXPECT_EQ(EntryOf(iter), "b=sb");
  pmstore_iter_next(iter);
  pmstore_iter_next(iter);
  EXPECT_EQ(EntryOf(iter), "d=sd");
  pmstore_iter_destroy(iter);

  pmstore_iteroptions_t* range = pmstore_iteroptions_create();
  pmstore_iteroptions_set_prefix(range, "b", 1);
  iter = pmstore_transaction_create_iterator(txn, range);
  EXPECT_EQ(Entries(iter, true), (std::vector<std::string>{"b=sb", "b1=late", "b2=tb2"}));
  pmstore_iter_destroy(iter);
  pmstore_iteroptions_destroy(range);
  pmstore_transaction_destroy(txn);
}

TEST_F(CApiTransactionTest, KeyAnIteratorLandedOnCountsAsReadButARangeDoesNot) {
  for (const char* key : {"a", "c"}) Put(key, "1");
  pmstore_transaction_t* txn = Begin();
  pmstore_iterator_t* iter = pmstore_transaction_create_iterator(txn, nullptr);
  EXPECT_EQ(Entries(iter, true), (std::vector<std::string>{"a=1", "c=1"}));
  pmstore_iter_destroy(iter);
  TxnPut(txn, "z", "mine");
  Put("b", "phantom");  // inside the range, between keys it landed on
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_OK) << err.str();
  pmstore_transaction_destroy(txn);

  txn = Begin();
  iter = pmstore_transaction_create_iterator(txn, nullptr);
  pmstore_iter_seek(iter, "c", 1);
  ASSERT_TRUE(pmstore_iter_valid(iter));
  pmstore_iter_destroy(iter);
  TxnPut(txn, "y", "mine");
  Put("c", "changed");
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, nullptr), PMSTORE_ABORTED);
  pmstore_transaction_destroy(txn);
  EXPECT_EQ(Get("y"), "<NOT_FOUND>");
}

TEST_F(CApiTransactionTest, CloseIsBusyWhileATransactionIsAlive) {
  pmstore_transaction_t* txn = Begin();
  pmstore_iterator_t* iter = pmstore_transaction_create_iterator(txn, nullptr);
  ErrMsg err;
  EXPECT_EQ(pmstore_close(db_, err.out()), PMSTORE_BUSY);
  EXPECT_NE(err.str().find("1 iterator(s)"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("1 transaction(s)"), std::string::npos) << err.str();
  pmstore_iter_destroy(iter);
  TxnPut(txn, "k", "v");
  ASSERT_EQ(pmstore_transaction_commit(txn, nullptr, nullptr), PMSTORE_OK);
  EXPECT_EQ(pmstore_close(db_, err.out()), PMSTORE_BUSY) << "ended, but not destroyed";
  EXPECT_NE(err.str().find("0 iterator(s)"), std::string::npos) << err.str();
  EXPECT_EQ(Get("k"), "v") << "the refused close left the store open";
  pmstore_transaction_destroy(txn);
  Close();
}

TEST_F(CApiTransactionTest, EveryCallAfterTheEndIsFailedPrecondition) {
  Put("k", "v");
  for (const bool commit : {true, false}) {
    SCOPED_TRACE(commit ? "after commit" : "after rollback");
    pmstore_transaction_t* txn = Begin();
    ErrMsg err;
    const pmstore_code_t ended =
        commit ? pmstore_transaction_commit(txn, nullptr, err.out()) : pmstore_transaction_rollback(txn, err.out());
    ASSERT_EQ(ended, PMSTORE_OK) << err.str();
    char* val = nullptr;
    size_t len = 0;
    EXPECT_EQ(pmstore_transaction_get(txn, "k", 1, &val, &len, err.out()), PMSTORE_FAILED_PRECONDITION);
    EXPECT_EQ(val, nullptr);
    EXPECT_FALSE(err.str().empty());
    EXPECT_EQ(pmstore_transaction_put(txn, "k", 1, "w", 1, nullptr), PMSTORE_FAILED_PRECONDITION);
    EXPECT_EQ(pmstore_transaction_delete(txn, "k", 1, nullptr), PMSTORE_FAILED_PRECONDITION);
    pmstore_writebatch_t* batch = pmstore_writebatch_create();
    EXPECT_EQ(pmstore_transaction_write(txn, batch, nullptr), PMSTORE_FAILED_PRECONDITION);
    pmstore_writebatch_destroy(batch);
    EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, nullptr), PMSTORE_FAILED_PRECONDITION);
    EXPECT_EQ(pmstore_transaction_rollback(txn, err.out()), PMSTORE_FAILED_PRECONDITION);
    EXPECT_NE(err.str().find("pmstore_transaction_rollback"), std::string::npos) << err.str();
    pmstore_iterator_t* iter = pmstore_transaction_create_iterator(txn, nullptr);
    ASSERT_NE(iter, nullptr);
    pmstore_iter_seek_to_first(iter);
    EXPECT_FALSE(pmstore_iter_valid(iter));
    EXPECT_EQ(pmstore_iter_get_error(iter, nullptr), PMSTORE_FAILED_PRECONDITION);
    pmstore_iter_destroy(iter);
    pmstore_transaction_destroy(txn);
  }
  EXPECT_EQ(Get("k"), "v");
}

TEST_F(CApiTransactionTest, GetOfAMissingKeyIsNotFoundWithNullValueAndAMessage) {
  pmstore_transaction_t* txn = Begin();
  char* val = reinterpret_cast<char*>(0x1);
  size_t len = 99;
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_get(txn, "nope", 4, &val, &len, err.out()), PMSTORE_NOT_FOUND);
  EXPECT_EQ(val, nullptr);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(err.str(), "key not found");
  pmstore_transaction_destroy(txn);
}

TEST_F(CApiTransactionTest, NullArgumentsAreInvalidArgumentNamingTheCall) {
  pmstore_transaction_t* txn = Begin();
  ErrMsg err;
  auto expect_bad = [&](pmstore_code_t code, const std::string& call) {
    EXPECT_EQ(code, PMSTORE_INVALID_ARGUMENT) << call;
    EXPECT_EQ(err.str().rfind(call + ": ", 0), 0u) << err.str();
  };
  pmstore_transaction_t* out = nullptr;
  char* val = nullptr;
  size_t len = 0;
  expect_bad(pmstore_transaction_begin(nullptr, nullptr, &out, err.out()), "pmstore_transaction_begin");
  EXPECT_EQ(out, nullptr);
  expect_bad(pmstore_transaction_begin(db_, nullptr, nullptr, err.out()), "pmstore_transaction_begin");
  expect_bad(pmstore_transaction_get(nullptr, "k", 1, &val, &len, err.out()), "pmstore_transaction_get");
  expect_bad(pmstore_transaction_get(txn, nullptr, 1, &val, &len, err.out()), "pmstore_transaction_get");
  expect_bad(pmstore_transaction_get(txn, "k", 1, nullptr, &len, err.out()), "pmstore_transaction_get");
  expect_bad(pmstore_transaction_get(txn, "k", 1, &val, nullptr, err.out()), "pmstore_transaction_get");
  expect_bad(pmstore_transaction_put(nullptr, "k", 1, "v", 1, err.out()), "pmstore_transaction_put");
  expect_bad(pmstore_transaction_put(txn, nullptr, 1, "v", 1, err.out()), "pmstore_transaction_put");
  expect_bad(pmstore_transaction_put(txn, "k", 1, nullptr, 1, err.out()), "pmstore_transaction_put");
  expect_bad(pmstore_transaction_delete(nullptr, "k", 1, err.out()), "pmstore_transaction_delete");
  expect_bad(pmstore_transaction_delete(txn, nullptr, 1, err.out()), "pmstore_transaction_delete");
  expect_bad(pmstore_transaction_write(nullptr, nullptr, err.out()), "pmstore_transaction_write");
  expect_bad(pmstore_transaction_write(txn, nullptr, err.out()), "pmstore_transaction_write");
  expect_bad(pmstore_transaction_commit(nullptr, nullptr, err.out()), "pmstore_transaction_commit");
  expect_bad(pmstore_transaction_rollback(nullptr, err.out()), "pmstore_transaction_rollback");
  EXPECT_EQ(pmstore_transaction_create_iterator(nullptr, nullptr), nullptr);
  EXPECT_EQ(pmstore_transaction_staged_writes(txn), 0u) << "the rejected calls staged nothing";
  // (NULL, 0) is the empty key and the empty value, as in pmstore_put.
  ASSERT_EQ(pmstore_transaction_put(txn, nullptr, 0, nullptr, 0, err.out()), PMSTORE_OK) << err.str();
  EXPECT_EQ(TxnGet(txn, ""), "");
  pmstore_transaction_destroy(txn);
  pmstore_transaction_destroy(nullptr);
  pmstore_transactionoptions_destroy(nullptr);
}

TEST_F(CApiTransactionTest, OversizedKeyIsInvalidArgumentAndStagesNothing) {
  pmstore_transaction_t* txn = Begin();
  const std::string key(PMSTORE_MAX_KEY_SIZE + 1, 'k');
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_put(txn, key.data(), key.size(), "v", 1, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_NE(err.str().find("key"), std::string::npos) << err.str();
  EXPECT_EQ(pmstore_transaction_staged_writes(txn), 0u);
  pmstore_transaction_destroy(txn);
}

TEST_F(CApiTransactionTest, BeginSequenceIsTheLastCommitAndAReadOnlyCommitChangesNothing) {
  Put("k", "v");
  const pmstore_snapshot_t* snapshot = pmstore_create_snapshot(db_);
  const uint64_t sequence = pmstore_snapshot_sequence(snapshot);
  pmstore_release_snapshot(db_, snapshot);
  pmstore_transaction_t* txn = Begin();
  EXPECT_EQ(pmstore_transaction_begin_sequence(txn), sequence);
  EXPECT_EQ(TxnGet(txn, "k"), "v");
  ErrMsg err;
  EXPECT_EQ(pmstore_transaction_commit(txn, nullptr, err.out()), PMSTORE_OK) << err.str();
  pmstore_transaction_destroy(txn);
  snapshot = pmstore_create_snapshot(db_);
  EXPECT_EQ(pmstore_snapshot_sequence(snapshot), sequence) << "no writes, no commit";
  pmstore_release_snapshot(db_, snapshot);
}

// Damage that only a verified read notices: the option reaches the
// transaction's reads.
TEST_F(CApiTransactionTest, VerifyChecksumsOptionMakesReadsReportDamage) {
  const std::string marker = "a value nothing else in the pool holds, 0123456789";
  Put("victim", marker);
  Close();
  std::ifstream in(path_, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = image.find(marker);
  ASSERT_NE(at, std::string::npos);
  const int fd = open(path_.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, "X", 1, static_cast<off_t>(at)), 1);
  close(fd);
  Open();

  pmstore_transaction_t* plain = Begin();
  EXPECT_EQ(TxnGet(plain, "victim")[0], 'X') << "unverified reads do not hash";
  pmstore_transaction_destroy(plain);
  pmstore_transactionoptions_t* verify = pmstore_transactionoptions_create();
  pmstore_transactionoptions_set_verify_checksums(verify, true);
  pmstore_transaction_t* verified = Begin(verify);
  pmstore_transactionoptions_destroy(verify);  // read at begin
  EXPECT_EQ(TxnGet(verified, "victim"), "<DATA_LOSS>");
  pmstore_transaction_destroy(verified);
}

}  // namespace
