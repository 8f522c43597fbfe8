// Read-only opens (Options::read_only) and the permissions of new pools
// (Options::mode): what a user who may only read a pool file can do, what
// a read-only open refuses, that it never changes the file (not even to
// recover it), and how it shares the pool lock. Permission checks run in a
// child that has dropped root, since root passes every one of them.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::InAChild;
using testing::OpenOrDie;
using testing::SmallPool;

constexpr uid_t kNobody = 65534;

Options ReadOnly() { return Options{.read_only = true}; }

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool HasWords(const absl::Status& status, const std::string& words) {
  return status.message().find(words) != std::string::npos;
}

class StoreReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0); }  // for the child that is not root

  void MakePool(int keys) {
    auto store = OpenOrDie(path_, SmallPool());
    for (int i = 0; i < keys; ++i) ASSERT_TRUE(store->Put("key" + std::to_string(i), "value" + std::to_string(i)).ok());
    ASSERT_TRUE(store->Close().ok());
  }

  // Runs `body` in a child as user nobody; the child's exit status is
  // what body returns (0: as expected), or 99 when it could not drop root.
  int AsNobody(int (*body)(const std::string& path)) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(99);
      _exit(body(path_));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreReadOnlyTest, ReadsEverythingAndRefusesEveryWrite) {
  MakePool(100);
  auto store = OpenOrDie(path_, ReadOnly());
  ASSERT_NE(store, nullptr);
  std::string value;
  ASSERT_TRUE(store->Get(ReadOptions(), "key42", &value).ok());
  EXPECT_EQ(value, "value42");
  auto it = store->NewIterator(ReadOptions(), {});
  int n = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) ++n;
  EXPECT_EQ(n, 100);
  it.reset();
  EXPECT_TRUE(store->GetStats().read_only);
  EXPECT_EQ(store->GetStats().keys, 100u);
  EXPECT_TRUE(store->CheckNow().clean());

  for (const absl::Status& status :
       {store->Put("key1", "changed"), store->Delete("key2"), store->Put("new", "x"), store->Sync()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
    EXPECT_TRUE(HasWords(status, path_) && HasWords(status, "read-only")) << status;
  }
  WriteBatch batch;
  batch.Put("a", "b");
  EXPECT_EQ(store->Write(batch).code(), absl::StatusCode::kPermissionDenied);

  // A transaction reads; its commit writes only when it staged writes.
  auto reader = store->BeginTransaction();
  ASSERT_TRUE(reader->Get("key7", &value).ok());
  EXPECT_TRUE(reader->Commit().ok());
  auto writer = store->BeginTransaction();
  ASSERT_TRUE(writer->Put("key7", "changed").ok());
  EXPECT_EQ(writer->Commit().code(), absl::StatusCode::kPermissionDenied);
  writer.reset();
  reader.reset();

  ASSERT_TRUE(store->Get(ReadOptions(), "key1", &value).ok());
  EXPECT_EQ(value, "value1");
  EXPECT_TRUE(store->Close().ok());
}

TEST_F(StoreReadOnlyTest, NeverCreatesAPool) {
  Options options = ReadOnly();
  options.create_if_missing = true;
  auto store = Store::Open(path_, options);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kNotFound) << store.status();
  EXPECT_TRUE(HasWords(store.status(), "read-only")) << store.status();
  EXPECT_NE(access(path_.c_str(), F_OK), 0);
}

TEST_F(StoreReadOnlyTest, ReadOnlyOpensAndChecksShareThePoolWithEachOtherAndOneWriter) {
  MakePool(10);
  auto first = OpenOrDie(path_, ReadOnly());
  ASSERT_NE(first, nullptr);
  // Other processes: a second read-only open and a check (a read-only
  // open) share the pool; so does a writer, whose commit the first open
  // then reads.
  EXPECT_EQ(InAChild([&] { return Store::Open(path_, ReadOnly()).status().ToString(); }), "OK");
  EXPECT_EQ(InAChild([&] {
              auto report = Store::Check(path_);
              if (!report.ok()) return report.status().ToString();
              return std::string(report->clean() && report->keys == 10 ? "clean" : "check found otherwise");
            }),
            "clean");
  EXPECT_EQ(InAChild([&] {
              auto writer = Store::Open(path_, Options());
              return writer.ok() ? (*writer)->Put({}, "k0", "changed").ToString() : writer.status().ToString();
            }),
            "OK");
  std::string value;
  ASSERT_TRUE(first->Get("k0", &value).ok());
  EXPECT_EQ(value, "changed");
  EXPECT_TRUE(first->CheckNow().clean()) << "no writer holds the pool: a follower checks it";
  const std::string exclusive =
      InAChild([&] { return Store::Open(path_, Options{.exclusive = true}).status().ToString(); });
  EXPECT_NE(exclusive.find("FAILED_PRECONDITION"), std::string::npos) << exclusive;
  EXPECT_NE(exclusive.find("which has it open"), std::string::npos) << exclusive;
  first.reset();
  auto writable = OpenOrDie(path_, Options());
  ASSERT_NE(writable, nullptr);

  EXPECT_EQ(InAChild([&] { return Store::Open(path_, ReadOnly()).status().ToString(); }), "OK");
  const std::string alone =
      InAChild([&] { return Store::Open(path_, Options{.read_only = true, .exclusive = true}).status().ToString(); });
  EXPECT_NE(alone.find("FAILED_PRECONDITION"), std::string::npos) << alone;
  EXPECT_NE(alone.find("process " + std::to_string(getpid()) + ", which has it open for writing"), std::string::npos)
      << alone;
  // A check beside the writer checks the pool at its newest commit.
  ASSERT_TRUE(writable->Put({}, "k10", "v10").ok());
  EXPECT_EQ(InAChild([&] {
              auto report = Store::Check(path_);
              if (!report.ok()) return report.status().ToString();
              return report->clean() ? absl::StrCat("clean, ", report->keys, " keys")
                                     : absl::StrJoin(report->problems, "; ");
            }),
            "clean, 12 keys");
  EXPECT_EQ(InAChild([&] {
              auto reader = Store::Open(path_, ReadOnly());
              if (!reader.ok()) return reader.status().ToString();
              const CheckReport report = (*reader)->CheckNow();
              return report.clean() ? absl::StrCat("clean, ", report.keys, " keys")
                                    : absl::StrJoin(report.problems, "; ");
            }),
            "clean, 12 keys");
}

