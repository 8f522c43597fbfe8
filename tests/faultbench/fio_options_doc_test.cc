// doc/FAULTBENCH.md names every fio option faultbench supports, accepts as
// inert, or refuses (with the reason), as faultbench/workload/fio_options.cc
// classifies them: the page cannot fall behind the code.
#include <gtest/gtest.h>

#include "faultbench/workload/fio_options.h"
#include "support/read_text.h"

namespace faultbench {
namespace {

TEST(FioOptionsDoc, TheJobFilesSectionNamesEveryOption) {
  const std::string page = ReadText(std::string(SOURCE_ROOT) + "/doc/FAULTBENCH.md");
  const size_t begin = page.find("### Job files");
  ASSERT_NE(begin, std::string::npos);
  const std::string section = page.substr(begin, page.find("\n### ", begin + 1) - begin);
  const OptionKinds& kinds = FioOptionKinds();
  auto named = [&](const std::string& name) { return section.find("`" + name) != std::string::npos; };
  for (const std::string& name : kinds.supported) EXPECT_TRUE(named(name)) << "supported, not documented: " << name;
  for (const std::string& name : kinds.inert) EXPECT_TRUE(named(name)) << "inert, not documented: " << name;
  for (const auto& [name, why] : kinds.refused) {
    EXPECT_TRUE(named(name)) << "refused, not documented: " << name << " (" << why << ")";
  }
}

}  // namespace
}  // namespace faultbench
