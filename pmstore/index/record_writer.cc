#include "pmstore/index/record_writer.h"

#include <cstring>

#include "pmstore/base/status_macros.h"
#include "pmstore/format/redo_log.h"

namespace pmstore::internal {

absl::StatusOr<uint64_t> RecordWriter::Write(Transaction& tx, SpaceAllocator& alloc, std::string_view key,
                                             std::string_view value, uint64_t cell) {
  const uint64_t bytes = RecordBytes(key.size(), value.size());
  uint64_t checksum;
  uint64_t record = cell;
  if (cell != 0) {
    checksum = EncodeSmallRecord(base_ + cell, key, value);
    tx.WroteInCell(cell, bytes);
  } else {
    PMSTORE_ASSIGN_OR_RETURN(record, alloc.AllocUnits(tx, UnitsFor(bytes)));
    if (!IsLargeValue(value.size())) {
      checksum = EncodeSmallRecord(base_ + record, key, value);
    } else {
      PMSTORE_ASSIGN_OR_RETURN(const uint64_t at, alloc.AllocValue(tx, value.size()));
      std::memcpy(base_ + at, value.data(), value.size());
      tx.WroteInPlace(at, value.size());
      checksum = EncodeLargeRecord(base_ + record, key, base_, at, value.size());
    }
    tx.WroteInPlace(record, bytes);
  }
  tx.Verify(kVerifyRecord, record, checksum);
  return record;
}

uint64_t RecordWriter::CopyCell(Transaction& tx, uint64_t from, uint64_t to) {
  std::memcpy(base_ + to, base_ + from, geometry_.cell_bytes);
  tx.WroteInCell(to, geometry_.cell_bytes);
  tx.Verify(kVerifyRecord, to, StoredChecksum(base_ + to));
  return to;
}

void RecordWriter::Free(Transaction& tx, SpaceAllocator& alloc, uint64_t leaf, int slot, uint64_t record,
                        uint64_t length) {
  if (geometry_.InCell(leaf, slot, record)) {
    // A record this transaction wrote there and unlinks again is not to be
    // verified at recovery: once this commit is in, the cell may be reused
    // while its log record is still one of the last two.
    tx.DropWritesInto(record, geometry_.cell_bytes);
    alloc.HoldCell(leaf, slot);
    return;
  }
  RecordView view;
  if (!ReadRecord(base_, length, record, &view)) return;  // damaged: leak rather than guess
  if (view.large) alloc.FreeValue(tx, view.value_offset, view.value.size());
  alloc.FreeUnits(tx, record, view.units);
}

}  // namespace pmstore::internal
