#include "pmstore/env/boot_id.h"

#include <cstdio>
#include <mutex>

namespace pmstore::internal {
namespace {

std::mutex g_mu;
bool g_read = false;
BootId g_boot;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

BootId ReadBootId() {
  std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "re");
  if (f == nullptr) return BootId();
  char text[64] = {0};
  const bool got = std::fgets(text, sizeof(text), f) != nullptr;
  std::fclose(f);
  return got ? ParseBootId(text) : BootId();
}

}  // namespace

BootId ParseBootId(const char* text) {
  BootId id;
  int digits = 0;
  for (const char* p = text; *p != '\0' && *p != '\n'; ++p) {
    if (*p == '-') continue;
    const int d = HexDigit(*p);
    if (d < 0 || digits == 32) return BootId();
    id.words[digits / 16] = id.words[digits / 16] << 4 | static_cast<uint64_t>(d);
    ++digits;
  }
  return digits == 32 ? id : BootId();
}

BootId CurrentBootId() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_read) {
    g_boot = ReadBootId();
    g_read = true;
  }
  return g_boot;
}

void SetBootIdForTesting(const BootId& id) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_boot = id;
  g_read = true;
}

}  // namespace pmstore::internal
