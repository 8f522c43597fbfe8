#include "pmstore/format/superblock.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/format/leaf.h"

namespace pmstore::internal {
namespace {

// The layout a superblock of a known version describes is one this
// library can use.
absl::Status CheckGeometry(const Superblock& sb, uint64_t file_size, const std::string& path) {
  const bool cells_ok = sb.version == 1 ? sb.leaf_cell_bytes == 0
                                        : sb.leaf_cell_bytes >= kUnitSize && sb.leaf_cell_bytes <= 4096 &&
                                              sb.leaf_cell_bytes % kUnitSize == 0;
  const uint64_t superblock_size = sb.version == 1 ? sizeof(SuperblockV1) : sizeof(Superblock);
  if (sb.superblock_size != superblock_size || !cells_ok || sb.unit_size != kUnitSize || sb.chunk_size != kChunkSize ||
      sb.leaf_slots != kLeafSlots || sb.root_offset != kRootOffset || sb.log_offset != kLogOffset ||
      sb.log_slot_size != kLogSlotSize || sb.chunk_table_offset != kChunkTableOffset ||
      sb.max_chunks == 0 || sb.max_chunks > (1ull << 32) || sb.heap_offset != HeapOffset(sb.max_chunks)) {
    return absl::DataLossError(absl::StrCat(path, ": superblock describes an impossible layout"));
  }
  if (file_size < sb.heap_offset + kChunkSize) {
    return absl::DataLossError(absl::StrCat(path, ": truncated file: ", file_size, " bytes, a pool needs at least ",
                                            sb.heap_offset + kChunkSize));
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t HeapOffset(uint64_t max_chunks) { return base::RoundUp(kChunkTableOffset + max_chunks * 8, kChunkSize); }

uint64_t MinimumPoolBytes() { return HeapOffset(1) + kChunkSize; }

Superblock NewSuperblock(uint64_t max_bytes) {
  Superblock sb;
  std::memset(&sb, 0, sizeof(sb));
  std::memcpy(sb.magic, kMagic, sizeof(kMagic));
  sb.version = kFormatVersion;
  sb.superblock_size = sizeof(Superblock);
  sb.unit_size = kUnitSize;
  sb.chunk_size = kChunkSize;
  sb.leaf_slots = kLeafSlots;
  sb.root_offset = kRootOffset;
  sb.log_offset = kLogOffset;
  sb.log_slot_size = kLogSlotSize;
  sb.chunk_table_offset = kChunkTableOffset;
  sb.leaf_cell_bytes = kLeafCellBytes;
  // The chunk table's size moves the heap: size the table for the whole
  // file first (an upper bound), then count the chunks that fit after it.
  const uint64_t heap_bound = HeapOffset(max_bytes / kChunkSize);
  sb.max_chunks = max_bytes > heap_bound ? (max_bytes - heap_bound) / kChunkSize : 1;
  sb.heap_offset = HeapOffset(sb.max_chunks);
  sb.checksum = SuperblockChecksum(sb);
  return sb;
}

absl::StatusOr<Superblock> ParseSuperblock(const char* bytes, size_t n, uint64_t file_size, const std::string& path) {
  Superblock sb = {};
  if (file_size < sizeof(SuperblockV1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a pmstore pool (", file_size, " bytes, shorter than a pool header)"));
  }
  if (n < sizeof(SuperblockV1)) return absl::DataLossError(absl::StrCat(path, ": short read of the superblock"));
  std::memcpy(&sb, bytes, sizeof(SuperblockV1));  // magic and version lie in the same place in both
  if (std::memcmp(sb.magic, kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a pmstore pool (bad magic)"));
  }
  if (sb.version < kOldestFormatVersion || sb.version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": unsupported pool format version ", sb.version,
                                                      " (this library reads versions ", kOldestFormatVersion, " to ",
                                                      kFormatVersion, ")"));
  }
  bool checksum_ok;
  if (sb.version == 1) {
    SuperblockV1 v1;
    std::memcpy(&v1, bytes, sizeof(v1));
    checksum_ok = v1.checksum == Checksum(&v1, offsetof(SuperblockV1, checksum));
    sb.leaf_cell_bytes = 0;
    sb.checksum = v1.checksum;
  } else {
    if (n < sizeof(Superblock)) return absl::DataLossError(absl::StrCat(path, ": short read of the superblock"));
    std::memcpy(&sb, bytes, sizeof(sb));
    checksum_ok = sb.checksum == SuperblockChecksum(sb);
  }
  if (!checksum_ok) return absl::DataLossError(absl::StrCat(path, ": checksum failure in the superblock"));
  PMSTORE_RETURN_IF_ERROR(CheckGeometry(sb, file_size, path));
  return sb;
}

}  // namespace pmstore::internal
