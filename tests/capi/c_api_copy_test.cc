// pmstore_copy_to through the C names only: the copy's contents, and the
// codes and messages of each way it can fail, each leaving nothing behind.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capi/err_msg.h"
#include "gtest/gtest.h"
#include "pmstore/c.h"
#include "support/temp_dir.h"

namespace {

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

class CApiCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pmstore_options_t* options = pmstore_options_create();
    pmstore_options_set_create_if_missing(options, true);
    pmstore_options_set_initial_size(options, 8ull << 20);
    pmstore_options_set_max_size(options, 64ull << 20);
    ErrMsg err;
    ASSERT_EQ(pmstore_open(options, dir_.File("pool").c_str(), &db_, err.out()), PMSTORE_OK) << err.str();
    pmstore_options_destroy(options);
    pmstore_writeoptions_t* unsynced = pmstore_writeoptions_create();
    pmstore_writeoptions_set_sync(unsynced, false);
    for (int i = 0; i < 3000; ++i) {
      const std::string key = "key" + std::to_string(i);
      const std::string value(i % 200, static_cast<char>('a' + i % 26));
      ASSERT_EQ(pmstore_put(db_, unsynced, key.data(), key.size(), value.data(), value.size(), nullptr), PMSTORE_OK);
    }
    pmstore_writeoptions_destroy(unsynced);
    ASSERT_EQ(pmstore_sync(db_, nullptr), PMSTORE_OK);
  }
  void TearDown() override { EXPECT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK); }

  TempDir dir_;
  pmstore_t* db_ = nullptr;
};

TEST_F(CApiCopyTest, CopyHoldsEveryEntryAndPassesCheck) {
  ErrMsg err;
  const std::string dest = dir_.File("copy");
  ASSERT_EQ(pmstore_copy_to(db_, nullptr, dest.c_str(), err.out()), PMSTORE_OK) << err.str();
  pmstore_checkreport_t* report = nullptr;
  ASSERT_EQ(pmstore_check_path(dest.c_str(), &report, err.out()), PMSTORE_OK) << err.str();
  EXPECT_TRUE(pmstore_checkreport_clean(report));
  EXPECT_EQ(pmstore_checkreport_keys(report), 3000u);
  pmstore_checkreport_destroy(report);

  pmstore_options_t* options = pmstore_options_create();
  pmstore_t* copy = nullptr;
  ASSERT_EQ(pmstore_open(options, dest.c_str(), &copy, err.out()), PMSTORE_OK) << err.str();
  pmstore_options_destroy(options);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "key" + std::to_string(i);
    char* val = nullptr;
    size_t len = 0;
    ASSERT_EQ(pmstore_get(copy, nullptr, key.data(), key.size(), &val, &len, nullptr), PMSTORE_OK) << key;
    EXPECT_EQ(std::string(val == nullptr ? "" : std::string(val, len)),
              std::string(i % 200, static_cast<char>('a' + i % 26)));
    pmstore_free(val);
  }
  EXPECT_EQ(pmstore_close(copy, nullptr), PMSTORE_OK);
}

