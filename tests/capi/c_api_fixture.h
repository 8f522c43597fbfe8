// What the C API's tests share: a fresh store on tmpfs opened through the
// C names, and the plain put and get most tests need around the calls
// they test.
#pragma once

#include <string>

#include "capi/err_msg.h"
#include "gtest/gtest.h"
#include "pmstore/c.h"
#include "support/temp_dir.h"

namespace pmstore_c_test {

// The value, or "<CODE>" when the read failed; frees val. Call it with
// the code already in hand: as an argument beside val, the read might run
// after val was copied.
inline std::string ValueOrCode(pmstore_code_t code, char* val, size_t len) {
  std::string out = code == PMSTORE_OK ? std::string(val == nullptr ? "" : std::string(val, len))
                                       : std::string("<") + pmstore_code_name(code) + ">";
  pmstore_free(val);
  return out;
}

// options_ make a small pool (8 MiB, growing to 64 MiB) at path_; Open()
// opens it as db_, which TearDown closes when it is still open.
class CApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = pmstore_options_create();
    pmstore_options_set_create_if_missing(options_, true);
    pmstore_options_set_initial_size(options_, 8ull << 20);
    pmstore_options_set_max_size(options_, 64ull << 20);
  }
  void TearDown() override {
    if (db_ != nullptr) {
      EXPECT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
    }
    pmstore_options_destroy(options_);
  }
  void Open() {
    ErrMsg err;
    ASSERT_EQ(pmstore_open(options_, path_.c_str(), &db_, err.out()), PMSTORE_OK) << err.str();
  }
  void Put(const std::string& key, const std::string& value) {
    ErrMsg err;
    ASSERT_EQ(pmstore_put(db_, nullptr, key.data(), key.size(), value.data(), value.size(), err.out()), PMSTORE_OK)
        << err.str();
  }
  // The value, or "<CODE>" when the get fails.
  std::string Get(const std::string& key, const pmstore_readoptions_t* options = nullptr) {
    char* val = nullptr;
    size_t len = 0;
    const pmstore_code_t code = pmstore_get(db_, options, key.data(), key.size(), &val, &len, nullptr);
    return ValueOrCode(code, val, len);
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
  pmstore_options_t* options_ = nullptr;
  pmstore_t* db_ = nullptr;
};

}  // namespace pmstore_c_test
