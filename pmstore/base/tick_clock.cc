#include "pmstore/base/tick_clock.h"

#include <fstream>
#include <string>

namespace pmstore::base {

bool InvariantTscAvailable() {
  static const bool available = [] {
#if defined(__x86_64__)
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("flags", 0) == 0) {
        return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
      }
    }
#endif
    return false;
  }();
  return available;
}

}  // namespace pmstore::base
