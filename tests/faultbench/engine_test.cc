#include "faultbench/engine/io_engine.h"

#include <gtest/gtest.h>
#include <libpmem2.h>

namespace faultbench {
namespace {

// fio's libpmem engine: direct picks the stores, sync whether to drain
// (engines/libpmem.c, fio_libpmem_queue).
TEST(Pmem2WriteFlags, LibpmemTakesDirectAndSyncAsFioPassesThem) {
  EXPECT_EQ(Pmem2WriteFlags({.libpmem_flags = true, .direct = true, .sync = true}),
            static_cast<unsigned>(PMEM2_F_MEM_NONTEMPORAL));
  EXPECT_EQ(Pmem2WriteFlags({.libpmem_flags = true, .direct = true, .sync = false}),
            static_cast<unsigned>(PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_NODRAIN));
  EXPECT_EQ(Pmem2WriteFlags({.libpmem_flags = true, .direct = false, .sync = true}),
            static_cast<unsigned>(PMEM2_F_MEM_TEMPORAL));
  EXPECT_EQ(Pmem2WriteFlags({.libpmem_flags = true, .direct = false, .sync = false}),
            static_cast<unsigned>(PMEM2_F_MEM_TEMPORAL | PMEM2_F_MEM_NODRAIN));
}

// faultbench's pmem2 and fio's dev-dax copy and persist every write.
TEST(Pmem2WriteFlags, OtherwiseEveryWriteIsPersisted) {
  EXPECT_EQ(Pmem2WriteFlags({}), 0u);
  EXPECT_EQ(Pmem2WriteFlags({.libpmem_flags = false, .direct = true, .sync = false}), 0u);
}

TEST(DescribeWrites, NamesWhatTheReportShows) {
  using pmstore::mapping::Engine;
  EXPECT_EQ(DescribeWrites(Engine::kMmap, {.libpmem_flags = true, .direct = true}), "memcpy");
  EXPECT_EQ(DescribeWrites(Engine::kPmem2, {}), "persisted");
  EXPECT_EQ(DescribeWrites(Engine::kPmem2, {.libpmem_flags = true, .direct = true, .sync = true}),
            "non-temporal, drained");
  EXPECT_EQ(DescribeWrites(Engine::kPmem2, {.libpmem_flags = true}), "temporal, not drained");
}

}  // namespace
}  // namespace faultbench
