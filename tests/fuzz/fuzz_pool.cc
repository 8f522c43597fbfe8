// libFuzzer target: a valid reference pool with the input's edits applied
// (pool_edits.h) goes through Check, Open, a verified Get of every key and
// a full iteration. A crash, an out-of-bounds read (ASan), a hang (the
// fuzzer's -timeout) or a broken promise of damage_harness.h is a finding.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "damage/damage_harness.h"
#include "fuzz/pool_edits.h"

namespace {

struct Reference {
  std::string dir;
  std::string pool;
  std::string image;
  pmstore::damage::History history;
};

Reference* reference = nullptr;

void RemoveDir() {
  std::error_code ec;
  if (reference != nullptr) std::filesystem::remove_all(reference->dir, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  reference = new Reference;
  char dir[] = "/dev/shm/pmstore-fuzz-XXXXXX";
  if (mkdtemp(dir) == nullptr) abort();
  reference->dir = dir;
  atexit(RemoveDir);
  std::string why;
  if (!pmstore::damage::BuildReferencePool(reference->dir + "/reference", &reference->history, &why)) {
    std::fprintf(stderr, "cannot build the reference pool: %s\n", why.c_str());
    abort();
  }
  reference->image = pmstore::damage::ReadFile(reference->dir + "/reference");
  reference->pool = reference->dir + "/pool";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static std::string image;
  pmstore::damage::ApplyEdits(reference->image, input, &image);
  if (!pmstore::damage::WriteFile(reference->pool, image)) abort();
  const bool hostile = size > 0 && (data[0] & 0x0f) != 0;
  const auto out = pmstore::damage::ExerciseDamagedPool(reference->pool, reference->history, hostile);
  if (!out.violations.empty()) {
    for (const auto& v : out.violations) std::fprintf(stderr, "violation: %s\n", v.c_str());
    abort();
  }
  return 0;
}
