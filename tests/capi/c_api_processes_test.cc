// pmstore_options_set_read_only and pmstore_options_set_mode through the C
// names: a read-only open reads, refuses writes with
// PMSTORE_PERMISSION_DENIED, shares the pool with other read-only opens,
// and a new pool gets the permissions asked for.
#include <sys/stat.h>

#include <string>

#include "c_api_fixture.h"

namespace pmstore_c_test {
namespace {

class CApiReadOnlyTest : public CApiFixture {
 protected:
  // A pool holding k -> v, closed.
  void MakePool() {
    Open();
    Put("k", "v");
    ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
    db_ = nullptr;
  }
};

TEST_F(CApiReadOnlyTest, ReadsAndRefusesWritesWithPermissionDenied) {
  MakePool();
  pmstore_options_set_read_only(options_, true);
  Open();
  EXPECT_EQ(Get("k"), "v");
  pmstore_stats_t* stats = pmstore_get_stats(db_);
  EXPECT_TRUE(pmstore_stats_read_only(stats));
  pmstore_stats_destroy(stats);

  ErrMsg err;
  EXPECT_EQ(pmstore_put(db_, nullptr, "k", 1, "w", 1, err.out()), PMSTORE_PERMISSION_DENIED);
  EXPECT_NE(err.str().find("read-only"), std::string::npos) << err.str();
  EXPECT_EQ(pmstore_delete(db_, nullptr, "k", 1, nullptr), PMSTORE_PERMISSION_DENIED);
  EXPECT_EQ(pmstore_sync(db_, nullptr), PMSTORE_PERMISSION_DENIED);
  EXPECT_EQ(Get("k"), "v");

  // A second read-only open shares the pool; a writable one is refused.
  pmstore_t* second = nullptr;
  ASSERT_EQ(pmstore_open(options_, path_.c_str(), &second, nullptr), PMSTORE_OK);
  EXPECT_EQ(pmstore_close(second, nullptr), PMSTORE_OK);
  pmstore_options_set_read_only(options_, false);
  pmstore_t* writer = nullptr;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &writer, nullptr), PMSTORE_FAILED_PRECONDITION);
  EXPECT_EQ(writer, nullptr);
}

TEST_F(CApiReadOnlyTest, NeverCreatesAPool) {
  pmstore_options_set_read_only(options_, true);  // create_if_missing is set too
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db_, nullptr), PMSTORE_NOT_FOUND);
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0);
}

TEST_F(CApiReadOnlyTest, ModeSetsANewPoolsPermissions) {
  const mode_t old_umask = umask(022);
  pmstore_options_set_mode(options_, 0640);
  Open();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  umask(old_umask);

  pmstore_options_set_mode(options_, 01000);
  pmstore_t* other = nullptr;
  const std::string other_path = dir_.File("other");
  EXPECT_EQ(pmstore_open(options_, other_path.c_str(), &other, nullptr), PMSTORE_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace pmstore_c_test
