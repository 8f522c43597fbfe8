// faultbench's folders are layers (faultbench/LAYERS, top first): a file
// includes headers of its own folder and of folders listed below it, never
// of one listed above. Separate libraries do not catch an upward include of
// a header of plain structs (it needs no link), so this test reads every
// source of faultbench/, pmstore/base, pmstore/env and pmstore/mapping and checks each
// #include against the order it reads from faultbench/LAYERS.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/layers.h"

namespace {

namespace fs = std::filesystem;
using pmstore::testing::LayerOf;
using pmstore::testing::ReadLayersText;

const fs::path kRoot = SOURCE_ROOT;

std::vector<std::string> Violations(const std::vector<std::string>& layers, const std::string& path,
                                    const std::string& text) {
  return pmstore::testing::LayerViolations(layers, "faultbench/LAYERS", kRoot, path, text);
}

bool IsSource(const fs::path& path) { return pmstore::testing::IsLayeredSource(path); }

std::vector<std::string> TreeLayers() {
  return pmstore::testing::ParseLayers(ReadLayersText(kRoot / "faultbench" / "LAYERS"), "faultbench");
}

// Example layers for the rule tests: four of faultbench's and pmstore's two.
const std::vector<std::string> kExample = {"faultbench/run", "faultbench/result", "faultbench/numa",
                                           "faultbench/sysfacts", "pmstore/mapping", "pmstore/base"};

TEST(LayerRules, AnIncludeOfAHigherFolderIsAViolation) {
  const auto found = Violations(kExample, "faultbench/numa/numa_policy.h", "#include \"faultbench/run/worker.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("faultbench/numa/numa_policy.h:1: includes faultbench/run/worker.h"), std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("puts above faultbench/numa"), std::string::npos) << found[0];
  // Plain structs need no link, so only an include says it: the same for a header of data only.
  EXPECT_EQ(Violations(kExample, "faultbench/sysfacts/x.cc", "  # include <faultbench/result/run_result.h>").size(), 1u);
}

TEST(LayerRules, IncludesOfTheOwnAndLowerFoldersAndOfOtherLibrariesPass) {
  const std::string text =
      "#include \"faultbench/run/worker.h\"\n#include \"faultbench/result/run_result.h\"\n"
      "#include \"faultbench/sysfacts/mount.h\"\n#include \"pmstore/mapping/mapping.h\"\n"
      "#include \"pmstore/base/units.h\"\n#include <vector>\n#include \"absl/strings/str_cat.h\"\n"
      "// #include text in a comment that is not at the start of a line: faultbench/run/x.h\n";
  EXPECT_TRUE(Violations(kExample, "faultbench/run/runner.cc", text).empty());
}

TEST(LayerRules, TheStoreAndFoldersOutsideTheLayersAreViolations) {
  const std::string text = "#include \"pmstore/store.h\"\n#include \"pmstore/pool/pool.h\"\n"
                           "#include \"faultbench/secret/x.h\"\n";
  EXPECT_EQ(Violations(kExample, "faultbench/run/runner.cc", text).size(), 3u);
  EXPECT_EQ(Violations(kExample, "faultbench/main.cc", "").size(), 1u) << "a source outside every folder";
  EXPECT_EQ(Violations(kExample, "faultbench/secret/x.cc", "").size(), 1u) << "a folder LAYERS does not list";
}

TEST(LayerRules, PmstoresLayersPointDownToo) {
  EXPECT_EQ(Violations(kExample, "pmstore/mapping/mapping.cc", "#include \"faultbench/sysfacts/mount.h\"").size(), 1u);
  EXPECT_EQ(Violations(kExample, "pmstore/base/units.cc", "#include \"pmstore/mapping/mapping.h\"").size(), 1u);
  EXPECT_TRUE(Violations(kExample, "pmstore/mapping/mapping.cc", "#include \"pmstore/base/units.h\"").empty());
}

TEST(Layers, LayersListsFaultbenchsFoldersAndPmstoresThreeBelowThem) {
  const std::vector<std::string> layers = TreeLayers();
  ASSERT_GE(layers.size(), 4u) << "faultbench/LAYERS is missing or empty";
  EXPECT_EQ(layers[layers.size() - 3], "pmstore/mapping");
  EXPECT_EQ(layers[layers.size() - 2], "pmstore/env");
  EXPECT_EQ(layers.back(), "pmstore/base");
  for (const std::string& layer : layers) EXPECT_TRUE(fs::is_directory(kRoot / layer)) << layer << " does not exist";
  for (const auto& entry : fs::directory_iterator(kRoot / "faultbench")) {
    const std::string path = fs::relative(entry.path(), kRoot).string();
    if (entry.is_directory()) {
      EXPECT_GE(LayerOf(layers, path + "/x"), 0) << path << " is a folder that faultbench/LAYERS does not list";
    } else {
      EXPECT_FALSE(IsSource(entry.path())) << path << ": sources live in a layer's folder";
    }
  }
}

TEST(Layers, EveryIncludeOfFaultbenchAndOfPmstoresTwoLayersPointsDown) {
  const std::vector<std::string> layers = TreeLayers();
  size_t files = 0;
  std::vector<std::string> found;
  for (const char* tree : {"faultbench", "pmstore/base", "pmstore/env", "pmstore/mapping"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / tree)) {
      if (!entry.is_regular_file() || !IsSource(entry.path())) continue;
      ++files;
      const std::string path = fs::relative(entry.path(), kRoot).string();
      for (std::string& v : Violations(layers, path, ReadLayersText(entry.path()))) found.push_back(std::move(v));
    }
  }
  EXPECT_GE(files, 80u) << "read too few sources under " << kRoot << " for the check to mean anything";
  std::string all;
  for (const std::string& v : found) all += "  " + v + "\n";
  EXPECT_TRUE(found.empty()) << found.size() << " include(s) against faultbench/LAYERS:\n" << all;
}

}  // namespace
