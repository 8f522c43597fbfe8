#include "pmstore/index/separator_map.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

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

template <typename T>
absl::weak_ordering Order3(T a, T b) {
  if (a < b) return absl::weak_ordering::less;
  return a == b ? absl::weak_ordering::equivalent : absl::weak_ordering::greater;
}

// Past equal zero-padded first 16 bytes. When either key is at most 16
// bytes long, it is a prefix of the other, so the lengths decide.
absl::weak_ordering CompareRest(const Parts& a, const Parts& b) {
  if (a.length > kInlineBytes && b.length > kInlineBytes) {
    const int c = std::memcmp(a.rest, b.rest, std::min(a.length, b.length) - kInlineBytes);
    if (c != 0) return Order3(c, 0);
  }
  return Order3(a.length, b.length);
}

}  // namespace

SeparatorMap::Probe::Probe(std::string_view k) : hi(KeyPrefix(k)), lo(KeyPrefix(k, 8)), key(k) {}

absl::weak_ordering SeparatorMap::Order::Rest(const Key& a, const Key& b) {
  return CompareRest(PartsOf(a), PartsOf(b));
}
absl::weak_ordering SeparatorMap::Order::Rest(const Key& a, const Probe& b) {
  return CompareRest(PartsOf(a), PartsOf(b));
}
absl::weak_ordering SeparatorMap::Order::Rest(const Probe& a, const Key& b) {
  return CompareRest(PartsOf(a), PartsOf(b));
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

void SeparatorMap::FreeLong(const Key& key) {
  if (key.length_or_long > kInlineBytes) delete reinterpret_cast<std::string*>(key.length_or_long);
}

void SeparatorMap::Clear() {
  for (const auto& [key, leaf] : map_) FreeLong(key);
  map_.clear();
}

void SeparatorMap::Set(std::string_view separator, uint64_t leaf) {
  const Probe probe(separator);
  // Opening a pool adds the separators in order: each goes at the end.
  const bool last = map_.empty() || Order()(std::prev(map_.end())->first, probe) < 0;
  if (!last) {
    if (auto it = map_.find(probe); it != map_.end()) {
      it->second = leaf;
      return;
    }
  }
  Key key{probe.hi, probe.lo, separator.size()};
  if (separator.size() > kInlineBytes) key.length_or_long = reinterpret_cast<uint64_t>(new std::string(separator));
  if (last) {
    map_.emplace_hint(map_.end(), key, leaf);
  } else {
    map_.emplace(key, leaf);
  }
}

SeparatorMap::iterator SeparatorMap::Floor(std::string_view key) { return std::prev(map_.upper_bound(Probe(key))); }

SeparatorMap::const_iterator SeparatorMap::Floor(std::string_view key) const {
  return std::prev(map_.upper_bound(Probe(key)));
}

SeparatorMap::iterator SeparatorMap::Erase(iterator it) {
  const Key key = it->first;
  iterator next = map_.erase(it);
  FreeLong(key);
  return next;
}

}  // namespace pmstore::internal
