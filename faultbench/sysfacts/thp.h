// The transparent huge page knobs (/sys/kernel/mm/transparent_hugepage):
// doctor judges PMD mappings by them, taint flags defrag=always.
#pragma once

#include <string>

namespace faultbench {

struct ThpFacts {
  std::string enabled;        // the bracketed choice of .../transparent_hugepage/enabled
  std::string shmem_enabled;
  std::string defrag;
};
ThpFacts ReadThpFacts();

}  // namespace faultbench
