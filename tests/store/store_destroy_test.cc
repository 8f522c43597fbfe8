// Store::Destroy (RocksDB's DestroyDB) and what an open makes of a
// character device that is not device DAX. Pools on a real device DAX
// device are tested in the VM (tests/dax/pmstore_on_devdax.sh runs the
// DeviceDax tests here with PMSTORE_TEST_DEVICE: a full device, read-only
// opens): this machine has none, and /dev/null stands for a device that is
// not one.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::InAChild;
using testing::OpenOrDie;
using testing::SmallPool;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool HasWords(const absl::Status& status, const std::string& words) {
  return status.message().find(words) != std::string::npos;
}

class StoreDestroyTest : public ::testing::Test {
 protected:
  void MakePool() {
    auto store = OpenOrDie(path_, SmallPool());
    ASSERT_TRUE(store->Put("key", "value").ok());
    ASSERT_TRUE(store->Close().ok());
  }

  TempDir dir_{"/dev/shm"};
  const std::string path_ = dir_.File("pool");
};

TEST_F(StoreDestroyTest, RemovesAPoolSoThatItOpensNoMore) {
  MakePool();
  ASSERT_TRUE(Store::Destroy(path_).ok());
  EXPECT_FALSE(Exists(path_));
  EXPECT_TRUE(absl::IsNotFound(Store::Open(path_, Options()).status()));
  // A new pool under the name starts empty.
  auto store = OpenOrDie(path_, SmallPool());
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(store->Get("key", &value)));
}

TEST_F(StoreDestroyTest, RefusesAPoolOpenInThisProcess) {
  MakePool();
  auto store = OpenOrDie(path_, Options());
  const absl::Status destroyed = Store::Destroy(path_);
  EXPECT_TRUE(absl::IsFailedPrecondition(destroyed)) << destroyed;
  EXPECT_TRUE(HasWords(destroyed, "already open in this process")) << destroyed;
  std::string value;
  EXPECT_TRUE(store->Get("key", &value).ok());
  ASSERT_TRUE(store->Close().ok());
  EXPECT_TRUE(Exists(path_));
}

TEST_F(StoreDestroyTest, RefusesAPoolOpenInAnotherProcess) {
  MakePool();
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = Store::Open(path_, Options{.read_only = true});
    const char ok = store.ok() ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(2);
    char c;
    if (read(done[0], &c, 1) != 1) _exit(3);
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  const absl::Status destroyed = Store::Destroy(path_);
  EXPECT_TRUE(absl::IsFailedPrecondition(destroyed)) << destroyed;
  EXPECT_TRUE(HasWords(destroyed, "process " + std::to_string(child))) << destroyed;
  ASSERT_EQ(write(done[1], "x", 1), 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(Exists(path_));
  EXPECT_TRUE(Store::Destroy(path_).ok());  // once it is closed there
}

TEST_F(StoreDestroyTest, LeavesAFileThatIsNotAPool) {
  { std::ofstream(path_) << "my notes, not a pool"; }
  const absl::Status destroyed = Store::Destroy(path_);
  EXPECT_TRUE(absl::IsInvalidArgument(destroyed)) << destroyed;
  EXPECT_TRUE(HasWords(destroyed, "not a pmstore pool")) << destroyed;
  std::ifstream in(path_);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "my notes, not a pool");
}

TEST_F(StoreDestroyTest, NamesWhatIsMissingOrADirectory) {
  const absl::Status missing = Store::Destroy(path_);
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_TRUE(HasWords(missing, path_)) << missing;
  const absl::Status directory = Store::Destroy(dir_.path());
  EXPECT_TRUE(absl::IsInvalidArgument(directory)) << directory;
}

// /dev/null is a character device but not device DAX: refused by every
// call, with what a pool on a device needs, and never written.
TEST(StoreOnCharacterDeviceTest, RefusesADeviceThatIsNotDeviceDax) {
  for (const Options& options : {Options{.create_if_missing = true}, Options{}, Options{.read_only = true}}) {
    const absl::Status opened = Store::Open("/dev/null", options).status();
    EXPECT_TRUE(absl::IsInvalidArgument(opened)) << opened;
    EXPECT_TRUE(HasWords(opened, "not device DAX")) << opened;
    EXPECT_TRUE(HasWords(opened, "/dev/daxX.Y")) << opened;
  }
  const absl::Status destroyed = Store::Destroy("/dev/null");
  EXPECT_TRUE(absl::IsInvalidArgument(destroyed)) << destroyed;
  EXPECT_TRUE(absl::IsInvalidArgument(Store::Check("/dev/null").status()));
}

TEST_F(StoreDestroyTest, AFilePoolReportsNoDeviceAlign) {
  auto store = OpenOrDie(path_, SmallPool());
  EXPECT_EQ(store->GetStats().device_dax_align, 0u);
}

