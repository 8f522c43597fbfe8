#include "faultbench/sysfacts/kernel.h"

#include <sys/utsname.h>

#include <cstdio>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/read_file.h"

namespace faultbench {
namespace {

// /proc/config.gz is gzip: decompress it with the system's zcat rather than
// linking zlib for one file.
std::string ReadGzip(const std::string& path) {
  std::string text;
  FILE* pipe = popen(absl::StrCat("zcat ", path, " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return text;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0) text.append(chunk, n);
  pclose(pipe);
  return text;
}

}  // namespace

std::string KernelRelease() {
  utsname u{};
  uname(&u);
  return u.release;
}

bool KernelAtLeast(const std::string& release, int major_wanted, int minor_wanted) {
  int major_have = 0, minor_have = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major_have, &minor_have) != 2) return false;
  return major_have > major_wanted || (major_have == major_wanted && minor_have >= minor_wanted);
}

KernelConfig ReadKernelConfig() {
  KernelConfig config;
  config.text = ReadGzip("/proc/config.gz");
  if (!config.text.empty()) {
    config.source = "/proc/config.gz";
    return config;
  }
  const std::string path = absl::StrCat("/boot/config-", KernelRelease());
  config.text = ReadWholeFile(path);
  if (!config.text.empty()) config.source = path;
  return config;
}

namespace {

// Options that are off until the command line turns them on.
struct BootGated {
  const char* option;
  const char* parameter;       // the command-line word that turns it on
  const char* on_by_default;   // a config option that turns it on without one, or nullptr
};
constexpr BootGated kBootGated[] = {
    {"CONFIG_PAGE_POISONING", "page_poison=1", nullptr},
    {"CONFIG_DEBUG_PAGEALLOC", "debug_pagealloc=on", "CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT=y"},
    {"CONFIG_PAGE_OWNER", "page_owner=on", nullptr},
};

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  std::string w;
  while (words >> w) {
    if (w == word) return true;
  }
  return false;
}

// False for a boot-gated option the command line leaves off.
bool Active(const std::string& option, const std::string& config_text, const std::string& cmdline) {
  for (const BootGated& g : kBootGated) {
    if (option != g.option) continue;
    const bool default_on = g.on_by_default != nullptr && config_text.find(absl::StrCat(g.on_by_default, "\n")) != std::string::npos;
    return default_on || HasWord(cmdline, g.parameter);
  }
  return true;
}

}  // namespace

std::vector<std::string> DebugOptionsIn(const std::string& config_text, const std::string& cmdline) {
  static const char* const kDebugOptions[] = {
      "CONFIG_LOCKDEP",         "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_VM",        "CONFIG_KASAN",
      "CONFIG_DEBUG_PAGEALLOC", "CONFIG_DEBUG_OBJECTS", "CONFIG_DEBUG_ATOMIC_SLEEP", "CONFIG_KCSAN",
      "CONFIG_DEBUG_KMEMLEAK",  "CONFIG_PAGE_OWNER",    "CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_KMSAN",
      "CONFIG_DEBUG_VM_PGTABLE", "CONFIG_PAGE_POISONING"};
  std::vector<std::string> enabled;
  std::istringstream lines(config_text);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* option : kDebugOptions) {
      if (line == absl::StrCat(option, "=y") && Active(option, config_text, cmdline)) enabled.emplace_back(option);
    }
  }
  return enabled;
}

}  // namespace faultbench
