// A run's timing-free signature: which counters it keeps, their deltas
// around the workload, and the parts that come from the workers.
#include "faultbench/result/signature.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(Signature, KeepsTheMappingCountersAndEveryNumaCounter) {
  for (const char* name : {"thp_fault_alloc", "thp_fault_fallback", "thp_file_alloc", "thp_file_mapped", "pgfault",
                           "pgmajfault", "numa_hit", "numa_pages_migrated"}) {
    EXPECT_TRUE(IsSignatureCounter(name)) << name;
  }
  for (const char* name : {"pgsteal_kswapd", "thp_split_page", "nr_free_pages", "pgfault_extra"}) {
    EXPECT_FALSE(IsSignatureCounter(name)) << name;
  }
}

TEST(Signature, DeltasOfTheKeptCountersAndPageTablesWhileMapped) {
  VmCounters before, after;
  before.vmstat = {{"pgfault", 1000}, {"thp_fault_fallback", 5}, {"pgsteal_kswapd", 1}};
  after.vmstat = {{"pgfault", 1064}, {"thp_fault_fallback", 69}, {"pgsteal_kswapd", 9}, {"numa_hit", 7}};
  before.page_tables_kb = 132;
  after.page_tables_kb = 388;
  RunSignature s;
  AddCounterDeltas(before, after, s);
  EXPECT_EQ(s.vmstat_deltas.size(), 2u) << "pgsteal is not kept; numa_hit was not there before";
  EXPECT_EQ(s.vmstat_deltas.at("pgfault"), 64);
  EXPECT_EQ(s.vmstat_deltas.at("thp_fault_fallback"), 64);
  EXPECT_EQ(s.page_tables_kb, 388u);
  EXPECT_EQ(s.page_tables_delta_kb, 256);
}

TEST(Signature, AWorkersFaultsSharesAndDaxTalliesAddUp) {
  WorkerResult a, b;
  a.total.rusage.minor_faults = 64;
  a.total.bytes_accessed = 128 * kMiB;
  a.mapping.verified = true;
  a.mapping.census = {.pmd_bytes = 128 * kMiB, .pte_bytes = 0};
  a.mapping.dax_trace = DaxTraceTally{.pmd_nopage = 60, .pmd_needdsync = 4, .pmd_fallback = 0};
  b.total.rusage.minor_faults = 16384;
  b.total.rusage.major_faults = 16384;
  b.total.bytes_accessed = 128 * kMiB;
  b.mapping.verified = true;
  b.mapping.census = {.pmd_bytes = 0, .pte_bytes = 128 * kMiB};
  b.mapping.dax_trace = DaxTraceTally{.pmd_fallback = 64, .pte_faults = 32768};
  RunSignature s;
  SetWorkerParts({a, b}, s);
  EXPECT_EQ(s.faults, 64u + 32768u);
  EXPECT_DOUBLE_EQ(s.faults_per_mib, (64.0 + 32768) / 256);
  EXPECT_TRUE(s.verified);
  EXPECT_DOUBLE_EQ(s.pmd_share, 0.5);
  EXPECT_DOUBLE_EQ(s.pud_share, 0);
  ASSERT_TRUE(s.dax_trace.has_value());
  EXPECT_EQ(s.dax_trace->pmd_installed(), 64u);
  EXPECT_EQ(s.dax_trace->pmd_fallback, 64u);
  EXPECT_EQ(s.dax_trace->pte_faults, 32768u);
  b.mapping.verified = false;
  SetWorkerParts({a, b}, s);
  EXPECT_FALSE(s.verified) << "one worker not read back: the shares are not the run's";
}

TEST(Signature, PudBytesMakeThePudShare) {
  WorkerResult pud, pmd;
  pud.mapping.verified = pmd.mapping.verified = true;
  pud.mapping.census = {.pmd_bytes = 0, .pte_bytes = 0, .pud_bytes = 1ull << 30};
  pmd.mapping.census = {.pmd_bytes = 1ull << 30, .pte_bytes = 0};
  RunSignature s;
  SetWorkerParts({pud, pmd}, s);
  EXPECT_DOUBLE_EQ(s.pud_share, 0.5);
  EXPECT_DOUBLE_EQ(s.pmd_share, 0.5);
}

// Anonymous memory, 64K asked for: what the histograms hold against what
// the per-size counters say the workload allocated.
WorkerResult AnonWorker(std::map<uint64_t, uint64_t> folios) {
  WorkerResult w;
  w.job.anon = AnonMemory::kPrivate;
  w.mapping.verified = true;
  w.mapping.folios = pmstore::mapping::FolioCensus{.folios = std::move(folios)};
  return w;
}

TEST(Signature, PerSizeCountersAreDeltasLikeVmstat) {
  VmCounters before, after;
  before.mthp = {{"64K.anon_fault_alloc", 10}, {"64K.split", 2}};
  after.mthp = {{"64K.anon_fault_alloc", 1034}, {"64K.split", 2}, {"16K.shmem_alloc", 5}};
  RunSignature s;
  AddCounterDeltas(before, after, s);
  EXPECT_EQ(s.mthp_deltas.at("64K.anon_fault_alloc"), 1024);
  EXPECT_EQ(s.mthp_deltas.at("64K.split"), 0);
  EXPECT_FALSE(s.mthp_deltas.contains("16K.shmem_alloc")) << "not there before: no delta";
}

TEST(Signature, TheFolioCheckAgreesWhenAllocationsMinusSplitsAreTheHistogram) {
  RunSignature s;
  s.mthp_deltas = {{"64K.anon_fault_alloc", 1030}, {"64K.split", 6}, {"2M.anon_fault_alloc", 0}};
  SetWorkerParts({AnonWorker({{4096, 96}, {64 << 10, 1000}}), AnonWorker({{64 << 10, 24}})}, s);
  EXPECT_EQ(s.folios, (std::map<uint64_t, uint64_t>{{4096, 96}, {64 << 10, 1024}}));
  ASSERT_EQ(s.folio_checks.size(), 1u) << "4K has no counters; 2M neither in the histogram nor counted";
  EXPECT_EQ(s.folio_checks[0].size, 64u << 10);
  EXPECT_EQ(s.folio_checks[0].histogram, 1024u);
  EXPECT_EQ(s.folio_checks[0].allocated, 1024);
  EXPECT_TRUE(s.folio_checks[0].agree());
}

TEST(Signature, AHistogramThatMisreportsASizeDisagreesWithTheCounters) {
  RunSignature s;
  s.mthp_deltas = {{"64K.anon_fault_alloc", 1024}, {"32K.anon_fault_alloc", 0}};
  SetWorkerParts({AnonWorker({{64 << 10, 1023}, {32 << 10, 2}})}, s);  // one 64K folio read as two of 32K
  ASSERT_EQ(s.folio_checks.size(), 2u);
  EXPECT_FALSE(s.folio_checks[0].agree()) << "32K: 2 in the histogram, none allocated";
  EXPECT_FALSE(s.folio_checks[1].agree()) << "64K: 1023 in the histogram, 1024 allocated";
}

TEST(Signature, FilesAreNotCheckedTheirFoliosMayBeOlderThanTheRun) {
  WorkerResult file = AnonWorker({{2 << 20, 64}});
  file.job.anon = AnonMemory::kNone;
  RunSignature s;
  s.mthp_deltas = {{"2M.shmem_alloc", 0}};
  SetWorkerParts({file}, s);
  EXPECT_EQ(s.folios.at(2 << 20), 64u);
  EXPECT_TRUE(s.folio_checks.empty());
}

}  // namespace
}  // namespace faultbench
