// pmstore's folders are layers (pmstore/LAYERS, top first): a file includes
// headers of its own folder and of folders listed below it, never of one
// listed above. Separate libraries do not catch an upward include of a
// header of plain structs or inline functions (it needs no link), so this
// test reads every source under pmstore/ and checks each #include against
// the order it reads from pmstore/LAYERS.
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
  return pmstore::testing::LayerViolations(layers, "pmstore/LAYERS", kRoot, path, text);
}

std::vector<std::string> TreeLayers() {
  return pmstore::testing::ParseLayers(ReadLayersText(kRoot / "pmstore" / "LAYERS"), "pmstore");
}

// Example layers for the rule tests, a few of the store's.
const std::vector<std::string> kExample = {"pmstore/db", "pmstore/include", "pmstore/index", "pmstore/space",
                                           "pmstore/format", "pmstore/base"};

TEST(PmstoreLayerRules, AnIncludeOfAHigherFolderIsAViolation) {
  const auto found = Violations(kExample, "pmstore/format/record.h", "#include \"pmstore/space/allocator.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("pmstore/format/record.h:1: includes pmstore/space/allocator.h"), std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("pmstore/LAYERS puts above pmstore/format"), std::string::npos) << found[0];
}

TEST(PmstoreLayerRules, APublicHeaderBelongsToTheIncludeLayer) {
  // <pmstore/options.h> is pmstore/include/pmstore/options.h: db may use it, index may not.
  EXPECT_TRUE(Violations(kExample, "pmstore/db/store_impl.h", "#include \"pmstore/options.h\"").empty());
  const auto found = Violations(kExample, "pmstore/index/leaf_index.h", "#include \"pmstore/options.h\"");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("from pmstore/include"), std::string::npos) << found[0];
  // A name that is no public header is not taken for one.
  EXPECT_EQ(Violations(kExample, "pmstore/db/x.cc", "#include \"pmstore/no_such_header.h\"").size(), 1u);
}

TEST(PmstoreLayerRules, OwnAndLowerFoldersAndOtherLibrariesPass) {
  const std::string text =
      "#include \"pmstore/index/leaf_index.h\"\n#include \"pmstore/space/allocator.h\"\n"
      "#include \"pmstore/format/leaf.h\"\n#include <absl/status/status.h>\n#include <vector>\n";
  EXPECT_TRUE(Violations(kExample, "pmstore/index/leaf_index.cc", text).empty());
  EXPECT_EQ(Violations(kExample, "pmstore/secret/x.cc", "").size(), 1u) << "a folder LAYERS does not list";
}

TEST(PmstoreLayers, LayersListsEveryFolderOfPmstoreAndNothingElse) {
  const std::vector<std::string> layers = TreeLayers();
  ASSERT_GE(layers.size(), 10u) << "pmstore/LAYERS is missing or too short";
  EXPECT_EQ(layers[layers.size() - 3], "pmstore/mapping") << "faultbench shares the three lowest layers";
  EXPECT_EQ(layers[layers.size() - 2], "pmstore/env");
  EXPECT_EQ(layers.back(), "pmstore/base");
  for (const std::string& layer : layers) EXPECT_TRUE(fs::is_directory(kRoot / layer)) << layer << " does not exist";
  for (const auto& entry : fs::directory_iterator(kRoot / "pmstore")) {
    const std::string path = fs::relative(entry.path(), kRoot).string();
    if (entry.is_directory()) {
      EXPECT_GE(LayerOf(layers, path + "/x"), 0) << path << " is a folder that pmstore/LAYERS does not list";
    } else {
      EXPECT_FALSE(pmstore::testing::IsLayeredSource(entry.path())) << path << ": sources live in a layer's folder";
    }
  }
}

TEST(PmstoreLayers, EveryIncludeUnderPmstorePointsDown) {
  const std::vector<std::string> layers = TreeLayers();
  size_t files = 0;
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "pmstore")) {
    if (!entry.is_regular_file() || !pmstore::testing::IsLayeredSource(entry.path())) continue;
    ++files;
    const std::string path = fs::relative(entry.path(), kRoot).string();
    for (std::string& v : Violations(layers, path, ReadLayersText(entry.path()))) found.push_back(std::move(v));
  }
  EXPECT_GE(files, 80u) << "read too few sources under " << kRoot << " for the check to mean anything";
  std::string all;
  for (const std::string& v : found) all += "  " + v + "\n";
  EXPECT_TRUE(found.empty()) << found.size() << " include(s) against pmstore/LAYERS:\n" << all;
}

}  // namespace
