#include "faultbench/sysfacts/thp.h"

#include "faultbench/sysfacts/read_file.h"

namespace faultbench {

ThpFacts ReadThpFacts() {
  const std::string dir = "/sys/kernel/mm/transparent_hugepage/";
  const auto knob = [&](const char* name) { return SelectedChoice(ReadFirstLine(dir + name)); };
  return ThpFacts{knob("enabled"), knob("shmem_enabled"), knob("defrag")};
}

}  // namespace faultbench