// A writer killed with unsynced writes leaves the pool for the next open
// to recover: a read-only open recovers it in its own memory, reads every
// acknowledged write, and leaves the file byte for byte as it was, for the
// next writable open to recover as usual.
TEST_F(StoreReadOnlyTest, RecoversInItsOwnMemoryAndLeavesTheFileAlone) {
  MakePool(10);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    auto store = Store::Open(path_, Options());
    if (!store.ok()) _exit(1);
    for (int i = 0; i < 50; ++i) {
      if (!(*store)->Put({.sync = false}, "unsynced" + std::to_string(i), "v" + std::to_string(i)).ok()) _exit(2);
    }
    if (!(*store)->Delete({.sync = false}, "key3").ok()) _exit(3);
    _exit(0);  // killed, as far as the pool knows: no Close
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  const std::string before = FileBytes(path_);
  {
    auto store = OpenOrDie(path_, ReadOnly());
    ASSERT_NE(store, nullptr);
    std::string value;
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(store->Get(ReadOptions(), "unsynced" + std::to_string(i), &value).ok()) << i;
      EXPECT_EQ(value, "v" + std::to_string(i));
    }
    EXPECT_TRUE(absl::IsNotFound(store->Get(ReadOptions(), "key3", &value)));
    EXPECT_EQ(store->GetStats().keys, 59u);
    EXPECT_TRUE(store->CheckNow().clean());
    EXPECT_TRUE(store->Close().ok());
  }
  EXPECT_TRUE(FileBytes(path_) == before) << "a read-only open changed the pool file";

  auto store = OpenOrDie(path_, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetStats().keys, 59u);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreReadOnlyTest, CopiesFromAReadOnlyOpen) {
  MakePool(200);
  auto store = OpenOrDie(path_, ReadOnly());
  ASSERT_NE(store, nullptr);
  const std::string copy = dir_.File("copy");
  ASSERT_TRUE(store->CopyTo(copy).ok());
  auto copied = OpenOrDie(copy, Options());
  ASSERT_NE(copied, nullptr);
  EXPECT_EQ(copied->GetStats().keys, 200u);
  std::string value;
  ASSERT_TRUE(copied->Get(ReadOptions(), "key199", &value).ok());
  EXPECT_EQ(value, "value199");
}

// The child's exit codes name the step that went wrong.
int ReadWithoutWritePermission(const std::string& path) {
  auto writable = Store::Open(path, Options());
  if (writable.ok() || writable.status().code() != absl::StatusCode::kPermissionDenied) return 1;
  if (!HasWords(writable.status(), path) || !HasWords(writable.status(), "read-only")) return 2;
  auto store = Store::Open(path, ReadOnly());
  if (!store.ok()) return 3;
  std::string value;
  if (!(*store)->Get(ReadOptions(), "key5", &value).ok() || value != "value5") return 4;
  if ((*store)->Put("key5", "x").code() != absl::StatusCode::kPermissionDenied) return 5;
  if (!(*store)->Close().ok()) return 6;
  auto report = Store::Check(path);
  if (!report.ok() || !report->clean()) return 7;
  return 0;
}

TEST_F(StoreReadOnlyTest, AUserWhoMayOnlyReadReadsThePool) {
  MakePool(10);  // 0644, owned by root
  EXPECT_EQ(AsNobody(ReadWithoutWritePermission), 0);
}

int NoReadPermission(const std::string& path) {
  auto store = Store::Open(path, ReadOnly());
  return store.status().code() == absl::StatusCode::kPermissionDenied ? 0 : 1;
}

TEST_F(StoreReadOnlyTest, ModeSetsANewPoolsPermissionsLessTheUmask) {
  const mode_t old_umask = umask(022);
  Options options = SmallPool();
  options.mode = 0600;
  ASSERT_NE(OpenOrDie(path_, options), nullptr);
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(AsNobody(NoReadPermission), 0);

  const std::string wide = dir_.File("wide");
  options.mode = 0666;
  ASSERT_NE(OpenOrDie(wide, options), nullptr);
  ASSERT_EQ(stat(wide.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);  // the umask took the group's and others' write

  // An existing pool keeps its permissions.
  options.mode = 0600;
  ASSERT_NE(OpenOrDie(wide, options), nullptr);
  ASSERT_EQ(stat(wide.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  umask(old_umask);
}

TEST_F(StoreReadOnlyTest, ModeBeyondPermissionBitsIsRefused) {
  Options options = SmallPool();
  options.mode = 04755;
  auto store = Store::Open(path_, options);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument) << store.status();
  EXPECT_TRUE(HasWords(store.status(), "04755")) << store.status();
  EXPECT_NE(access(path_.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace pmstore
