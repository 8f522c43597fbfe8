// Replays every input under tests/fuzz/regressions/ (inputs the fuzzer
// once found) and the seed corpus through the fuzz target's checks, in
// the normal build: no fuzzer or clang needed to keep them fixed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "damage/damage_harness.h"
#include "fuzz/pool_edits.h"
#include "gtest/gtest.h"
#include "support/temp_dir.h"

namespace pmstore::damage {
namespace {

std::vector<std::filesystem::path> Inputs(const char* dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PMSTORE_FUZZ_DIR) + "/" + dir, ec)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void Replay(const char* dir) {
  TempDir tmp("/dev/shm");
  History history;
  std::string why;
  ASSERT_TRUE(BuildReferencePool(tmp.File("reference"), &history, &why)) << why;
  const std::string image = ReadFile(tmp.File("reference"));
  const auto files = Inputs(dir);
  std::string damaged;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string input = bytes.str();
    ApplyEdits(image, input, &damaged);
    ASSERT_TRUE(WriteFile(tmp.File("pool"), damaged));
    const bool hostile = !input.empty() && (static_cast<uint8_t>(input[0]) & 0x0f) != 0;
    const Outcome out = ExerciseDamagedPool(tmp.File("pool"), history, hostile);
    for (const auto& v : out.violations) ADD_FAILURE() << file << ": " << v;
  }
  std::printf("replayed %zu inputs from tests/fuzz/%s\n", files.size(), dir);
}

TEST(FuzzRegressionsTest, FoundInputsStayFixed) { Replay("regressions"); }

TEST(FuzzRegressionsTest, SeedCorpusIsHandled) { Replay("corpus"); }

}  // namespace
}  // namespace pmstore::damage
