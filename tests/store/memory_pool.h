// A pool's superblock, chunk table and heap in memory, for the tests of
// the allocator (which reads and writes nothing else): a commit applies a
// transaction's logged words in place.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "pmstore/format/layout.h"
#include "pmstore/txn/transaction.h"

namespace pmstore::internal {

struct MemoryPool {
  MemoryPool(uint32_t version, uint64_t max_chunks) {
    std::memset(&sb, 0, sizeof(sb));
    sb.version = version;
    sb.chunk_table_offset = 4096;
    sb.max_chunks = max_chunks;
    sb.heap_offset = kChunkSize;
    memory.assign(sb.heap_offset + max_chunks * kChunkSize, 0);
  }
  char* base() { return memory.data(); }
  // Applies `tx`'s words and clears it.
  void Apply(Transaction& tx) {
    std::vector<LogEntry> entries;
    tx.Entries(&entries);
    for (const LogEntry& entry : entries) {
      if ((entry.offset & kVerifyMask) == 0) std::memcpy(memory.data() + entry.offset, &entry.value, 8);
    }
    tx.Clear();
  }
  // The committed chunk table word of chunk `c`.
  uint64_t Word(uint64_t c) const {
    uint64_t word;
    std::memcpy(&word, memory.data() + sb.chunk_table_offset + 8 * c, 8);
    return word;
  }

  Superblock sb;
  std::vector<char> memory;
};

}  // namespace pmstore::internal
