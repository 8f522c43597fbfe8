// The verdict rules of `faultbench doctor`, one situation at a time.
#include <gtest/gtest.h>

#include "faultbench/doctor/doctor.h"

namespace faultbench::doctor {
namespace {

DoctorReport Tmpfs(const std::string& huge, const std::string& shmem_enabled = "never") {
  DoctorReport r;
  r.mount = *ParseMountInfoLine("40 30 0:50 / /mnt/t rw,relatime - tmpfs tmpfs rw,size=1048576k" +
                                (huge.empty() ? std::string() : ",huge=" + huge));
  r.thp = {"madvise", shmem_enabled, "madvise"};
  r.kernel = "6.18.0";
  return r;
}

DoctorReport DaxFile(uint64_t file_bytes, uint64_t aligned_bytes, const std::string& fs = "ext4") {
  DoctorReport r;
  r.mount = *ParseMountInfoLine("41 30 259:0 / /mnt/pmem0 rw,relatime - " + fs + " /dev/pmem0 rw,dax=always");
  r.is_file = true;
  r.file_size = file_bytes;
  r.statx_dax = true;
  r.extents = {.examined = true, .extents = 3, .file_bytes = file_bytes, .aligned_bytes = aligned_bytes};
  r.kernel = "6.18.0";
  return r;
}

bool AnyFixContains(const DoctorReport& r, const std::string& text) {
  for (const auto& b : r.blockers) {
    if (b.fix.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(DoctorJudgeTest, TmpfsHugeAlwaysAllowsPmd) {
  DoctorReport r = Tmpfs("always");
  Judge(r);
  EXPECT_TRUE(r.pmd_possible);
  EXPECT_EQ(r.page_source, "shmem");
}

TEST(DoctorJudgeTest, TmpfsWithoutHugeIsBlockedWithTheRemountFix) {
  for (const std::string huge : {"", "never"}) {
    DoctorReport r = Tmpfs(huge);
    Judge(r);
    EXPECT_FALSE(r.pmd_possible) << huge;
    ASSERT_EQ(r.blockers.size(), 1u);
    EXPECT_NE(r.blockers[0].reason.find("huge="), std::string::npos);
    EXPECT_TRUE(AnyFixContains(r, "huge=always"));
  }
}

TEST(DoctorJudgeTest, ShmemEnabledDenyAndForceOverrideTheMount) {
  DoctorReport denied = Tmpfs("always", "deny");
  Judge(denied);
  EXPECT_FALSE(denied.pmd_possible);
  EXPECT_TRUE(AnyFixContains(denied, "echo advise > /sys/kernel/mm/transparent_hugepage/shmem_enabled"));
  DoctorReport forced = Tmpfs("never", "force");
  Judge(forced);
  EXPECT_TRUE(forced.pmd_possible);
}

TEST(DoctorJudgeTest, DaxFileWithAlignedExtentsAllowsPmd) {
  DoctorReport r = DaxFile(64 << 20, 64 << 20);
  Judge(r);
  EXPECT_TRUE(r.pmd_possible);
  EXPECT_EQ(r.page_source, "dax");
}

TEST(DoctorJudgeTest, MisalignedExtentsOnExt4PointAtBigalloc) {
  DoctorReport r = DaxFile(64 << 20, 16 << 20);
  Judge(r);
  EXPECT_FALSE(r.pmd_possible);
  EXPECT_NE(r.blockers[0].reason.find("25.0%"), std::string::npos) << r.blockers[0].reason;
  EXPECT_TRUE(AnyFixContains(r, "mkfs.ext4 -O bigalloc -C 2M /dev/pmem0"));
}

TEST(DoctorJudgeTest, MisalignedExtentsOnXfsPointAtExtsize) {
  DoctorReport r = DaxFile(64 << 20, 0, "xfs");
  Judge(r);
  EXPECT_FALSE(r.pmd_possible);
  EXPECT_TRUE(AnyFixContains(r, "xfs_io -c 'extsize 2m'"));
}

TEST(DoctorJudgeTest, UncachedPatMemtypeIsFlagged) {
  DoctorReport r = DaxFile(64 << 20, 64 << 20);
  r.pat_memtype = "uncached-minus";
  Judge(r);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("9049771f7d54"), std::string::npos);
}

TEST(DoctorJudgeTest, FilesSmallerThanAPmdAreBlocked) {
  DoctorReport r = DaxFile(1 << 20, 0);
  Judge(r);
  EXPECT_FALSE(r.pmd_possible);
  EXPECT_NE(r.blockers.back().reason.find("smaller than 2 MiB"), std::string::npos);
}

TEST(DoctorJudgeTest, PageCacheDependsOnFileSystemAndKernel) {
  DoctorReport ext4;
  ext4.mount = *ParseMountInfoLine("29 1 254:0 / / rw,relatime - ext4 /dev/vda rw");
  ext4.kernel = "6.18.44";
  Judge(ext4);
  EXPECT_TRUE(ext4.pmd_possible);
  EXPECT_EQ(ext4.page_source, "page cache");
  ext4.kernel = "6.1.0-13-amd64";
  Judge(ext4);
  EXPECT_FALSE(ext4.pmd_possible);
  DoctorReport nfs;
  nfs.mount = *ParseMountInfoLine("50 1 0:60 / /net rw - nfs4 server:/x rw");
  nfs.kernel = "6.18.0";
  Judge(nfs);
  EXPECT_FALSE(nfs.pmd_possible);
}

DoctorReport DeviceDax(uint64_t align) {
  DoctorReport r;
  r.fixed.page_size = align;
  r.fixed.devdax = DevDaxFacts{.name = "dax0.0", .size = 1ull << 30, .align = align, .numa_node = 1,
                               .namespace_name = "namespace0.0", .namespace_mode = "devdax"};
  r.kernel = "6.1.0";
  return r;
}

DoctorReport Hugetlbfs(uint64_t page_size, uint64_t free) {
  DoctorReport r;
  r.mount = *ParseMountInfoLine("44 27 0:41 / /mnt/huge rw,relatime - hugetlbfs none rw,pagesize=2M");
  r.fixed.page_size = page_size;
  r.fixed.hugetlbfs = HugetlbfsFacts{.mount_point = "/mnt/huge", .page_size = page_size};
  r.fixed.hugetlbfs->pool = HugetlbPool{.page_size = page_size, .sysfs_dir = "/sys/kernel/mm/hugepages/hugepages-X",
                                        .nr = free, .free = free};
  r.kernel = "6.18.0";
  return r;
}

bool AnyWarningContains(const DoctorReport& r, const std::string& text) {
  for (const auto& w : r.warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(DoctorJudgeTest, DeviceDaxSaysWhatDoesNotApplyAndThatItsAlignIsThePageSize) {
  DoctorReport r = DeviceDax(2 << 20);
  Judge(r);
  EXPECT_EQ(r.page_source, "device dax");
  EXPECT_TRUE(r.pmd_possible);
  EXPECT_TRUE(r.blockers.empty());
  EXPECT_TRUE(AnyWarningContains(r, "the page cache and file-system extent alignment do not apply"));
  EXPECT_TRUE(AnyWarningContains(r, "--mapping=pmd or auto"));
}

TEST(DoctorJudgeTest, DeviceDaxWithA1GiBAlignIsNoPmdAndTheFixIsNdctl) {
  DoctorReport r = DeviceDax(1 << 30);
  Judge(r);
  EXPECT_FALSE(r.pmd_possible);
  EXPECT_TRUE(AnyFixContains(r, "ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M"));
  EXPECT_TRUE(AnyWarningContains(r, "--mapping=pud or auto"));
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("device DAX dax0.0"), std::string::npos) << text;
  EXPECT_NE(text.find("One page size here: 1.0 GiB"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n  file system "), std::string::npos) << "a device has none: " << text;
}

TEST(DoctorJudgeTest, HugetlbfsIsItsPagesizeAndAnEmptyPoolSaysHowToFillIt) {
  DoctorReport r = Hugetlbfs(2 << 20, 0);
  Judge(r);
  EXPECT_EQ(r.page_source, "hugetlbfs");
  EXPECT_TRUE(r.pmd_possible);
  EXPECT_TRUE(AnyWarningContains(r, "echo N > /sys/kernel/mm/hugepages/hugepages-X/nr_hugepages"));
  DoctorReport filled = Hugetlbfs(2 << 20, 8);
  Judge(filled);
  EXPECT_FALSE(AnyWarningContains(filled, "no free page"));
  DoctorReport giant = Hugetlbfs(1 << 30, 1);
  Judge(giant);
  EXPECT_FALSE(giant.pmd_possible);
  EXPECT_TRUE(AnyFixContains(giant, "mount -t hugetlbfs -o pagesize=2M"));
  EXPECT_NE(RenderText(giant).find("huge page pool       nr_hugepages=1 free=1"), std::string::npos) << RenderText(giant);
}

}  // namespace
}  // namespace faultbench::doctor
