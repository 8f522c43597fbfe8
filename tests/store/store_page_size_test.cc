// Which page size a pool's mapping gets from the file system it is on
// (pmstore/pool/pool.cc): 2 MiB (PMD) entries on a memory file system,
// 4 KiB ones on a disk file system, where msync writes back each dirty
// page whole and a 2 MiB page would write 2 MiB for a 100-byte put
// (doc/STORE.md, "Writes on a disk"). Read from the kernel's page tables
// through Stats::pmd_mapped_share, on a real tmpfs mount and on ext4.
#include <sys/vfs.h>

#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store_test_util.h"
#include "support/scratch_mount.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

constexpr long kExt4Magic = 0xEF53;  // statfs(2): EXT2/3/4_SUPER_MAGIC

// Opens a pool in `dir`, writes 16 MiB of values (resident, so the kernel
// has mapped them) and returns what the mapping layer verified.
Stats StatsAfterWrites(const std::string& dir) {
  Options options;
  options.create_if_missing = true;
  options.initial_size = 64ull << 20;
  auto store = testing::OpenOrDie(dir + "/pool", options);
  if (store == nullptr) return {};
  WriteOptions unsynced;
  unsynced.sync = false;  // the page tables are the subject, not durability
  for (int i = 0; i < 4096; ++i) {
    const absl::Status s = store->Put(unsynced, "key-" + std::to_string(i), testing::ValueFor(i, 4096));
    EXPECT_TRUE(s.ok()) << s;
  }
  return store->GetStats();
}

TEST(StorePageSizeTest, APoolOnHugeTmpfsIsMappedWithPmdEntries) {
  ScratchMount tmpfs("tmpfs", "size=256m,huge=always");
  SKIP_UNLESS_MOUNTED(tmpfs);
  const Stats stats = StatsAfterWrites(tmpfs.dir());
  if (stats.pmd_mapped_share < 0) GTEST_SKIP() << "no way to read the page tables here: " << stats.pmd_verify_method;
  EXPECT_GT(stats.pmd_mapped_share, 0.5) << "verified by " << stats.pmd_verify_method;
}

TEST(StorePageSizeTest, APoolOnExt4IsMappedWithPteEntriesOnly) {
  TempDir dir;  // /var/tmp: the root file system
  struct statfs fs {};
  ASSERT_EQ(statfs(dir.path().c_str(), &fs), 0);
  if (fs.f_type != kExt4Magic) GTEST_SKIP() << dir.path() << " is not on ext4 (f_type " << fs.f_type << ")";
  const Stats stats = StatsAfterWrites(dir.path());
  if (stats.pmd_mapped_share < 0) GTEST_SKIP() << "no way to read the page tables here: " << stats.pmd_verify_method;
  // ext4's large folios (Linux 6.16 on) would be mapped by PMD entries in a
  // 2 MiB aligned mapping; the pool asks for 4 KiB ones.
  EXPECT_EQ(stats.pmd_mapped_share, 0) << "verified by " << stats.pmd_verify_method;
  EXPECT_FALSE(stats.dax);
}

}  // namespace
}  // namespace pmstore
