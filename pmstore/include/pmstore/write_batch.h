// A group of puts and deletes that Store::Write applies atomically: after
// a crash either all of them are visible or none.
//
// Thread-compatible: a batch is built by one thread (or under external
// locking), then handed to Store::Write, which does not modify it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pmstore {

class WriteBatch {
 public:
  enum class OpKind { kPut, kDelete };
  struct Op {
    OpKind kind;
    std::string key;
    std::string value;  // empty for deletes
  };

  // Later operations on the same key win, as if applied in order.
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  void Clear();

  size_t Count() const { return ops_.size(); }
  // Bytes of keys and values held; a guide for splitting large loads.
  size_t ApproximateSize() const { return bytes_; }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

}  // namespace pmstore
