// The in-memory part of the ordered index: each leaf's separator (the
// lowest key it may hold) mapped to the leaf's offset, answering "which
// leaf holds this key" for every Get, Put and Delete.
//
// Why not a btree of std::string: a 16-byte key does not fit std::string's
// inline buffer, so every comparison on the way down chased a heap pointer
// that could miss the cache. Here the first 16 key bytes sit in the btree
// node as two big-endian numbers; the rest of a longer separator lives on
// the heap and is read only when those 16 bytes tie. (Sorted blocks of 32
// under a top-level array were tried too, and were slower than this btree
// on 1 M keys.)
//
// Owns the heap tails; depends on format.h's KeyPrefix only. Not
// thread-safe: LeafIndex's callers hold the store's lock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/btree_map.h"
#include "absl/types/compare.h"

namespace pmstore::internal {

class SeparatorMap {
 public:
  // Key bytes 0-15 and, for a separator longer than 16 bytes, a pointer
  // to the whole of it; 24 bytes, so a 256-byte btree node holds seven.
  struct Key {
    uint64_t hi;
    uint64_t lo;
    uint64_t length_or_long;  // the length when <= 16, else a std::string* (owned)
  };
  // A key to look up, prefixes computed once per lookup.
  struct Probe {
    explicit Probe(std::string_view key);
    uint64_t hi;
    uint64_t lo;
    std::string_view key;
  };
  // memcmp's order. Inline for the common case, keys that differ in
  // their first 16 bytes; the rest only where those tie.
  struct Order {
    using is_transparent = void;
    absl::weak_ordering operator()(const Key& a, const Key& b) const { return Prefixes(a, b, &Rest); }
    absl::weak_ordering operator()(const Key& a, const Probe& b) const { return Prefixes(a, b, &Rest); }
    absl::weak_ordering operator()(const Probe& a, const Key& b) const { return Prefixes(a, b, &Rest); }

   private:
    template <typename A, typename B>
    static absl::weak_ordering Prefixes(const A& a, const B& b, absl::weak_ordering (*rest)(const A&, const B&)) {
      if (a.hi != b.hi) return a.hi < b.hi ? absl::weak_ordering::less : absl::weak_ordering::greater;
      if (a.lo != b.lo) return a.lo < b.lo ? absl::weak_ordering::less : absl::weak_ordering::greater;
      return rest(a, b);
    }
    static absl::weak_ordering Rest(const Key& a, const Key& b);
    static absl::weak_ordering Rest(const Key& a, const Probe& b);
    static absl::weak_ordering Rest(const Probe& a, const Key& b);
  };
  using Map = absl::btree_map<Key, uint64_t, Order>;
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  SeparatorMap() = default;
  SeparatorMap(const SeparatorMap&) = delete;
  SeparatorMap& operator=(const SeparatorMap&) = delete;
  ~SeparatorMap() { Clear(); }

  void Clear();
  // Maps `separator` to `leaf`, replacing the leaf it mapped to if any.
  void Set(std::string_view separator, uint64_t leaf);
  // The entry with the greatest separator <= key. The first separator is
  // "", so there is one for every key once the map is not empty.
  iterator Floor(std::string_view key);
  const_iterator Floor(std::string_view key) const;
  // The entry for exactly `separator`, or end().
  const_iterator Find(std::string_view separator) const { return map_.find(Probe(separator)); }
  // Removes the entry; returns the one after it.
  iterator Erase(iterator it);

  iterator begin() { return map_.begin(); }
  iterator end() { return map_.end(); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }

  // A separator's length, and all of it when that is over 16 bytes (the
  // first 16 are hi and lo).
  static uint64_t Length(const Key& key);
  static std::string_view Whole(const Key& key);
  // The whole separator.
  static std::string String(const Key& key);
  static constexpr uint64_t kInlineBytes = 16;
  uint64_t size() const { return map_.size(); }

 private:
  static void FreeLong(const Key& key);

  Map map_;
};

}  // namespace pmstore::internal
