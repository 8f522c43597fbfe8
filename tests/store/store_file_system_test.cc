// A pool on a network file system is refused, at create and at every open,
// naming the file system and what to do, and the refusal loses nothing: a
// create leaves no file behind, an open leaves the pool as it was. No NFS
// mount exists here, so an Env presents NFS's type
// (support/fault_injection_env.h); the dax tests meet a real network file
// system, the VM's 9p mount (tests/dax/pmstore_on_dax.sh).
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/db/store_impl.h"
#include "store/store_test_util.h"
#include "support/fault_injection_env.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::FaultInjectionEnv;


std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class StoreFileSystemTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<StoreImpl>> OpenOn(const std::string& type, const Options& options) {
    env_.PretendFileSystemType(type);
    return StoreImpl::OpenWith(path_, options, &internal::MakeMappingPersister, &env_);
  }
  static void ExpectRefusal(const absl::Status& status, const std::string& name, const std::string& path) {
    ASSERT_TRUE(absl::IsFailedPrecondition(status)) << status;
    const std::string message(status.message());
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(name + ", a network file system"), std::string::npos) << message;
    EXPECT_NE(message.find("local file system"), std::string::npos) << "says what to do: " << message;
  }

  FaultInjectionEnv env_;
  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreFileSystemTest, CreatingOnNfsIsRefusedAndLeavesNoFile) {
  auto store = OpenOn("nfs4", testing::SmallPool());
  ExpectRefusal(store.status(), "nfs4", path_);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path())) << "the half-made pool was left behind";
}

TEST_F(StoreFileSystemTest, OpeningAPoolOnCifsIsRefusedAndTheFileIsUnchanged) {
  {
    auto store = testing::OpenOrDie(path_, testing::SmallPool());
    ASSERT_TRUE(store->Put("k", "v").ok());
  }
  const std::string before = Contents(path_);
  Options writable;
  ExpectRefusal(OpenOn("cifs", writable).status(), "cifs", path_);
  Options read_only;
  read_only.read_only = true;
  ExpectRefusal(OpenOn("cifs", read_only).status(), "cifs", path_);
  EXPECT_TRUE(Contents(path_) == before) << "a refused open changed the pool";

  // The refusal held no lock: the real file system opens it at once.
  auto store = OpenOn("", writable);
  ASSERT_TRUE(store.ok()) << store.status();
  std::string value;
  EXPECT_TRUE((*store)->Get("k", &value).ok() && value == "v");
}

TEST_F(StoreFileSystemTest, ALocalFileSystemOpensAndItsTypeIsAskedOnce) {
  auto store = OpenOn("", testing::SmallPool());
  ASSERT_TRUE(store.ok()) << store.status();
  size_t asked = 0;
  for (const auto& record : env_.trace()) asked += record.call == FaultInjectionEnv::Call::kFileSystemType;
  EXPECT_EQ(asked, 1u);
}

// The lookup itself, on this machine's mounts: /dev/shm is tmpfs, a
// directory inside it too, and a missing path is the errno statx gives.
TEST(FileSystemTypeTest, NamesTheMountThatHoldsThePathAsMountinfoDoes) {
  TempDir dir("/dev/shm");
  std::string type;
  ASSERT_EQ(env::Env::Default()->FileSystemType(dir.path(), &type), 0);
  EXPECT_EQ(type, "tmpfs");
  ASSERT_EQ(env::Env::Default()->FileSystemType("/proc/self", &type), 0);
  EXPECT_EQ(type, "proc");
  EXPECT_EQ(env::Env::Default()->FileSystemType(dir.File("missing"), &type), ENOENT);
}

// Without /proc (a bare chroot or container) the type is unknown, and a
// pool opens as before: the check refuses what it knows, nothing else. A
// child in a mount namespace of its own hides /proc under a tmpfs.
TEST(FileSystemTypeTest, WithoutProcTheTypeIsUnknownAndAPoolStillOpens) {
  if (geteuid() != 0) GTEST_SKIP() << "hiding /proc takes a mount namespace (root)";
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  const pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/proc", "tmpfs", 0, nullptr) != 0) {
      _exit(10);
    }
    std::string type = "?";
    if (env::Env::Default()->FileSystemType(dir.path(), &type) != 0 || !type.empty()) _exit(11);
    auto store = Store::Open(path, testing::SmallPool());
    if (!store.ok() || !(*store)->Put("k", "v").ok() || !(*store)->Close().ok()) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no namespace; 11: a type without /proc; 12: the pool did not open";
}

}  // namespace
}  // namespace pmstore
