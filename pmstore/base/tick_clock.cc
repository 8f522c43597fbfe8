#include "pmstore/base/tick_clock.h"

#include "pmstore/base/cpu_flags.h"

namespace pmstore::base {

bool InvariantTscAvailable() {
  static const bool available = [] {
#if defined(__x86_64__)
    return CpuHasFlag("constant_tsc") && CpuHasFlag("nonstop_tsc");
#else
    return false;
#endif
  }();
  return available;
}

}  // namespace pmstore::base
