#include "pmstore/index/separator_image.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "pmstore/base/prefetch.h"

namespace pmstore::internal {
namespace {

uint64_t Align8(uint64_t n) { return (n + 7) & ~7ull; }

// memcmp's order of an entry's separator and a probe, as SeparatorMap
// orders them: the first 16 bytes as numbers, then the rest, then length.
int Compare(const char* image, const SeparatorImageEntry& e, const SeparatorMap::Probe& p) {
  if (e.hi != p.hi) return e.hi < p.hi ? -1 : 1;
  if (e.lo != p.lo) return e.lo < p.lo ? -1 : 1;
  constexpr uint64_t kInline = SeparatorMap::kInlineBytes;
  if (e.length > kInline && p.key.size() > kInline) {
    const int c = std::memcmp(image + e.tail, p.key.data() + kInline, std::min<uint64_t>(e.length, p.key.size()) - kInline);
    if (c != 0) return c;
  }
  return e.length < p.key.size() ? -1 : (e.length == p.key.size() ? 0 : 1);
}

bool PrefixLess(uint64_t ahi, uint64_t alo, uint64_t bhi, uint64_t blo) { return ahi != bhi ? ahi < bhi : alo < blo; }

}  // namespace

uint64_t SeparatorImage::BytesFor(const SeparatorMap& map) {
  uint64_t tails = 0;
  for (const auto& [key, leaf] : map) {
    const uint64_t length = SeparatorMap::Length(key);
    if (length > SeparatorMap::kInlineBytes) tails += Align8(length - SeparatorMap::kInlineBytes);
  }
  return sizeof(SeparatorImageHeader) + map.size() * sizeof(SeparatorImageEntry) +
         FenceCount(map.size()) * sizeof(SeparatorImageFence) + tails;
}

void SeparatorImage::Write(const SeparatorMap& map, const Expect& describes, char* dest) {
  const uint64_t count = map.size();
  auto* entries = reinterpret_cast<SeparatorImageEntry*>(dest + sizeof(SeparatorImageHeader));
  auto* fences = reinterpret_cast<SeparatorImageFence*>(entries + count);
  uint64_t tail = sizeof(SeparatorImageHeader) + count * sizeof(SeparatorImageEntry) +
                  FenceCount(count) * sizeof(SeparatorImageFence);
  uint64_t i = 0;
  for (const auto& [key, leaf] : map) {
    SeparatorImageEntry entry = {key.hi, key.lo, static_cast<uint32_t>(SeparatorMap::Length(key)), 0, leaf};
    if (entry.length > SeparatorMap::kInlineBytes) {
      const std::string_view rest = SeparatorMap::Whole(key).substr(SeparatorMap::kInlineBytes);
      entry.tail = static_cast<uint32_t>(tail);
      std::memcpy(dest + tail, rest.data(), rest.size());
      std::memset(dest + tail + rest.size(), 0, Align8(rest.size()) - rest.size());
      tail += Align8(rest.size());
    }
    std::memcpy(&entries[i], &entry, sizeof(entry));
    if (i % kImageFenceStride == 0) fences[i / kImageFenceStride] = {key.hi, key.lo};
    ++i;
  }
  SeparatorImageHeader header = {kImageMagic, describes.seq, describes.head_leaf, describes.key_count, count, tail, 0,
                                 0};
  header.body_checksum = Checksum(dest + sizeof(header), tail - sizeof(header));
  header.checksum = SeparatorImageHeaderChecksum(header);
  std::memcpy(dest, &header, sizeof(header));
}

absl::StatusOr<SeparatorImage> SeparatorImage::Open(const char* base, uint64_t length, uint64_t offset,
                                                    const Expect& expect) {
  if (offset % kUnitSize != 0 || offset >= length || length - offset < sizeof(SeparatorImageHeader)) {
    return absl::DataLossError(absl::StrCat("separator image offset ", offset, " is outside the pool"));
  }
  const auto* header = reinterpret_cast<const SeparatorImageHeader*>(base + offset);
  if (header->magic != kImageMagic || header->checksum != SeparatorImageHeaderChecksum(*header)) {
    return absl::DataLossError(absl::StrCat("checksum failure in the separator image header at offset ", offset));
  }
  const uint64_t count = header->count;
  const uint64_t max_entries = (length - offset) / sizeof(SeparatorImageEntry);
  if (count == 0 || count > max_entries || header->bytes > length - offset ||
      header->bytes < sizeof(SeparatorImageHeader) + count * sizeof(SeparatorImageEntry) +
                          FenceCount(count) * sizeof(SeparatorImageFence)) {
    return absl::DataLossError(absl::StrCat("separator image at offset ", offset, " claims ", count, " entries in ",
                                            header->bytes, " bytes"));
  }
  // Staleness first: a stale image is not damage, and saves the body's checksum.
  if (header->seq != expect.seq || header->head_leaf != expect.head_leaf || header->key_count != expect.key_count) {
    return absl::FailedPreconditionError(absl::StrCat("separator image at offset ", offset, " describes commit ",
                                                      header->seq, ", the last commit is ", expect.seq));
  }
  const char* body = base + offset + sizeof(SeparatorImageHeader);
  if (Checksum(body, header->bytes - sizeof(SeparatorImageHeader)) != header->body_checksum) {
    return absl::DataLossError(absl::StrCat("checksum failure in the separator image at offset ", offset));
  }
  SeparatorImage image;
  image.header_ = header;
  image.entries_ = reinterpret_cast<const SeparatorImageEntry*>(body);
  image.count_ = count;
  return image;
}

uint64_t SeparatorImage::FloorIndex(std::string_view key) const {
  const char* image = reinterpret_cast<const char*>(header_);
  const SeparatorMap::Probe probe(key);
  // The fences bound the entries to search: from the last stride whose
  // first separator's 16-byte prefix is below the key's (it is below the
  // key), to the first stride whose prefix is above it. Only separators
  // sharing the key's first 16 bytes make that more than one stride.
  const SeparatorImageFence* f = fences();
  const uint64_t nf = FenceCount(count_);
  const auto below = [](const SeparatorImageFence& a, const SeparatorMap::Probe& p) {
    return PrefixLess(a.hi, a.lo, p.hi, p.lo);
  };
  const auto above = [](const SeparatorMap::Probe& p, const SeparatorImageFence& a) {
    return PrefixLess(p.hi, p.lo, a.hi, a.lo);
  };
  const uint64_t not_below = std::lower_bound(f, f + nf, probe, below) - f;
  const uint64_t first_above = std::upper_bound(f, f + nf, probe, above) - f;
  const uint64_t from = (not_below == 0 ? 0 : not_below - 1) * kImageFenceStride;
  const uint64_t to = std::min(count_, first_above * kImageFenceStride);
  // The stride's lines load together, not one search step at a time.
  base::PrefetchLines(entries_ + from, (std::min(to, from + kImageFenceStride) - std::min(from, to)) * sizeof(*entries_));
  // The first entry above the key; the one before it is the floor (entry
  // 0 is "", never above).
  uint64_t lo = from, hi = to;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (Compare(image, entries_[mid], probe) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

void SeparatorImage::ForEach(const std::function<void(std::string_view separator, uint64_t leaf)>& visit) const {
  const char* image = reinterpret_cast<const char*>(header_);
  std::string separator;
  for (uint64_t i = 0; i < count_; ++i) {
    const SeparatorImageEntry& e = entries_[i];
    char prefix[16];
    const uint64_t hi = __builtin_bswap64(e.hi), lo = __builtin_bswap64(e.lo);
    std::memcpy(prefix, &hi, 8);
    std::memcpy(prefix + 8, &lo, 8);
    separator.assign(prefix, std::min<uint64_t>(e.length, SeparatorMap::kInlineBytes));
    if (e.length > SeparatorMap::kInlineBytes) separator.append(image + e.tail, e.length - SeparatorMap::kInlineBytes);
    visit(separator, e.leaf);
  }
}

}  // namespace pmstore::internal
