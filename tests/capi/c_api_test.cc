// The C API (pmstore/c.h), every call, through the C names only: results,
// codes, messages, and the arguments a C caller can get wrong.
#include "pmstore/c.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capi/c_api_c99.h"
#include "capi/c_api_fixture.h"
#include "capi/err_msg.h"
#include "gtest/gtest.h"
#include "support/temp_dir.h"

namespace {

class CApiTest : public pmstore_c_test::CApiFixture {
 protected:
  void Reopen() {
    ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
    db_ = nullptr;
    Open();
  }
  std::vector<std::string> Keys(const pmstore_iteroptions_t* range, const char* seek = nullptr) {
    pmstore_iterator_t* iter = pmstore_create_iterator(db_, nullptr, range);
    std::vector<std::string> keys;
    if (seek == nullptr) {
      pmstore_iter_seek_to_first(iter);
    } else {
      pmstore_iter_seek(iter, seek, std::strlen(seek));
    }
    for (; pmstore_iter_valid(iter); pmstore_iter_next(iter)) {
      size_t len = 0;
      const char* key = pmstore_iter_key(iter, &len);
      keys.emplace_back(key, len);
    }
    EXPECT_EQ(pmstore_iter_get_error(iter, nullptr), PMSTORE_OK);
    pmstore_iter_destroy(iter);
    return keys;
  }
  void WriteFile(const std::string& bytes) { std::ofstream(path_, std::ios::binary) << bytes; }
};

TEST_F(CApiTest, MissingPoolIsNotFoundAndLeavesTheOutputAlone) {
  pmstore_options_set_create_if_missing(options_, false);
  pmstore_t* db = reinterpret_cast<pmstore_t*>(0x1);
  ErrMsg err;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db, err.out()), PMSTORE_NOT_FOUND);
  EXPECT_EQ(db, reinterpret_cast<pmstore_t*>(0x1));
  EXPECT_NE(err.str().find(path_), std::string::npos) << err.str();
  EXPECT_EQ(pmstore_open(nullptr, path_.c_str(), &db, nullptr), PMSTORE_NOT_FOUND) << "NULL options: defaults";
}

TEST_F(CApiTest, ErrorIfExistsRefusesAnExistingPool) {
  Open();
  ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
  db_ = nullptr;
  pmstore_options_set_error_if_exists(options_, true);
  ErrMsg err;
  pmstore_t* db = nullptr;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db, err.out()), PMSTORE_ALREADY_EXISTS);
  EXPECT_NE(err.str().find("already exists"), std::string::npos) << err.str();
}

