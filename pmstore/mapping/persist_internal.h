// Persist strategies for the mmap engine; the mapping picks one at map time.
#pragma once

#include "pmstore/mapping/persist.h"

namespace pmstore::mapping {

// msync(MS_SYNC) of the pages covering the range: page granularity.
PersistOps MsyncPersistOps();
// CLWB, else CLFLUSHOPT, else CLFLUSH per line, then SFENCE: for MAP_SYNC
// mappings of DAX files.
PersistOps CacheLinePersistOps();

}  // namespace pmstore::mapping
