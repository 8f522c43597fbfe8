// The one writer of records (format/record.h): a record goes into the
// cell of the slot that will name it when it fits a cell and that cell is
// free, else out of line (units of a small chunk; a large value in pages
// or a run of chunks, its record in units). Freeing is the writer's too:
// an out-of-line record and its value return to the allocator, a record
// in a cell has its cell held (space/allocator.h HoldCell).
//
// Every record is written in space nothing committed refers to, then
// registered with the transaction: its range to flush before the commit
// fence, and a verification entry recovery checks (kVerifyRecord).
//
// Thread-compatible: the store's writer uses it.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "pmstore/format/leaf.h"
#include "pmstore/space/allocator.h"
#include "pmstore/txn/transaction.h"

namespace pmstore::internal {

class RecordWriter {
 public:
  RecordWriter(char* base, const LeafGeometry& geometry) : base_(base), geometry_(geometry) {}

  // Whether the record of `key` and `value` fits a leaf cell.
  bool FitsCell(std::string_view key, std::string_view value) const {
    return geometry_.Fits(RecordBytes(key.size(), value.size()), value.size());
  }

  // Writes the record of `key` and `value` into `cell` (a free cell's
  // offset, when FitsCell) or, with `cell` 0, out of line; returns its
  // offset. ResourceExhausted when the pool has no room (nothing written).
  absl::StatusOr<uint64_t> Write(Transaction& tx, SpaceAllocator& alloc, std::string_view key,
                                 std::string_view value, uint64_t cell);

  // Copies the record in the cell at `from` (one written before, whole
  // cell) into the cell at `to` of a new leaf; returns `to`.
  uint64_t CopyCell(Transaction& tx, uint64_t from, uint64_t to);

  // Frees the record at `record`, unlinked by this transaction: named by
  // slot `slot` of the leaf at `leaf`, it lies in that slot's cell (held)
  // or out of line (freed, with its large value). A record that does not
  // read back (damage) is leaked rather than guessed at.
  void Free(Transaction& tx, SpaceAllocator& alloc, uint64_t leaf, int slot, uint64_t record, uint64_t length);

 private:
  char* base_;
  const LeafGeometry geometry_;
};

}  // namespace pmstore::internal