TEST_F(CApiTest, FileThatIsNotAPoolIsInvalidArgument) {
  WriteFile(std::string(1 << 20, 'x'));
  ErrMsg err;
  pmstore_t* db = nullptr;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_NE(err.str().find("not a pmstore pool"), std::string::npos) << err.str();
  pmstore_checkreport_t* report = nullptr;
  EXPECT_EQ(pmstore_check_path(path_.c_str(), &report, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(report, nullptr);
}

TEST_F(CApiTest, PoolInUseByAnotherProcessIsFailedPreconditionNamingIt) {
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  if (child == 0) {  // holds the pool open until the parent has tried
    pmstore_t* db = nullptr;
    const char status = pmstore_open(options_, path_.c_str(), &db, nullptr) == PMSTORE_OK ? 'y' : 'n';
    (void)!write(ready[1], &status, 1);
    char byte;
    (void)!read(done[0], &byte, 1);
    pmstore_close(db, nullptr);
    _exit(0);
  }
  char status = 0;
  ASSERT_EQ(read(ready[0], &status, 1), 1);
  ASSERT_EQ(status, 'y');
  ErrMsg err;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db_, err.out()), PMSTORE_FAILED_PRECONDITION);
  EXPECT_NE(err.str().find("in use by process " + std::to_string(child)), std::string::npos) << err.str();
  // A check shares the pool with the writer (it checks its newest commit).
  pmstore_checkreport_t* report = nullptr;
  ASSERT_EQ(pmstore_check_path(path_.c_str(), &report, nullptr), PMSTORE_OK);
  EXPECT_TRUE(pmstore_checkreport_clean(report));
  pmstore_checkreport_destroy(report);
  (void)!write(done[1], "x", 1);
  waitpid(child, nullptr, 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
  db_ = nullptr;
  Open();  // free again once the other process closed it
}

TEST_F(CApiTest, PutGetDeleteRoundTripBinaryKeysAndEmptyValues) {
  Open();
  const std::string binary_key("k\0\xff", 3), binary_value("v\0\n\\", 4);
  Put(binary_key, binary_value);
  Put("empty", "");
  Put("", "empty key");
  EXPECT_EQ(Get(binary_key), binary_value);
  EXPECT_EQ(Get("empty"), "");
  EXPECT_EQ(Get(""), "empty key");
  ErrMsg err;
  ASSERT_EQ(pmstore_delete(db_, nullptr, binary_key.data(), binary_key.size(), err.out()), PMSTORE_OK);
  EXPECT_EQ(pmstore_delete(db_, nullptr, "never", 5, err.out()), PMSTORE_OK) << "absent is fine";
  EXPECT_EQ(Get(binary_key), "<NOT_FOUND>");
  Reopen();
  EXPECT_EQ(Get("empty"), "");
  EXPECT_EQ(Get(binary_key), "<NOT_FOUND>");
}

TEST_F(CApiTest, GetOfAMissingKeyIsNotFoundWithNullValueAndAMessage) {
  Open();
  char* val = reinterpret_cast<char*>(0x1);
  size_t len = 99;
  ErrMsg err;
  err.text = static_cast<char*>(std::malloc(8));  // an old message is freed, not leaked (ASan)
  EXPECT_EQ(pmstore_get(db_, nullptr, "nope", 4, &val, &len, err.out()), PMSTORE_NOT_FOUND);
  EXPECT_EQ(val, nullptr);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(err.str(), "key not found");
  pmstore_pinnedvalue_t* pinned = reinterpret_cast<pmstore_pinnedvalue_t*>(0x1);
  EXPECT_EQ(pmstore_get_pinned(db_, nullptr, "nope", 4, &pinned, err.out()), PMSTORE_NOT_FOUND);
  EXPECT_EQ(pinned, nullptr);
}

TEST_F(CApiTest, SuccessLeavesTheMessageAlone) {
  Open();
  ErrMsg err;
  EXPECT_EQ(pmstore_get(db_, nullptr, "nope", 4, nullptr, nullptr, err.out()), PMSTORE_INVALID_ARGUMENT);
  const std::string before = err.str();
  Put("k", "v");
  EXPECT_EQ(pmstore_put(db_, nullptr, "k", 1, "w", 1, err.out()), PMSTORE_OK);
  EXPECT_EQ(err.str(), before);
}

// What pmstore_multiget returns for `keys`, per key: the value, or
// "<CODE>", as Get() above spells it.
std::vector<std::string> MultiGet(pmstore_t* db, const std::vector<std::string>& keys,
                                  const pmstore_readoptions_t* options = nullptr) {
  std::vector<const char*> data;
  std::vector<size_t> lens;
  for (const std::string& key : keys) {
    data.push_back(key.data());
    lens.push_back(key.size());
  }
  std::vector<char*> vals(keys.size(), reinterpret_cast<char*>(0x1));
  std::vector<size_t> vallens(keys.size(), 99);
  std::vector<pmstore_code_t> codes(keys.size(), PMSTORE_INTERNAL);
  ErrMsg err;
  EXPECT_EQ(pmstore_multiget(db, options, keys.size(), data.data(), lens.data(), vals.data(), vallens.data(),
                             codes.data(), err.out()),
            PMSTORE_OK)
      << err.str();
  std::vector<std::string> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (codes[i] == PMSTORE_OK) {
      out.push_back(vals[i] == nullptr ? "" : std::string(vals[i], vallens[i]));
    } else {
      EXPECT_EQ(vals[i], nullptr);
      EXPECT_EQ(vallens[i], 0u);
      out.push_back(std::string("<") + pmstore_code_name(codes[i]) + ">");
    }
    pmstore_free(vals[i]);
  }
  return out;
}

