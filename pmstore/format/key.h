// What the format derives from a key: its first 16 bytes as two
// big-endian numbers (leaf slots and separators compare those first), and
// its hash (a leaf slot's fingerprint byte, and in a version 2 leaf the
// key's home slot, leaf.h).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace pmstore::internal {

// Key bytes [from, from+8) as a big-endian number, zero padded: comparing
// prefixes orders keys like memcmp whenever the prefixes differ.
inline uint64_t KeyPrefix(std::string_view key, size_t from = 0) {
  if (std::endian::native == std::endian::little && key.size() >= from + 8) {  // one load and a byte swap
    uint64_t v;
    std::memcpy(&v, key.data() + from, 8);
    return __builtin_bswap64(v);
  }
  unsigned char bytes[8] = {0};
  if (key.size() > from) std::memcpy(bytes, key.data() + from, key.size() - from < 8 ? key.size() - from : 8);
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return v;
}

// XXH3 of the key: its low byte is the fingerprint, and bits 32 and up
// choose the key's home slot in a version 2 leaf.
uint64_t KeyHash(std::string_view key);
inline uint8_t FingerprintOf(uint64_t hash) { return static_cast<uint8_t>(hash); }
inline uint8_t KeyFingerprint(std::string_view key) { return FingerprintOf(KeyHash(key)); }

}  // namespace pmstore::internal
