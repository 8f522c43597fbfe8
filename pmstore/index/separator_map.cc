#include "pmstore/index/separator_map.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "pmstore/base/prefetch.h"
#include "pmstore/format/key.h"

namespace pmstore::internal {
namespace {

constexpr uint64_t kInlineBytes = SeparatorMap::kInlineBytes;

// Either side of a comparison: the prefix numbers, the length, and the
// bytes from 16 on (only read when both are longer than 16).
struct Parts {
  uint64_t hi;
  uint64_t lo;
  uint64_t length;
  const char* rest;
};

Parts PartsOf(const SeparatorMap::Key& key) {
  if (key.length_or_long <= kInlineBytes) return {key.hi, key.lo, key.length_or_long, nullptr};
  const auto* whole = reinterpret_cast<const std::string*>(key.length_or_long);
  return {key.hi, key.lo, whole->size(), whole->data() + kInlineBytes};
}

Parts PartsOf(const SeparatorMap::Probe& probe) {
  const uint64_t length = probe.key.size();
  return {probe.hi, probe.lo, length, length > kInlineBytes ? probe.key.data() + kInlineBytes : nullptr};
}

int Sign(uint64_t a, uint64_t b) { return a < b ? -1 : (a == b ? 0 : 1); }

// Past equal zero-padded first 16 bytes. When either key is at most 16
// bytes long it is a prefix of the other, so the lengths decide.
template <typename A, typename B>
__attribute__((noinline)) int CompareTails(const A& a, const B& b) {
  const Parts pa = PartsOf(a), pb = PartsOf(b);
  if (pa.length > kInlineBytes && pb.length > kInlineBytes) {
    const int c = std::memcmp(pa.rest, pb.rest, std::min(pa.length, pb.length) - kInlineBytes);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  return Sign(pa.length, pb.length);
}

// memcmp's order: the first 16 bytes inline, where nearly every
// comparison ends; the rest only on a tie.
template <typename A, typename B>
inline int CompareParts(const A& a, const B& b) {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
  return CompareTails(a, b);
}

void PrefetchNode(const void* node, size_t bytes) { base::PrefetchLines(node, bytes); }

}  // namespace

SeparatorMap::Probe::Probe(std::string_view k) : hi(KeyPrefix(k)), lo(KeyPrefix(k, 8)), key(k) {}

int SeparatorMap::Compare(const Key& a, const Probe& b) { return CompareParts(a, b); }
int SeparatorMap::Compare(const Key& a, const Key& b) { return CompareParts(a, b); }

SeparatorMap::Key SeparatorMap::Own(const Probe& probe) {
  Key key{probe.hi, probe.lo, probe.key.size()};
  if (probe.key.size() > kInlineBytes) key.length_or_long = reinterpret_cast<uint64_t>(new std::string(probe.key));
  return key;
}

SeparatorMap::Key SeparatorMap::Copy(const Key& key) {
  if (key.length_or_long <= kInlineBytes) return key;
  return Key{key.hi, key.lo, reinterpret_cast<uint64_t>(new std::string(Whole(key)))};
}

void SeparatorMap::FreeLong(const Key& key) {
  if (key.length_or_long > kInlineBytes) delete reinterpret_cast<std::string*>(key.length_or_long);
}

uint64_t SeparatorMap::Length(const Key& key) { return PartsOf(key).length; }

std::string_view SeparatorMap::Whole(const Key& key) {
  return key.length_or_long <= kInlineBytes ? std::string_view() : *reinterpret_cast<const std::string*>(key.length_or_long);
}

std::string SeparatorMap::String(const Key& key) {
  if (key.length_or_long > kInlineBytes) return *reinterpret_cast<const std::string*>(key.length_or_long);
  char prefix[kInlineBytes];
  const uint64_t hi = __builtin_bswap64(key.hi), lo = __builtin_bswap64(key.lo);
  std::memcpy(prefix, &hi, 8);
  std::memcpy(prefix + 8, &lo, 8);
  return std::string(prefix, key.length_or_long);
}

void SeparatorMap::FreeNode(void* node, int height) {
  if (height == 0) {
    Leaf* leaf = static_cast<Leaf*>(node);
    for (int i = 0; i < leaf->count; ++i) FreeLong(leaf->entries[i].first);
    delete leaf;
    return;
  }
  Inner* inner = static_cast<Inner*>(node);
  for (int i = 0; i < inner->count; ++i) FreeNode(inner->children[i], height - 1);
  for (int i = 0; i + 1 < inner->count; ++i) FreeLong(inner->keys[i]);
  delete inner;
}

void SeparatorMap::Clear() {
  if (root_ != nullptr) FreeNode(root_, height_);
  root_ = nullptr;
  height_ = 0;
  first_ = last_ = nullptr;
  size_ = 0;
}

namespace {

// The child of an inner node (keys[0, count - 1) between count children)
// whose range holds `target`: the one after every key <= it.
template <typename Target>
int ChildFor(const SeparatorMap::Key* keys, int count, const Target& target) {
  int lo = 0, hi = count - 1;  // keys
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (CompareParts(keys[mid], target) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

SeparatorMap::Leaf* SeparatorMap::Descend(const Probe& probe, Path* path) const {
  void* node = root_;
  if (path != nullptr) path->depth = height_;
  for (int level = 0; level < height_; ++level) {
    Inner* inner = static_cast<Inner*>(node);
    const int child = ChildFor(inner->keys, inner->count, probe);
    if (path != nullptr) {
      path->nodes[level] = inner;
      path->child[level] = child;
    }
    node = inner->children[child];
  }
  return static_cast<Leaf*>(node);
}

SeparatorMap::const_iterator SeparatorMap::FloorIn(Leaf* leaf, const Probe& probe) const {
  // The first entry above the probe; the floor is the one before it.
  int lo = 0, hi = leaf->count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (CompareParts(leaf->entries[mid].first, probe) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo > 0) return {this, leaf, lo - 1};
  // Below the leaf's first entry (its own was erased): the floor is the
  // last entry of the leaf before, which every leaf in the tree has.
  if (leaf->prev == nullptr) return end();
  return {this, leaf->prev, leaf->prev->count - 1};
}

SeparatorMap::iterator SeparatorMap::Floor(std::string_view key) {
  const const_iterator found = static_cast<const SeparatorMap*>(this)->Floor(key);
  return {this, found.leaf_, found.index_};
}

SeparatorMap::const_iterator SeparatorMap::Floor(std::string_view key) const {
  if (root_ == nullptr) return end();
  const Probe probe(key);
  return FloorIn(Descend(probe, nullptr), probe);
}

void SeparatorMap::FloorMany(const std::string_view* keys, size_t count, const_iterator* out) const {
  if (root_ == nullptr) {
    std::fill(out, out + count, end());
    return;
  }
  alignas(Probe) unsigned char storage[kMaxBatch * sizeof(Probe)];
  Probe* probes = reinterpret_cast<Probe*>(storage);
  void* nodes[kMaxBatch];
  for (size_t i = 0; i < count; ++i) {
    new (&probes[i]) Probe(keys[i]);
    nodes[i] = root_;
  }
  // One level at a time for every key: the next level's nodes are all
  // requested before any is searched.
  for (int level = 0; level < height_; ++level) {
    for (size_t i = 0; i < count; ++i) {
      Inner* inner = static_cast<Inner*>(nodes[i]);
      nodes[i] = inner->children[ChildFor(inner->keys, inner->count, probes[i])];
      PrefetchNode(nodes[i], level + 1 < height_ ? sizeof(Inner) : sizeof(Leaf));
    }
  }
  for (size_t i = 0; i < count; ++i) out[i] = FloorIn(static_cast<Leaf*>(nodes[i]), probes[i]);
}

SeparatorMap::const_iterator SeparatorMap::Find(std::string_view separator) const {
  const const_iterator floor = Floor(separator);
  if (floor == end() || Compare(floor->first, Probe(separator)) != 0) return end();
  return floor;
}

void SeparatorMap::Set(std::string_view separator, uint64_t leaf_offset) {
  const Probe probe(separator);
  if (root_ == nullptr) {
    Leaf* leaf = new Leaf();
    leaf->entries[0] = {Own(probe), leaf_offset};
    leaf->count = 1;
    root_ = first_ = last_ = leaf;
    height_ = 0;
    size_ = 1;
    return;
  }
  Path path;
  Leaf* leaf = Descend(probe, &path);
  int pos = 0;
  while (pos < leaf->count && Compare(leaf->entries[pos].first, probe) < 0) ++pos;
  if (pos < leaf->count && Compare(leaf->entries[pos].first, probe) == 0) {
    leaf->entries[pos].second = leaf_offset;
    return;
  }
  ++size_;
  const Entry entry{Own(probe), leaf_offset};
  if (leaf->count < kLeafEntries) {
    std::copy_backward(leaf->entries + pos, leaf->entries + leaf->count, leaf->entries + leaf->count + 1);
    leaf->entries[pos] = entry;
    ++leaf->count;
    return;
  }
  // A full leaf splits in half; past the end of the last leaf (opening a
  // pool adds separators in order) it stays full and the new entry opens
  // a leaf of its own.
  Leaf* right = new Leaf();
  const bool append = pos == kLeafEntries && leaf->next == nullptr;
  const int keep = append ? kLeafEntries : kLeafEntries / 2;
  right->count = kLeafEntries - keep;
  std::copy(leaf->entries + keep, leaf->entries + kLeafEntries, right->entries);
  leaf->count = keep;
  if (pos <= keep && !append) {
    std::copy_backward(leaf->entries + pos, leaf->entries + leaf->count, leaf->entries + leaf->count + 1);
    leaf->entries[pos] = entry;
    ++leaf->count;
  } else {
    const int at = pos - keep;
    std::copy_backward(right->entries + at, right->entries + right->count, right->entries + right->count + 1);
    right->entries[at] = entry;
    ++right->count;
  }
  right->prev = leaf;
  right->next = leaf->next;
  if (leaf->next != nullptr) leaf->next->prev = right;
  leaf->next = right;
  if (last_ == leaf) last_ = right;
  InsertAbove(&path, Copy(right->entries[0].first), right);
}

void SeparatorMap::InsertAbove(Path* path, Key key, void* right) {
  for (int level = path->depth - 1; level >= 0; --level) {
    Inner* inner = path->nodes[level];
    const int at = path->child[level];  // `right` goes after child `at`
    if (inner->count < kInnerChildren) {
      std::copy_backward(inner->keys + at, inner->keys + (inner->count - 1), inner->keys + inner->count);
      std::copy_backward(inner->children + at + 1, inner->children + inner->count, inner->children + inner->count + 1);
      inner->keys[at] = key;
      inner->children[at + 1] = right;
      ++inner->count;
      return;
    }
    // Full: the node's keys and children with the new ones, cut in two;
    // the key between the halves goes up. At the right edge (an append)
    // the node stays full.
    Key keys[kInnerChildren];
    void* children[kInnerChildren + 1];
    std::copy(inner->keys, inner->keys + at, keys);
    keys[at] = key;
    std::copy(inner->keys + at, inner->keys + (kInnerChildren - 1), keys + at + 1);  // (not past one-past-the-end)
    std::copy(inner->children, inner->children + at + 1, children);
    children[at + 1] = right;
    std::copy(inner->children + at + 1, inner->children + kInnerChildren, children + at + 2);
    const bool append = at == kInnerChildren - 1;
    const int left_children = append ? kInnerChildren : (kInnerChildren + 1) / 2;
    Inner* sibling = new Inner();
    sibling->count = kInnerChildren + 1 - left_children;
    std::copy(keys, keys + left_children - 1, inner->keys);
    std::copy(children, children + left_children, inner->children);
    inner->count = left_children;
    std::copy(keys + left_children, keys + kInnerChildren, sibling->keys);
    std::copy(children + left_children, children + kInnerChildren + 1, sibling->children);
    key = keys[left_children - 1];
    right = sibling;
  }
  // The root split: a new root above it.
  Inner* root = new Inner();
  root->keys[0] = key;
  root->children[0] = root_;
  root->children[1] = right;
  root->count = 2;
  root_ = root;
  ++height_;
}

SeparatorMap::iterator SeparatorMap::Erase(iterator it) {
  Leaf* leaf = it.leaf_;
  const int index = it.index_;
  const Key key = leaf->entries[index].first;
  iterator next = index + 1 < leaf->count ? iterator(this, leaf, index) : iterator(this, leaf->next, 0);
  --size_;
  if (leaf->count > 1 || size_ == 0) {
    std::copy(leaf->entries + index + 1, leaf->entries + leaf->count, leaf->entries + index);
    --leaf->count;
    FreeLong(key);
    if (size_ == 0) Clear();
    return size_ == 0 ? end() : next;
  }
  // The leaf's last entry: the leaf leaves the tree.
  Path path;
  const std::string whole = String(key);
  Descend(Probe(whole), &path);
  FreeLong(key);
  if (leaf->prev != nullptr) leaf->prev->next = leaf->next;
  if (leaf->next != nullptr) leaf->next->prev = leaf->prev;
  if (first_ == leaf) first_ = leaf->next;
  if (last_ == leaf) last_ = leaf->prev;
  delete leaf;
  RemoveChild(&path, path.depth - 1);
  return next;
}

void SeparatorMap::RemoveChild(Path* path, int level) {
  Inner* inner = path->nodes[level];
  const int child = path->child[level];
  // The key that bounded the child goes with it: the one before it, or
  // for the first child the one after (its successor takes its place).
  const int key = child > 0 ? child - 1 : 0;
  if (inner->count > 1) {
    FreeLong(inner->keys[key]);
    std::copy(inner->keys + key + 1, inner->keys + (inner->count - 1), inner->keys + key);
  }
  std::copy(inner->children + child + 1, inner->children + inner->count, inner->children + child);
  --inner->count;
  if (inner->count == 0) {
    delete inner;
    if (level > 0) RemoveChild(path, level - 1);
    return;
  }
  // A root left with one child gives way to it.
  while (height_ > 0 && static_cast<Inner*>(root_)->count == 1) {
    Inner* old = static_cast<Inner*>(root_);
    root_ = old->children[0];
    --height_;
    delete old;
  }
}

}  // namespace pmstore::internal