TEST_F(CApiTest, MultigetEqualsGetKeyByKey) {
  Open();
  std::vector<std::string> keys = {"", "a", "missing", "a", std::string("bin\0ary", 7)};
  Put("a", "1");
  Put(keys[4], std::string(3000, 'z'));
  Put("empty value", "");
  keys.push_back("empty value");
  for (int i = 0; i < 50; ++i) {  // a batch longer than an internal chunk
    Put("k" + std::to_string(i), "v" + std::to_string(i));
    keys.push_back("k" + std::to_string(i * 3));  // two thirds never written
  }
  const std::vector<std::string> got = MultiGet(db_, keys);
  ASSERT_EQ(got.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(got[i], Get(keys[i])) << keys[i];
  EXPECT_EQ(got[0], "<NOT_FOUND>");
  EXPECT_EQ(got[3], "1");
  EXPECT_EQ(MultiGet(db_, {}), std::vector<std::string>());
  pmstore_readoptions_t* verify = pmstore_readoptions_create();
  pmstore_readoptions_set_verify_checksums(verify, true);
  EXPECT_EQ(MultiGet(db_, keys, verify), got);
  pmstore_readoptions_destroy(verify);
}

TEST_F(CApiTest, MultigetWithBadArgumentsWritesNothing) {
  Open();
  ErrMsg err;
  const char* keys[2] = {"a", nullptr};
  size_t lens[2] = {1, 1};
  char* vals[2] = {nullptr, nullptr};
  size_t vallens[2] = {7, 7};
  pmstore_code_t codes[2] = {PMSTORE_INTERNAL, PMSTORE_INTERNAL};
  EXPECT_EQ(pmstore_multiget(db_, nullptr, 2, keys, lens, vals, vallens, codes, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(err.str(), "pmstore_multiget: keys[1] is NULL but keylens[1] is not 0");
  EXPECT_EQ(codes[0], PMSTORE_INTERNAL);
  EXPECT_EQ(vallens[0], 7u);
  EXPECT_EQ(pmstore_multiget(nullptr, nullptr, 1, keys, lens, vals, vallens, codes, err.out()),
            PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pmstore_multiget(db_, nullptr, 1, nullptr, lens, vals, vallens, codes, err.out()),
            PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pmstore_multiget(db_, nullptr, 1, keys, lens, vals, vallens, nullptr, err.out()),
            PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(err.str(), "pmstore_multiget: vals, vallens or codes (the outputs) is NULL");
  // No keys: nothing to read or write, NULL arrays are fine.
  EXPECT_EQ(pmstore_multiget(db_, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr, err.out()), PMSTORE_OK);
}

TEST_F(CApiTest, ContainsReportsPresence) {
  Open();
  Put("here", "1");
  bool found = false;
  ASSERT_EQ(pmstore_contains(db_, "here", 4, &found, nullptr), PMSTORE_OK);
  EXPECT_TRUE(found);
  ASSERT_EQ(pmstore_contains(db_, "gone", 4, &found, nullptr), PMSTORE_OK);
  EXPECT_FALSE(found);
}

TEST_F(CApiTest, NullArgumentsAreInvalidArgumentNamingTheCall) {
  Open();
  ErrMsg err;
  auto expect_bad = [&](pmstore_code_t code, const std::string& call) {
    EXPECT_EQ(code, PMSTORE_INVALID_ARGUMENT) << call;
    EXPECT_EQ(err.str().rfind(call + ": ", 0), 0u) << err.str();
  };
  char* val = nullptr;
  size_t len = 0;
  bool found = false;
  pmstore_pinnedvalue_t* pinned = nullptr;
  pmstore_checkreport_t* report = nullptr;
  pmstore_t* db = nullptr;
  expect_bad(pmstore_open(options_, nullptr, &db, err.out()), "pmstore_open");
  expect_bad(pmstore_open(options_, path_.c_str(), nullptr, err.out()), "pmstore_open");
  expect_bad(pmstore_put(nullptr, nullptr, "k", 1, "v", 1, err.out()), "pmstore_put");
  expect_bad(pmstore_put(db_, nullptr, nullptr, 1, "v", 1, err.out()), "pmstore_put");
  expect_bad(pmstore_put(db_, nullptr, "k", 1, nullptr, 1, err.out()), "pmstore_put");
  expect_bad(pmstore_delete(nullptr, nullptr, "k", 1, err.out()), "pmstore_delete");
  expect_bad(pmstore_delete(db_, nullptr, nullptr, 2, err.out()), "pmstore_delete");
  expect_bad(pmstore_write(nullptr, nullptr, nullptr, err.out()), "pmstore_write");
  expect_bad(pmstore_write(db_, nullptr, nullptr, err.out()), "pmstore_write");
  expect_bad(pmstore_sync(nullptr, err.out()), "pmstore_sync");
  expect_bad(pmstore_get(nullptr, nullptr, "k", 1, &val, &len, err.out()), "pmstore_get");
  expect_bad(pmstore_get(db_, nullptr, nullptr, 1, &val, &len, err.out()), "pmstore_get");
  expect_bad(pmstore_get(db_, nullptr, "k", 1, &val, nullptr, err.out()), "pmstore_get");
  expect_bad(pmstore_contains(nullptr, "k", 1, &found, err.out()), "pmstore_contains");
  expect_bad(pmstore_contains(db_, "k", 1, nullptr, err.out()), "pmstore_contains");
  expect_bad(pmstore_get_pinned(nullptr, nullptr, "k", 1, &pinned, err.out()), "pmstore_get_pinned");
  expect_bad(pmstore_get_pinned(db_, nullptr, "k", 1, nullptr, err.out()), "pmstore_get_pinned");
  expect_bad(pmstore_check_path(nullptr, &report, err.out()), "pmstore_check_path");
  expect_bad(pmstore_check_path(path_.c_str(), nullptr, err.out()), "pmstore_check_path");
  expect_bad(pmstore_check(nullptr, &report, err.out()), "pmstore_check");
  expect_bad(pmstore_check(db_, nullptr, err.out()), "pmstore_check");
  expect_bad(pmstore_iter_get_error(nullptr, err.out()), "pmstore_iter_get_error");
  EXPECT_EQ(pmstore_create_iterator(nullptr, nullptr, nullptr), nullptr);
  EXPECT_EQ(pmstore_get_stats(nullptr), nullptr);
  EXPECT_EQ(pmstore_close(nullptr, err.out()), PMSTORE_OK);
  // Destroying NULL is a no-op, as free(NULL) is.
  pmstore_iter_destroy(nullptr);
  pmstore_pinnedvalue_destroy(nullptr);
  pmstore_options_destroy(nullptr);
  pmstore_writebatch_destroy(nullptr);
  pmstore_stats_destroy(nullptr);
  pmstore_checkreport_destroy(nullptr);
}

TEST_F(CApiTest, OversizedKeyIsInvalidArgument) {
  Open();
  const std::string key(PMSTORE_MAX_KEY_SIZE + 1, 'k');
  ErrMsg err;
  EXPECT_EQ(pmstore_put(db_, nullptr, key.data(), key.size(), "v", 1, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_NE(err.str().find("key"), std::string::npos) << err.str();
  const std::string largest(PMSTORE_MAX_KEY_SIZE, 'k');
  Put(largest, "fits");
  EXPECT_EQ(Get(largest), "fits");
}

TEST_F(CApiTest, WriteBatchAppliesEveryOperationInOrderAsOneCommit) {
  Open();
  Put("old", "1");
  pmstore_writebatch_t* batch = pmstore_writebatch_create();
  pmstore_writebatch_put(batch, "a", 1, "first", 5);
  pmstore_writebatch_put(batch, "b", 1, "2", 1);
  pmstore_writebatch_put(batch, "a", 1, "second", 6);
  pmstore_writebatch_delete(batch, "old", 3);
  EXPECT_EQ(pmstore_writebatch_count(batch), 4u);
  EXPECT_EQ(pmstore_writebatch_approximate_size(batch), 1 + 5 + 1 + 1 + 1 + 6 + 3u);
  pmstore_writeoptions_t* write = pmstore_writeoptions_create();
  ErrMsg err;
  ASSERT_EQ(pmstore_write(db_, write, batch, err.out()), PMSTORE_OK) << err.str();
  EXPECT_EQ(Get("a"), "second");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("old"), "<NOT_FOUND>");
  pmstore_writebatch_clear(batch);
  EXPECT_EQ(pmstore_writebatch_count(batch), 0u);
  EXPECT_EQ(pmstore_writebatch_approximate_size(batch), 0u);
  ASSERT_EQ(pmstore_write(db_, nullptr, batch, err.out()), PMSTORE_OK) << "an empty batch is fine";
  pmstore_writebatch_destroy(batch);
  pmstore_writeoptions_destroy(write);
}

TEST_F(CApiTest, FailedBatchChangesNothing) {
  pmstore_options_set_max_size(options_, 0);  // no growth
  Open();
  Put("k", "kept");
  pmstore_writebatch_t* batch = pmstore_writebatch_create();
  pmstore_writebatch_put(batch, "k", 1, "lost", 4);
  const std::string huge(16u << 20, 'h');
  pmstore_writebatch_put(batch, "huge", 4, huge.data(), huge.size());
  ErrMsg err;
  EXPECT_EQ(pmstore_write(db_, nullptr, batch, err.out()), PMSTORE_RESOURCE_EXHAUSTED);
  EXPECT_NE(err.str().find(path_), std::string::npos) << err.str();
  EXPECT_EQ(Get("k"), "kept");
  pmstore_writebatch_destroy(batch);
}

TEST_F(CApiTest, IteratorsHonourPrefixBoundsAndSeek) {
  Open();
  for (const char* key : {"a", "b/1", "b/2", "b/3", "c"}) Put(key, std::string("v") + key);
  EXPECT_EQ(Keys(nullptr), (std::vector<std::string>{"a", "b/1", "b/2", "b/3", "c"}));
  pmstore_iteroptions_t* range = pmstore_iteroptions_create();
  pmstore_iteroptions_set_prefix(range, "b/", 2);
  EXPECT_EQ(Keys(range), (std::vector<std::string>{"b/1", "b/2", "b/3"}));
  EXPECT_EQ(Keys(range, "b/2"), (std::vector<std::string>{"b/2", "b/3"}));
  pmstore_iteroptions_set_prefix(range, nullptr, 0);
  pmstore_iteroptions_set_lower_bound(range, "b/2", 3);
  pmstore_iteroptions_set_upper_bound(range, "c", 1);
  EXPECT_EQ(Keys(range), (std::vector<std::string>{"b/2", "b/3"}));
  EXPECT_EQ(Keys(range, "a"), (std::vector<std::string>{"b/2", "b/3"})) << "seek below the lower bound";
  pmstore_iteroptions_destroy(range);

  pmstore_iterator_t* iter = pmstore_create_iterator(db_, nullptr, nullptr);
  pmstore_iter_seek(iter, "b/3", 3);
  ASSERT_TRUE(pmstore_iter_valid(iter));
  size_t len = 0;
  const char* value = pmstore_iter_value(iter, &len);
  EXPECT_EQ(std::string(value, len), "vb/3");
  pmstore_iter_destroy(iter);
}

// Backward, and both ways mixed, through a range: the reverse calls.
TEST_F(CApiTest, IteratorsGoBackwardAndTurnAround) {
  Open();
  for (const char* key : {"a", "b/1", "b/2", "b/3", "c"}) Put(key, std::string("v") + key);
  const auto key_of = [](pmstore_iterator_t* iter) {
    size_t len = 0;
    const char* key = pmstore_iter_key(iter, &len);
    return std::string(key, len);
  };
  pmstore_iteroptions_t* range = pmstore_iteroptions_create();
  pmstore_iteroptions_set_prefix(range, "b/", 2);
  pmstore_iterator_t* iter = pmstore_create_iterator(db_, nullptr, range);
  std::vector<std::string> backward;
  for (pmstore_iter_seek_to_last(iter); pmstore_iter_valid(iter); pmstore_iter_prev(iter)) backward.push_back(key_of(iter));
  EXPECT_EQ(backward, (std::vector<std::string>{"b/3", "b/2", "b/1"}));
  pmstore_iter_seek_for_prev(iter, "b/25", 4);  // the greatest key <= b/25
  ASSERT_TRUE(pmstore_iter_valid(iter));
  EXPECT_EQ(key_of(iter), "b/2");
  pmstore_iter_next(iter);
  EXPECT_EQ(key_of(iter), "b/3");
  pmstore_iter_prev(iter);
  pmstore_iter_prev(iter);
  EXPECT_EQ(key_of(iter), "b/1");
  pmstore_iter_prev(iter);
  EXPECT_FALSE(pmstore_iter_valid(iter)) << "a is outside the prefix";
  pmstore_iter_seek_for_prev(iter, "b", 1);
  EXPECT_FALSE(pmstore_iter_valid(iter)) << "no key of the prefix is <= b";
  EXPECT_EQ(pmstore_iter_get_error(iter, nullptr), PMSTORE_OK);
  pmstore_iter_destroy(iter);
  pmstore_iteroptions_destroy(range);
}

TEST_F(CApiTest, PinnedValueStaysValidAcrossAnOverwriteAndBlocksClose) {
  Open();
  Put("k", "original");
  pmstore_pinnedvalue_t* pinned = nullptr;
  ASSERT_EQ(pmstore_get_pinned(db_, nullptr, "k", 1, &pinned, nullptr), PMSTORE_OK);
  for (int i = 0; i < 100; ++i) Put("k", "overwritten " + std::to_string(i));
  size_t len = 0;
  const char* data = pmstore_pinnedvalue_data(pinned, &len);
  EXPECT_EQ(std::string(data, len), "original");
  ErrMsg err;
  EXPECT_EQ(pmstore_close(db_, err.out()), PMSTORE_BUSY);
  EXPECT_NE(err.str().find("1 pinned value(s)"), std::string::npos) << err.str();
  EXPECT_EQ(Get("k"), "overwritten 99") << "the refused close left the store open";
  pmstore_pinnedvalue_destroy(pinned);
}

TEST_F(CApiTest, CloseIsBusyWhileAnIteratorIsAlive) {
  Open();
  pmstore_iterator_t* iter = pmstore_create_iterator(db_, nullptr, nullptr);
  ErrMsg err;
  EXPECT_EQ(pmstore_close(db_, err.out()), PMSTORE_BUSY);
  EXPECT_NE(err.str().find("1 iterator(s)"), std::string::npos) << err.str();
  EXPECT_STREQ(pmstore_code_name(PMSTORE_BUSY), "BUSY");
  pmstore_iter_destroy(iter);
}

// ---- Snapshots ----

TEST_F(CApiTest, SnapshotReadsTheStateWhenItWasTakenInEveryReadCall) {
  Open();
  Put("a/1", "one");
  Put("a/2", "two");
  const pmstore_snapshot_t* snapshot = pmstore_create_snapshot(db_);
  ASSERT_NE(snapshot, nullptr);
  const uint64_t sequence = pmstore_snapshot_sequence(snapshot);
  Put("a/1", "changed");
  Put("a/3", "added");
  ASSERT_EQ(pmstore_delete(db_, nullptr, "a/2", 3, nullptr), PMSTORE_OK);
  pmstore_readoptions_t* at = pmstore_readoptions_create();
  pmstore_readoptions_set_snapshot(at, snapshot);
  EXPECT_EQ(Get("a/1", at), "one");
  EXPECT_EQ(Get("a/2", at), "two");
  EXPECT_EQ(Get("a/3", at), "<NOT_FOUND>");
  EXPECT_EQ(Get("a/1"), "changed");

  const char* keys[] = {"a/1", "a/2", "a/3"};
  const size_t keylens[] = {3, 3, 3};
  char* vals[3];
  size_t vallens[3];
  pmstore_code_t codes[3];
  ASSERT_EQ(pmstore_multiget(db_, at, 3, keys, keylens, vals, vallens, codes, nullptr), PMSTORE_OK);
  EXPECT_EQ(std::string(vals[0], vallens[0]), "one");
  EXPECT_EQ(std::string(vals[1], vallens[1]), "two");
  EXPECT_EQ(codes[2], PMSTORE_NOT_FOUND);
  for (char* val : vals) pmstore_free(val);

  pmstore_pinnedvalue_t* pinned = nullptr;
  ASSERT_EQ(pmstore_get_pinned(db_, at, "a/2", 3, &pinned, nullptr), PMSTORE_OK);
  size_t len = 0;
  const char* data = pmstore_pinnedvalue_data(pinned, &len);
  EXPECT_EQ(std::string(data, len), "two");
  pmstore_pinnedvalue_destroy(pinned);

  pmstore_iteroptions_t* range = pmstore_iteroptions_create();
  pmstore_iteroptions_set_prefix(range, "a/", 2);
  pmstore_iterator_t* iter = pmstore_create_iterator(db_, at, range);
  std::vector<std::string> seen;
  for (pmstore_iter_seek_to_first(iter); pmstore_iter_valid(iter); pmstore_iter_next(iter)) {
    const char* key = pmstore_iter_key(iter, &len);
    seen.emplace_back(key, len);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a/1", "a/2"}));
  pmstore_iter_destroy(iter);
  pmstore_iteroptions_destroy(range);

  // Cleared, the options read the latest state again.
  pmstore_readoptions_set_snapshot(at, nullptr);
  EXPECT_EQ(Get("a/1", at), "changed");
  pmstore_readoptions_destroy(at);
  const pmstore_snapshot_t* later = pmstore_create_snapshot(db_);
  EXPECT_EQ(pmstore_snapshot_sequence(later), sequence + 3);
  pmstore_release_snapshot(db_, later);
  pmstore_release_snapshot(db_, snapshot);
}

TEST_F(CApiTest, CloseIsBusyWhileASnapshotIsAlive) {
  Open();
  const pmstore_snapshot_t* snapshot = pmstore_create_snapshot(db_);
  ErrMsg err;
  EXPECT_EQ(pmstore_close(db_, err.out()), PMSTORE_BUSY);
  EXPECT_NE(err.str().find("1 snapshot(s)"), std::string::npos) << err.str();
  pmstore_release_snapshot(db_, snapshot);
}

TEST_F(CApiTest, SnapshotErrors) {
  EXPECT_EQ(pmstore_create_snapshot(nullptr), nullptr);
  pmstore_release_snapshot(nullptr, nullptr);  // nothing to release
  Open();
  pmstore_release_snapshot(db_, nullptr);
  // Another store's snapshot: INVALID_ARGUMENT from every read, with a message.
  pmstore_t* other = nullptr;
  const std::string other_path = dir_.File("other");
  ASSERT_EQ(pmstore_open(options_, other_path.c_str(), &other, nullptr), PMSTORE_OK);
  const pmstore_snapshot_t* foreign = pmstore_create_snapshot(other);
  pmstore_readoptions_t* at = pmstore_readoptions_create();
  pmstore_readoptions_set_snapshot(at, foreign);
  Put("k", "v");
  ErrMsg err;
  char* val = nullptr;
  size_t len = 0;
  EXPECT_EQ(pmstore_get(db_, at, "k", 1, &val, &len, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_NE(err.str().find("another store"), std::string::npos) << err.str();
  EXPECT_EQ(val, nullptr);
  pmstore_pinnedvalue_t* pinned = nullptr;
  EXPECT_EQ(pmstore_get_pinned(db_, at, "k", 1, &pinned, nullptr), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pinned, nullptr);
  const char* keys[] = {"k"};
  const size_t keylens[] = {1};
  char* vals[1];
  size_t vallens[1];
  pmstore_code_t codes[1];
  EXPECT_EQ(pmstore_multiget(db_, at, 1, keys, keylens, vals, vallens, codes, nullptr), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(codes[0], PMSTORE_INVALID_ARGUMENT);
  pmstore_iterator_t* iter = pmstore_create_iterator(db_, at, nullptr);
  pmstore_iter_seek_to_first(iter);
  EXPECT_FALSE(pmstore_iter_valid(iter));
  EXPECT_EQ(pmstore_iter_get_error(iter, nullptr), PMSTORE_INVALID_ARGUMENT);
  pmstore_iter_destroy(iter);
  // Released through the wrong db, it still leaves its own store.
  pmstore_release_snapshot(db_, foreign);
  EXPECT_EQ(pmstore_close(other, nullptr), PMSTORE_OK);
  pmstore_readoptions_destroy(at);
}

TEST_F(CApiTest, UnsyncedWritesAreDurableAfterSync) {
  pmstore_options_set_sync(options_, false);  // the default for NULL write options
  Open();
  Put("unsynced", "1");
  pmstore_writeoptions_t* write = pmstore_writeoptions_create();
  pmstore_writeoptions_set_sync(write, false);
  ErrMsg err;
  ASSERT_EQ(pmstore_put(db_, write, "also", 4, "2", 1, err.out()), PMSTORE_OK);
  ASSERT_EQ(pmstore_delete(db_, write, "unsynced", 8, err.out()), PMSTORE_OK);
  ASSERT_EQ(pmstore_sync(db_, err.out()), PMSTORE_OK) << err.str();
  pmstore_writeoptions_destroy(write);
  Reopen();
  EXPECT_EQ(Get("also"), "2");
  EXPECT_EQ(Get("unsynced"), "<NOT_FOUND>");
}

TEST_F(CApiTest, RequiredCacheLineGranularityFailsOnPageCache) {
  if (getenv("PMEM2_FORCE_GRANULARITY") != nullptr) GTEST_SKIP() << "granularity forced";
  pmstore_options_set_required_granularity(options_, PMSTORE_GRANULARITY_CACHE_LINE);
  ErrMsg err;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db_, err.out()), PMSTORE_FAILED_PRECONDITION);
  EXPECT_NE(err.str().find("granularity"), std::string::npos) << err.str();
  db_ = nullptr;
  pmstore_options_set_required_granularity(options_, PMSTORE_GRANULARITY_PAGE);
  Open();
}

TEST_F(CApiTest, StatsDescribeThePool) {
  Open();
  Put("a", "1");
  Put("b", "2");
  pmstore_stats_t* stats = pmstore_get_stats(db_);
  EXPECT_EQ(std::string(pmstore_stats_path(stats)), path_);
  EXPECT_EQ(pmstore_stats_keys(stats), 2u);
  EXPECT_EQ(pmstore_stats_pool_bytes(stats), 8ull << 20);
  EXPECT_GE(pmstore_stats_max_pool_bytes(stats), 64ull << 20);
  EXPECT_GT(pmstore_stats_live_bytes(stats), 0u);
  EXPECT_GT(pmstore_stats_free_bytes(stats), 0u);
  EXPECT_GE(pmstore_stats_fragmentation(stats), 0.0);
  EXPECT_LE(pmstore_stats_fragmentation(stats), 1.0);
  const pmstore_granularity_t granularity = pmstore_stats_granularity(stats);
  if (getenv("PMEM2_FORCE_GRANULARITY") == nullptr) {
    EXPECT_EQ(granularity, PMSTORE_GRANULARITY_PAGE) << "tmpfs is page cache";
  }
  EXPECT_STRNE(pmstore_granularity_name(granularity), "unknown");
  EXPECT_FALSE(pmstore_stats_dax(stats)) << "tmpfs is not DAX";
  EXPECT_FALSE(pmstore_stats_map_sync(stats));
  const double share = pmstore_stats_pmd_mapped_share(stats);
  EXPECT_TRUE(share == -1 || (share >= 0 && share <= 1)) << share;
  EXPECT_STRNE(pmstore_stats_pmd_verify_method(stats), "");
  pmstore_stats_destroy(stats);
}

TEST_F(CApiTest, CheckFindsDamageThatVerifiedReadsReport) {
  Open();
  const std::string marker = "a value nothing else in the pool holds, 0123456789";
  Put("victim", marker);
  Put("bystander", "fine");
  pmstore_checkreport_t* report = nullptr;
  ASSERT_EQ(pmstore_check(db_, &report, nullptr), PMSTORE_OK);
  EXPECT_TRUE(pmstore_checkreport_clean(report));
  EXPECT_EQ(pmstore_checkreport_keys(report), 2u);
  EXPECT_GE(pmstore_checkreport_leaves(report), 1u);
  EXPECT_EQ(pmstore_checkreport_records_verified(report), 2u);
  EXPECT_GT(pmstore_checkreport_bytes_verified(report), marker.size());
  EXPECT_EQ(pmstore_checkreport_problem_count(report), 0u);
  EXPECT_EQ(pmstore_checkreport_problem(report, 0), nullptr);
  pmstore_checkreport_destroy(report);
  ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
  db_ = nullptr;

  // Flip one byte of the value where it lies in the file.
  std::ifstream in(path_, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = image.find(marker);
  ASSERT_NE(at, std::string::npos);
  const int fd = open(path_.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, "X", 1, static_cast<off_t>(at)), 1);
  close(fd);

  ErrMsg err;
  ASSERT_EQ(pmstore_check_path(path_.c_str(), &report, err.out()), PMSTORE_OK) << err.str();
  EXPECT_FALSE(pmstore_checkreport_clean(report));
  ASSERT_EQ(pmstore_checkreport_problem_count(report), 1u);
  EXPECT_NE(std::string(pmstore_checkreport_problem(report, 0)).find("checksum"), std::string::npos)
      << pmstore_checkreport_problem(report, 0);
  pmstore_checkreport_destroy(report);

  Open();
  EXPECT_EQ(Get("victim")[0], 'X') << "unverified reads do not hash";
  pmstore_readoptions_t* verified = pmstore_readoptions_create();
  pmstore_readoptions_set_verify_checksums(verified, true);
  EXPECT_EQ(Get("victim", verified), "<DATA_LOSS>");
  EXPECT_EQ(Get("bystander", verified), "fine");
  pmstore_pinnedvalue_t* pinned = nullptr;
  EXPECT_EQ(pmstore_get_pinned(db_, verified, "victim", 6, &pinned, err.out()), PMSTORE_DATA_LOSS);
  EXPECT_NE(err.str().find(path_), std::string::npos) << err.str();
  pmstore_readoptions_destroy(verified);
}

TEST_F(CApiTest, NamesAndVersion) {
  EXPECT_STREQ(pmstore_code_name(PMSTORE_OK), "OK");
  EXPECT_STREQ(pmstore_code_name(PMSTORE_NOT_FOUND), "NOT_FOUND");
  EXPECT_STREQ(pmstore_code_name(PMSTORE_UNAUTHENTICATED), "UNAUTHENTICATED");
  EXPECT_STREQ(pmstore_code_name(static_cast<pmstore_code_t>(42)), "UNKNOWN");
  EXPECT_STREQ(pmstore_granularity_name(PMSTORE_GRANULARITY_BYTE), "byte");
  EXPECT_STREQ(pmstore_granularity_name(PMSTORE_GRANULARITY_CACHE_LINE), "cache_line");
  EXPECT_STREQ(pmstore_granularity_name(PMSTORE_GRANULARITY_PAGE), "page");
  const std::string version = pmstore_version();
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << version;
}

TEST_F(CApiTest, CallerWrittenInC99RoundTrips) {
  char out[256] = {0};
  EXPECT_EQ(c99_round_trip(path_.c_str(), out, sizeof(out)), 0) << out;
  EXPECT_STREQ(out, "from C, 3 key(s)");  // c99, c99-later, c99-txn
}

}  // namespace
