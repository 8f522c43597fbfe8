#include "pmstore/format/layout.h"

#include <xxhash.h>

#include "pmstore/format/image_layout.h"
#include "pmstore/format/key.h"

namespace pmstore::internal {

uint64_t Checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

uint64_t SuperblockChecksum(const Superblock& sb) { return Checksum(&sb, offsetof(Superblock, checksum)); }

uint64_t RootChecksum(const Root& root) { return Checksum(&root, offsetof(Root, checksum)); }

uint64_t SeparatorImageHeaderChecksum(const SeparatorImageHeader& header) {
  return Checksum(&header, offsetof(SeparatorImageHeader, checksum));
}

uint64_t KeyHash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

}  // namespace pmstore::internal
