// Forward iteration over a store in key order (bytewise, shorter first on
// a common prefix), optionally limited to a prefix or a [lower, upper)
// range.
//
// One consistent state: an iterator reads as of ReadOptions::snapshot, or
// of a snapshot it takes when it is made and releases when it is
// destroyed (snapshot.h), so writes made while it runs are never seen,
// and space they free waits for it. It copies up to 1024 entries at a time
// under the store's read lock and re-seeks past the last key it returned,
// so it never blocks writers for long. Keys come out strictly increasing.
//
// Thread-compatible: one iterator per thread. It must be destroyed before
// the store that made it.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace pmstore {

struct IterateOptions {
  std::string prefix;       // only keys that start with this (empty: all)
  std::string lower_bound;  // first key considered, inclusive (empty: none)
  std::string upper_bound;  // keys must be < this (empty: no bound)
};

class Iterator {
 public:
  virtual ~Iterator() = default;

  // Positions at the first key in range, or at the first key >= `target`
  // that is in range. Valid() is false when there is none.
  virtual void SeekToFirst() = 0;
  virtual void Seek(std::string_view target) = 0;
  // Requires Valid().
  virtual void Next() = 0;

  virtual bool Valid() const = 0;
  // Views into the iterator's own copy; valid until the next move.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Not OK when iteration stopped on damaged data (DataLoss).
  virtual absl::Status status() const = 0;
};

}  // namespace pmstore
