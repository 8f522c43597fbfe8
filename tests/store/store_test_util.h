// Helpers shared by the store's tests: fresh pools in a temp dir on a
// chosen file system.
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "support/temp_dir.h"

namespace pmstore::testing {

inline Options SmallPool(uint64_t initial = 8ull << 20, uint64_t max = 64ull << 20) {
  Options options;
  options.create_if_missing = true;
  options.initial_size = initial;
  options.max_size = max;
  return options;
}

inline std::unique_ptr<Store> OpenOrDie(const std::string& path, const Options& options) {
  auto store = Store::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

inline std::string ValueFor(uint64_t i, size_t size) {
  std::string value(size, '\0');
  for (size_t j = 0; j < size; ++j) value[j] = static_cast<char>('a' + (i * 31 + j * 7) % 26);
  return value;
}

}  // namespace pmstore::testing
