// Which per-size THP knobs an anonymous job needs set (run/thp_knobs.h), on
// knob values written down here: a 6.18 kernel's sizes, a 6.1 kernel's
// none, the refusals and their reasons.
#include "faultbench/run/thp_knobs.h"

#include <gtest/gtest.h>

#include "pmstore/mapping/mapping.h"

namespace faultbench {
namespace {

using pmstore::mapping::PageIntent;

JobOptions Anon(PageIntent mapping, AnonMemory anon = AnonMemory::kPrivate) {
  JobOptions job;
  job.anon = anon;
  job.size = 8 << 20;
  job.mapping = mapping;
  return job;
}

// As this project's 6.18 machine has them: 8K for shmem only, 2M inheriting.
std::vector<MthpSize> Sizes618() {
  std::vector<MthpSize> sizes;
  for (uint64_t kb = 8; kb <= 2048; kb *= 2) {
    const bool pmd = kb == 2048;
    sizes.push_back({.size = kb << 10,
                     .dir = "/thp/hugepages-" + std::to_string(kb) + "kB",
                     .enabled = kb == 8 ? "" : pmd ? "inherit" : "never",
                     .shmem_enabled = pmd ? "inherit" : "never"});
  }
  return sizes;
}

const ThpFacts kTop = {.enabled = "madvise", .shmem_enabled = "never", .defrag = "madvise"};

std::string Flat(const std::vector<KnobWrite>& writes) {
  std::string out;
  for (const KnobWrite& w : writes) out += w.path + "=" + w.value + " ";
  return out;
}

TEST(ThpKnobs, AFolioSizeIsMadviseAndEveryOtherSizeThatWouldGiveFoliosIsNever) {
  auto writes = KnobWritesFor(Anon(PageIntent::Folio(64 << 10)), Sizes618(), kTop);
  ASSERT_TRUE(writes.ok()) << writes.status();
  // 2M inherits the top-level madvise, so it would win in a MADV_HUGEPAGE mapping: off for the run.
  EXPECT_EQ(Flat(*writes), "/thp/hugepages-64kB/enabled=madvise /thp/hugepages-2048kB/enabled=never ");
}

TEST(ThpKnobs, ShmemUsesShmemEnabledAndAdvise) {
  ThpFacts top = kTop;
  top.shmem_enabled = "advise";
  auto writes = KnobWritesFor(Anon(PageIntent::Folio(8 << 10), AnonMemory::kShared), Sizes618(), top);
  ASSERT_TRUE(writes.ok()) << writes.status();
  EXPECT_EQ(Flat(*writes), "/thp/hugepages-8kB/shmem_enabled=advise /thp/hugepages-2048kB/shmem_enabled=never ");
}

TEST(ThpKnobs, KnobsAlreadyAsNeededAreLeftAlone) {
  std::vector<MthpSize> sizes = Sizes618();
  sizes[3].enabled = "always";  // 64K
  sizes.back().enabled = "never";
  auto writes = KnobWritesFor(Anon(PageIntent::Folio(64 << 10)), sizes, kTop);
  ASSERT_TRUE(writes.ok());
  EXPECT_TRUE(writes->empty()) << Flat(*writes);
}

TEST(ThpKnobs, PteAutoAndFilesNeedNoKnob) {
  for (PageIntent intent : {PageIntent::kPte, PageIntent::kAuto}) {
    EXPECT_TRUE(KnobWritesFor(Anon(intent), Sizes618(), kTop)->empty());
  }
  JobOptions file = Anon(PageIntent::Folio(64 << 10));
  file.anon = AnonMemory::kNone;
  file.directory = "/tmp";
  EXPECT_TRUE(KnobWritesFor(file, Sizes618(), kTop)->empty());
}

TEST(ThpKnobs, AKernelBeforeMultiSizeThpRefusesAFolioSizeAndSaysWhy) {
  const auto writes = KnobWritesFor(Anon(PageIntent::Folio(64 << 10)), {}, kTop);
  ASSERT_FALSE(writes.ok());
  EXPECT_EQ(writes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(writes.status().message().find("multi-size THP came in Linux 6.8"), std::string::npos) << writes.status();
  // pmd there is the top-level knob's to give: madvise already gives it.
  EXPECT_TRUE(KnobWritesFor(Anon(PageIntent::kPmd), {}, kTop)->empty());
}

TEST(ThpKnobs, AKernelBeforeMultiSizeThpSetsTheTopLevelKnobForPmd) {
  // 6.1 as Debian boots it: enabled=always, shmem_enabled=never.
  const ThpFacts debian61 = {.enabled = "always", .shmem_enabled = "never", .defrag = "madvise"};
  auto shared = KnobWritesFor(Anon(PageIntent::kPmd, AnonMemory::kShared), {}, debian61);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(Flat(*shared), std::string(kThpDir) + "/shmem_enabled=advise ");
  EXPECT_TRUE(KnobWritesFor(Anon(PageIntent::kPmd), {}, debian61)->empty());  // always gives it

  ThpFacts off = debian61;
  off.enabled = "never";
  auto private_memory = KnobWritesFor(Anon(PageIntent::kPmd), {}, off);
  ASSERT_TRUE(private_memory.ok()) << private_memory.status();
  EXPECT_EQ(Flat(*private_memory), std::string(kThpDir) + "/enabled=madvise ");

  off.shmem_enabled = "force";  // every shmem mapping gets 2 MiB folios already
  EXPECT_TRUE(KnobWritesFor(Anon(PageIntent::kPmd, AnonMemory::kShared), {}, off)->empty());
  off.shmem_enabled = "deny";
  const auto denied = KnobWritesFor(Anon(PageIntent::kPmd, AnonMemory::kShared), {}, off);
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("shmem_enabled is deny"), std::string::npos) << denied.status();
}

TEST(ThpKnobs, ASizeWithoutItsKindOfKnobIsRefused) {
  const auto eight = KnobWritesFor(Anon(PageIntent::Folio(8 << 10)), Sizes618(), kTop);
  ASSERT_FALSE(eight.ok());
  EXPECT_NE(eight.status().message().find("8K folios to shmem only (--anon=shared)"), std::string::npos)
      << eight.status();
  std::vector<MthpSize> no_64k = Sizes618();
  no_64k.erase(no_64k.begin() + 3);
  const auto missing = KnobWritesFor(Anon(PageIntent::Folio(64 << 10)), no_64k, kTop);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("offers no 64K folios"), std::string::npos) << missing.status();
}

TEST(ThpKnobs, ShmemEnabledDenyOrForceOverridesEverySize) {
  for (const char* top_value : {"deny", "force"}) {
    ThpFacts top = kTop;
    top.shmem_enabled = top_value;
    const auto writes = KnobWritesFor(Anon(PageIntent::Folio(16 << 10), AnonMemory::kShared), Sizes618(), top);
    ASSERT_FALSE(writes.ok()) << top_value;
    EXPECT_NE(writes.status().message().find(std::string("shmem_enabled is ") + top_value), std::string::npos);
  }
}

}  // namespace
}  // namespace faultbench
