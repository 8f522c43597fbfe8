#include "faultbench/measure/dax_trace.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

// Lines in the format of include/trace/events/fs_dax.h, as the trace file
// prints them with the record-tgid option on.
constexpr const char* kPmdNopage =
    "      faultbench-4242    (   4240) [001] .....   812.113: dax_pmd_fault_done: dev 259:0 ino 0xc "
    "shared WRITE|ALLOW_RETRY|KILLABLE|USER address 0x7f0000200000 vm_start 0x7f0000000000 "
    "vm_end 0x7f0010000000 pgoff 0x200 max_pgoff 0x3ffff NOPAGE";
constexpr const char* kPmdFallback =
    "      faultbench-4242    (   4240) [001] .....   812.114: dax_pmd_fault_done: dev 259:0 ino 0xc "
    "shared WRITE|USER address 0x7f0000201000 vm_start 0x7f0000001000 vm_end 0x7f0010001000 pgoff 0x200 "
    "max_pgoff 0x3ffff FALLBACK";
constexpr const char* kPmdDsync =
    "           <...>-4240    (   4240) [000] .....   812.115: dax_pmd_fault_done: dev 259:0 ino 0xc "
    "shared WRITE address 0x7f0000400000 vm_start 0x7f0000000000 vm_end 0x7f0010000000 pgoff 0x400 "
    "max_pgoff 0x3ffff NEEDDSYNC\n";
constexpr const char* kPte =
    "      faultbench-4242    (   4240) [001] .....   812.116: dax_pte_fault_done: dev 259:0 ino 0xc "
    "shared WRITE address 0x7f0000201000 pgoff 0x201 NOPAGE";

TEST(DaxTraceTest, TalliesPmdResultsAndPteFaultsOfTheProcess) {
  DaxTraceTally tally;
  for (const char* line : {kPmdNopage, kPmdFallback, kPmdDsync, kPte, kPte}) AddTraceLine(line, 4240, tally);
  EXPECT_EQ(tally.pmd_nopage, 1u);
  EXPECT_EQ(tally.pmd_fallback, 1u);
  EXPECT_EQ(tally.pmd_needdsync, 1u);
  EXPECT_EQ(tally.pmd_installed(), 2u);
  EXPECT_EQ(tally.pte_faults, 2u);
}

TEST(DaxTraceTest, IgnoresOtherProcessesAndOtherEvents) {
  DaxTraceTally tally;
  AddTraceLine(kPmdNopage, 999, tally);
  AddTraceLine("# tracer: nop", 4240, tally);
  AddTraceLine("  fio-4240 [001] ..... 1.0: dax_load_hole: dev 259:0 ino 0xc shared", 4240, tally);
  EXPECT_EQ(tally.pmd_installed() + tally.pmd_fallback + tally.pte_faults, 0u);
}

TEST(DaxTraceTest, FallsBackToCommPidWithoutTgidColumn) {
  DaxTraceTally tally;
  AddTraceLine("   my-tool-77 [000] ..... 3.0: dax_pmd_fault_done: dev 259:0 ino 0x1 shared WRITE address 0x0 "
               "vm_start 0x0 vm_end 0x0 pgoff 0x0 max_pgoff 0x0 NOPAGE",
               77, tally);
  EXPECT_EQ(tally.pmd_nopage, 1u);
}

}  // namespace
}  // namespace faultbench
