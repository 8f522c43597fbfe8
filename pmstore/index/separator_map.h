// The in-memory part of the ordered index: each leaf's separator (the
// lowest key it may hold) mapped to the leaf's offset, answering "which
// leaf holds this key" for every Get, Put and Delete.
//
// The separator search is the chain of dependent loads in front of every
// lookup, so the map is a B+tree of its own rather than a library's: its
// nodes hold each separator's first 16 bytes as two big-endian numbers
// (the rest of a longer one lies on the heap and is read only when those
// 16 bytes tie; a 16-byte key does not fit std::string's inline buffer, and
// a btree of strings chased a heap pointer per comparison), and it can
// search many keys at once level by level (FloorMany): each level's nodes
// for all of them are requested before any is searched, so their misses
// overlap, where a search of one key waits for each level in turn.
//
// Erasing leaves a node as full as it is (no merge); a node that empties
// leaves the tree. Owns the heap tails; depends on format/key.h only. Not
// thread-safe: LeafIndex's callers hold the store's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

namespace pmstore::internal {

class SeparatorMap {
 public:
  // Key bytes 0-15 and, for a separator longer than 16 bytes, a pointer
  // to the whole of it.
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
  struct Entry {
    Key first;
    uint64_t second;  // the leaf
  };

 private:
  struct Leaf;

 public:
  // A place in the map, in key order; end() is past the last entry.
  template <typename E>
  class Iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = E*;
    using reference = E&;

    Iterator() = default;
    // iterator to const_iterator only: a conversion the other way would
    // also make `const_iterator == iterator` ambiguous (C++20 tries the
    // comparison both ways round).
    template <typename O>
      requires std::is_same_v<const O, E> && (!std::is_same_v<O, E>)
    Iterator(const Iterator<O>& other) : map_(other.map_), leaf_(other.leaf_), index_(other.index_) {}  // NOLINT
    E& operator*() const;
    E* operator->() const { return &**this; }
    Iterator& operator++();
    Iterator& operator--();
    Iterator operator++(int) {
      Iterator was = *this;
      ++*this;
      return was;
    }
    Iterator operator--(int) {
      Iterator was = *this;
      --*this;
      return was;
    }
    bool operator==(const Iterator& other) const { return leaf_ == other.leaf_ && index_ == other.index_; }

   private:
    friend class SeparatorMap;
    template <typename O>
    friend class Iterator;
    Iterator(const SeparatorMap* map, Leaf* leaf, int index) : map_(map), leaf_(leaf), index_(index) {}
    const SeparatorMap* map_ = nullptr;
    Leaf* leaf_ = nullptr;  // nullptr: end()
    int index_ = 0;
  };
  using iterator = Iterator<Entry>;
  using const_iterator = Iterator<const Entry>;

  SeparatorMap() = default;
  SeparatorMap(const SeparatorMap&) = delete;
  SeparatorMap& operator=(const SeparatorMap&) = delete;
  ~SeparatorMap() { Clear(); }

  void Clear();
  // Maps `separator` to `leaf`, replacing the leaf it mapped to if any.
  void Set(std::string_view separator, uint64_t leaf);
  // The entry with the greatest separator <= key (end() when none; the
  // first separator of a LeafIndex is "", so there is one for every key).
  iterator Floor(std::string_view key);
  const_iterator Floor(std::string_view key) const;
  // Floor for each of `count` keys (at most kMaxBatch): out[i] for
  // keys[i], the tree searched level by level across the keys.
  static constexpr size_t kMaxBatch = 64;
  void FloorMany(const std::string_view* keys, size_t count, const_iterator* out) const;
  // The entry for exactly `separator`, or end().
  const_iterator Find(std::string_view separator) const;
  // Removes the entry; returns the one after it.
  iterator Erase(iterator it);

  iterator begin() { return {this, size_ == 0 ? nullptr : first_, 0}; }
  iterator end() { return {this, nullptr, 0}; }
  const_iterator begin() const { return {this, size_ == 0 ? nullptr : first_, 0}; }
  const_iterator end() const { return {this, nullptr, 0}; }
  uint64_t size() const { return size_; }

  // A separator's length, and all of it when that is over 16 bytes (the
  // first 16 are hi and lo).
  static uint64_t Length(const Key& key);
  static std::string_view Whole(const Key& key);
  // The whole separator.
  static std::string String(const Key& key);
  static constexpr uint64_t kInlineBytes = 16;

 private:
  // Nodes of about eight cache lines: 16 entries a leaf, 16 children an
  // inner node.
  static constexpr int kLeafEntries = 16;
  static constexpr int kInnerChildren = 16;
  struct alignas(64) Leaf {
    Entry entries[kLeafEntries];
    int count = 0;
    Leaf* prev = nullptr;
    Leaf* next = nullptr;
  };
  struct alignas(64) Inner {
    // keys[i] is at most the least separator under children[i + 1], and
    // above every separator under children[i].
    Key keys[kInnerChildren - 1];
    void* children[kInnerChildren];  // Inner* above the lowest level, else Leaf*
    int count = 0;                   // children
  };
  // The path of a descent: the inner nodes, and the child taken in each.
  struct Path {
    Inner* nodes[32];
    int child[32];
    int depth = 0;
  };

  static int Compare(const Key& a, const Probe& b);
  static int Compare(const Key& a, const Key& b);
  static Key Own(const Probe& probe);  // a key holding its own copy of a long separator
  static Key Copy(const Key& key);
  static void FreeLong(const Key& key);
  // Descends to the leaf whose range holds `probe`, recording the path.
  Leaf* Descend(const Probe& probe, Path* path) const;
  // The floor of `probe` in `leaf`, the leaf Descend found for it.
  const_iterator FloorIn(Leaf* leaf, const Probe& probe) const;
  // Puts `key` and its right child under the inner nodes of `path`,
  // splitting full ones on the way up.
  void InsertAbove(Path* path, Key key, void* right);
  // Takes child `child` of path->nodes[level] out of the tree.
  void RemoveChild(Path* path, int level);
  void FreeNode(void* node, int height);

  void* root_ = nullptr;
  int height_ = 0;  // inner levels above the leaves (0: the root is a leaf)
  Leaf* first_ = nullptr;
  Leaf* last_ = nullptr;
  uint64_t size_ = 0;
};

template <typename E>
E& SeparatorMap::Iterator<E>::operator*() const {
  return leaf_->entries[index_];
}

template <typename E>
SeparatorMap::Iterator<E>& SeparatorMap::Iterator<E>::operator++() {
  if (++index_ == leaf_->count) {
    leaf_ = leaf_->next;
    index_ = 0;
  }
  return *this;
}

template <typename E>
SeparatorMap::Iterator<E>& SeparatorMap::Iterator<E>::operator--() {
  if (leaf_ == nullptr) {
    leaf_ = map_->last_;
    index_ = leaf_->count - 1;
  } else if (index_-- == 0) {
    leaf_ = leaf_->prev;
    index_ = leaf_->count - 1;
  }
  return *this;
}

}  // namespace pmstore::internal