TEST_F(CApiCopyTest, CopyHasTheSourcesPermissionBits) {
  ASSERT_EQ(chmod(dir_.File("pool").c_str(), 0600), 0);
  const mode_t umask_before = umask(022);
  ErrMsg err;
  const std::string dest = dir_.File("copy");
  ASSERT_EQ(pmstore_copy_to(db_, nullptr, dest.c_str(), err.out()), PMSTORE_OK) << err.str();
  umask(umask_before);
  struct stat st;
  ASSERT_EQ(stat(dest.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "a copy of a private pool is private";
}

TEST_F(CApiCopyTest, CopyWithReadOptionsHoldsEveryEntry) {
  pmstore_readoptions_t* read = pmstore_readoptions_create();
  pmstore_readoptions_set_verify_checksums(read, true);
  ErrMsg err;
  const std::string dest = dir_.File("copy");
  EXPECT_EQ(pmstore_copy_to(db_, read, dest.c_str(), err.out()), PMSTORE_OK) << err.str();
  pmstore_readoptions_destroy(read);
  pmstore_checkreport_t* report = nullptr;
  ASSERT_EQ(pmstore_check_path(dest.c_str(), &report, err.out()), PMSTORE_OK) << err.str();
  EXPECT_EQ(pmstore_checkreport_keys(report), 3000u);
  pmstore_checkreport_destroy(report);
}

TEST_F(CApiCopyTest, CopyOfASnapshotLeavesOutLaterWrites) {
  const pmstore_snapshot_t* snapshot = pmstore_create_snapshot(db_);
  ASSERT_NE(snapshot, nullptr);
  ASSERT_EQ(pmstore_put(db_, nullptr, "key1", 4, "changed", 7, nullptr), PMSTORE_OK);
  ASSERT_EQ(pmstore_put(db_, nullptr, "later", 5, "x", 1, nullptr), PMSTORE_OK);
  ASSERT_EQ(pmstore_delete(db_, nullptr, "key2", 4, nullptr), PMSTORE_OK);
  pmstore_readoptions_t* read = pmstore_readoptions_create();
  pmstore_readoptions_set_snapshot(read, snapshot);
  ErrMsg err;
  const std::string dest = dir_.File("copy");
  ASSERT_EQ(pmstore_copy_to(db_, read, dest.c_str(), err.out()), PMSTORE_OK) << err.str();
  pmstore_readoptions_destroy(read);
  pmstore_release_snapshot(db_, snapshot);

  pmstore_options_t* options = pmstore_options_create();
  pmstore_t* copy = nullptr;
  ASSERT_EQ(pmstore_open(options, dest.c_str(), &copy, err.out()), PMSTORE_OK) << err.str();
  pmstore_options_destroy(options);
  char* val = nullptr;
  size_t len = 0;
  ASSERT_EQ(pmstore_get(copy, nullptr, "key1", 4, &val, &len, nullptr), PMSTORE_OK);
  EXPECT_EQ(std::string(val, len), "b") << "the value as of the snapshot (SetUp put key1 = \"b\")";
  pmstore_free(val);
  EXPECT_EQ(pmstore_get(copy, nullptr, "later", 5, &val, &len, nullptr), PMSTORE_NOT_FOUND);
  ASSERT_EQ(pmstore_get(copy, nullptr, "key2", 4, &val, &len, nullptr), PMSTORE_OK) << "deleted after the snapshot";
  pmstore_free(val);
  EXPECT_EQ(pmstore_close(copy, nullptr), PMSTORE_OK);
}

TEST_F(CApiCopyTest, ExistingDestinationIsAlreadyExistsAndUntouched) {
  const std::string dest = dir_.File("taken");
  std::ofstream(dest) << "keep me";
  ErrMsg err;
  EXPECT_EQ(pmstore_copy_to(db_, nullptr, dest.c_str(), err.out()), PMSTORE_ALREADY_EXISTS);
  EXPECT_NE(err.str().find(dest), std::string::npos) << err.str();
  std::ifstream in(dest);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me");
  EXPECT_EQ(Entries(dir_.path()), (std::vector<std::string>{"pool", "taken"}));
}

TEST_F(CApiCopyTest, MissingDirectoryIsNotFoundAndLeavesNothing) {
  ErrMsg err;
  EXPECT_EQ(pmstore_copy_to(db_, nullptr, dir_.File("nodir/copy").c_str(), err.out()), PMSTORE_NOT_FOUND);
  EXPECT_NE(err.str().find("nodir/copy"), std::string::npos) << err.str();
  EXPECT_EQ(Entries(dir_.path()), (std::vector<std::string>{"pool"}));
}

TEST_F(CApiCopyTest, NullArgumentsAreInvalidArgumentNamingTheCall) {
  ErrMsg err;
  EXPECT_EQ(pmstore_copy_to(nullptr, nullptr, dir_.File("copy").c_str(), err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(err.str(), "pmstore_copy_to: db is NULL");
  EXPECT_EQ(pmstore_copy_to(db_, nullptr, nullptr, err.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(err.str(), "pmstore_copy_to: dest_path is NULL");
  EXPECT_EQ(Entries(dir_.path()), (std::vector<std::string>{"pool"}));
}

}  // namespace
