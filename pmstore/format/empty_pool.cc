#include "pmstore/format/empty_pool.h"

#include <cstring>

#include "pmstore/base/status_macros.h"
#include "pmstore/format/leaf.h"
#include "pmstore/persist/persist_site.h"

namespace pmstore::internal {

// Everything but the magic, persisted; then the magic and checksum.
absl::Status WriteEmptyPool(char* base, const Superblock& sb, uint64_t file_chunks, Persister& persister) {
  std::memset(base, 0, sb.heap_offset);  // fresh file: zero already, but a reused one need not be
  // Chunk 0 is small and holds the first (empty) leaf right after its bitmap.
  const uint64_t chunk0 = sb.heap_offset;
  uint64_t* bits = reinterpret_cast<uint64_t*>(base + chunk0);
  std::memset(bits, 0, kBitmapWords * 8);
  bits[0] = ~0ull;
  const uint64_t leaf = chunk0 + kBitmapUnits * kUnitSize;
  const LeafGeometry geometry = LeafGeometry::Of(sb);
  for (uint64_t u = kBitmapUnits; u < kBitmapUnits + geometry.units; ++u) bits[u / 64] |= 1ull << (u % 64);
  Leaf* first = reinterpret_cast<Leaf*>(base + leaf);
  std::memset(first, 0, sizeof(Leaf));
  first->header.checksum = LeafChecksum(first->header, *first);
  const uint64_t chunk_word = kChunkSmall;
  std::memcpy(base + sb.chunk_table_offset, &chunk_word, 8);
  Root root = {};
  root.head_leaf = leaf;
  root.num_chunks = file_chunks;
  root.checksum = RootChecksum(root);
  std::memcpy(base + kRootOffset, &root, sizeof(root));
  Superblock without_magic = sb;
  std::memset(without_magic.magic, 0, sizeof(without_magic.magic));
  std::memcpy(base, &without_magic, sizeof(without_magic));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatMetadataFlush, persister.Flush(base, sb.heap_offset)));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatBitmapFlush, persister.Flush(base + chunk0, kBitmapWords * 8)));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatLeafFlush, persister.Flush(first, sizeof(Leaf))));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatDrain, persister.Drain()));
  std::memcpy(base, &sb, sizeof(sb));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatMagicFlush, persister.Flush(base, sizeof(sb))));
  return PMSTORE_PERSIST(kFormatMagicDrain, persister.Drain());
}

}  // namespace pmstore::internal