// A full device DAX pool: PMSTORE_TEST_DEVICE names the device (the VM's
// /dev/daxX.Y, tests/dax/pmstore_on_devdax.sh), whose pool is destroyed
// first; skipped without one. The device never grows: a put that does not
// fit is ResourceExhausted, and the pool keeps every value it held, across
// a reopen.
TEST(StoreOnDeviceDaxTest, AFullDeviceIsResourceExhaustedAndKeepsItsValues) {
  const char* device = std::getenv("PMSTORE_TEST_DEVICE");
  if (device == nullptr) GTEST_SKIP() << "PMSTORE_TEST_DEVICE names no device DAX device";
  const absl::Status destroyed = Store::Destroy(device);
  ASSERT_TRUE(destroyed.ok() || absl::IsNotFound(destroyed)) << destroyed;
  auto store = OpenOrDie(device, Options{.create_if_missing = true});
  const Stats stats = store->GetStats();
  ASSERT_GT(stats.device_dax_align, 0u);
  EXPECT_EQ(stats.pool_bytes, stats.max_pool_bytes);  // no growth
  constexpr size_t kValueBytes = 32 << 20;
  int stored = 0;
  absl::Status full;
  for (; stored < 200; ++stored) {
    full = store->Put("big" + std::to_string(stored), testing::ValueFor(stored, kValueBytes));
    if (!full.ok()) break;
  }
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_GE(static_cast<uint64_t>(stored) * kValueBytes, stats.pool_bytes / 2);
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(device, Options());
  std::string value;
  for (int i = 0; i < stored; ++i) {
    ASSERT_TRUE(store->Get("big" + std::to_string(i), &value).ok()) << i;
    ASSERT_EQ(value, testing::ValueFor(i, kValueBytes)) << i;
  }
  EXPECT_TRUE(store->CheckNow().clean());
  std::printf("device DAX %s: full after %d values of 32 MiB in %llu bytes (align %llu): %s\n", device, stored,
              static_cast<unsigned long long>(stats.pool_bytes),
              static_cast<unsigned long long>(stats.device_dax_align), std::string(full.message()).c_str());
}

// A read-only open of a device DAX pool (Options::read_only): the device is
// mapped without write permission, so it reads, refuses writes, shares the
// device with other read-only opens and with one writer, whose commits it
// reads, and excludes an exclusive writer, as a read-only open of a file
// does.
TEST(StoreOnDeviceDaxTest, AReadOnlyOpenReadsRefusesWritesAndSharesTheDevice) {
  const char* device = std::getenv("PMSTORE_TEST_DEVICE");
  if (device == nullptr) GTEST_SKIP() << "PMSTORE_TEST_DEVICE names no device DAX device";
  const absl::Status destroyed = Store::Destroy(device);
  ASSERT_TRUE(destroyed.ok() || absl::IsNotFound(destroyed)) << destroyed;
  auto empty = Store::Open(device, Options{.create_if_missing = true, .read_only = true});
  EXPECT_TRUE(absl::IsNotFound(empty.status()) && HasWords(empty.status(), "never formats")) << empty.status();
  {
    auto writer = OpenOrDie(device, Options{.create_if_missing = true});
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(writer->Put("k" + std::to_string(i), "v" + std::to_string(i)).ok());
    ASSERT_TRUE(writer->Close().ok());
  }
  auto first = OpenOrDie(device, Options{.read_only = true});
  // Another process shares the device; this one opens it once.
  EXPECT_EQ(InAChild([&] {
              auto second = Store::Open(device, Options{.read_only = true});
              std::string seen;
              if (!second.ok()) return second.status().ToString();
              if (!(*second)->Get("k7", &seen).ok()) return std::string("no k7");
              return seen;
            }),
            "v7");
  auto second = Store::Open(device, Options{.read_only = true});
  EXPECT_TRUE(HasWords(second.status(), "already open in this process")) << second.status();
  std::string value;
  ASSERT_TRUE(first->Get("k42", &value).ok());
  EXPECT_EQ(value, "v42");
  const Stats stats = first->GetStats();
  EXPECT_TRUE(stats.read_only);
  EXPECT_EQ(stats.keys, 100u);
  EXPECT_GT(stats.device_dax_align, 0u);
  EXPECT_TRUE(first->CheckNow().clean());
  const absl::Status put = first->Put("k1", "w");
  EXPECT_TRUE(absl::IsPermissionDenied(put)) << put;
  const std::string alone =
      InAChild([&] { return Store::Open(device, Options{.exclusive = true}).status().ToString(); });
  EXPECT_NE(alone.find("which has it open"), std::string::npos) << alone;
  EXPECT_EQ(InAChild([&] {
              auto writer = Store::Open(device, Options());
              return writer.ok() ? (*writer)->Put({}, "k1", "beside").ToString() : writer.status().ToString();
            }),
            "OK");
  ASSERT_TRUE(first->Get("k1", &value).ok());
  EXPECT_EQ(value, "beside") << "the read-only open follows the writer's commit";
  ASSERT_TRUE(first->Close().ok());
  auto check = Store::Check(device);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->clean());
}

// A process killed in the middle of unsynced writes leaves work for
// recovery, which an open that may not write the device cannot do: the
// read-only open is refused, saying so, and changes nothing; a writable
// open recovers, and read-only opens work again.
TEST(StoreOnDeviceDaxTest, AReadOnlyOpenOfADeviceLeftToRecoverIsRefused) {
  const char* device = std::getenv("PMSTORE_TEST_DEVICE");
  if (device == nullptr) GTEST_SKIP() << "PMSTORE_TEST_DEVICE names no device DAX device";
  const absl::Status destroyed = Store::Destroy(device);
  ASSERT_TRUE(destroyed.ok() || absl::IsNotFound(destroyed)) << destroyed;
  {
    auto store = OpenOrDie(device, Options{.create_if_missing = true});
    ASSERT_TRUE(store->Put("durable", "yes").ok());
    ASSERT_TRUE(store->Close().ok());
  }
  ASSERT_TRUE(testing::KillMidUnsyncedRun(device, 20));

  auto refused = Store::Open(device, Options{.read_only = true});
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()) && HasWords(refused.status(), "for writing once"))
      << refused.status();
  auto check = Store::Check(device);  // falls back to a writable open, which recovers
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->clean());
  auto store = OpenOrDie(device, Options{.read_only = true});
  std::string value;
  EXPECT_TRUE(store->Get("durable", &value).ok());
  EXPECT_TRUE(store->Get("unsynced19", &value).ok()) << "a kill in the same boot keeps unsynced writes";
  EXPECT_EQ(store->GetStats().keys, 21u);
}

}  // namespace
}  // namespace pmstore
