// A file truncated underneath a running `faultbench run` (another process
// shrinks it while the workers' mappings still cover it) makes the next
// touch of a lost page raise SIGBUS. The run must end with one line naming
// the file and the offset, and exit 2, not a core dump.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "support/temp_dir.h"

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FaultbenchSigbusTest, FileTruncatedDuringARunIsAOneLineErrorAndExit2) {
  TempDir dir("/dev/shm");
  const std::string file = dir.File("data");
  const std::string err = dir.File("stderr");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The jump out of the I/O loop abandons what the loop's frames held
    // (histogram storage): leaks by design in a run that is ending, so a
    // sanitizer build must not count them.
    const char* asan = getenv("ASAN_OPTIONS");
    setenv("ASAN_OPTIONS", (std::string(asan != nullptr ? asan : "") + ":detect_leaks=0").c_str(), 1);
    freopen(err.c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    execl(FAULTBENCH_BINARY, FAULTBENCH_BINARY, "run", ("--filename=" + file).c_str(), "--size=64M",
          "--rw=randread", "--time-based", "--runtime=60", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Once the file has its full size the worker maps it and starts its
  // loop; the run is time based, so it is still going when the file shrinks.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  struct stat st = {};
  while ((stat(file.c_str(), &st) != 0 || st.st_size < (64 << 20)) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(st.st_size, 64 << 20) << "faultbench never made its file";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(truncate(file.c_str(), 4096), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string text = ReadAll(err);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "; "
                                 << text;
  EXPECT_EQ(WEXITSTATUS(status), 2) << text;
  EXPECT_NE(text.find("SIGBUS at offset "), std::string::npos) << text;
  EXPECT_NE(text.find(file), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  // The offset is one the truncation removed.
  const size_t at = text.find("SIGBUS at offset ");
  if (at != std::string::npos) {
    const unsigned long long offset = std::strtoull(text.c_str() + at + 17, nullptr, 10);
    EXPECT_GE(offset, 4096u) << text;
    EXPECT_LT(offset, 64ull << 20) << text;
  }
}

}  // namespace
