// Iteration over a store in key order (bytewise, shorter first on a
// common prefix) and its reverse, optionally limited to a prefix or a
// [lower, upper) range. Next and Prev may be mixed freely (LevelDB's and
// RocksDB's Iterator; LMDB's MDB_NEXT and MDB_PREV).
//
// One consistent state: an iterator reads as of ReadOptions::snapshot, or
// of a snapshot it takes when it is made and releases when it is
// destroyed (snapshot.h), so writes made while it runs are never seen,
// and space they free waits for it. It copies entries under the store's
// read lock, 16 after a seek and twice as many at each refill that goes on
// up to 1024, and re-seeks past the last key it returned, so a short range
// read copies little and it never blocks writers for long. Keys come out strictly increasing
// with Next and strictly decreasing with Prev.
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
  // Positions at the last key in range (LMDB's MDB_LAST), or at the last
  // key <= `target` that is in range (RocksDB's SeekForPrev: "the greatest
  // key <= x"). Valid() is false when there is none.
  virtual void SeekToLast() = 0;
  virtual void SeekForPrev(std::string_view target) = 0;
  // To the next key in range, or the one before it. Require Valid().
  virtual void Next() = 0;
  virtual void Prev() = 0;

  virtual bool Valid() const = 0;
  // Views into the iterator's own copy; valid until the next move.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Not OK when iteration stopped on damaged data (DataLoss).
  virtual absl::Status status() const = 0;
};

}  // namespace pmstore
