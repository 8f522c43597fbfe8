// Options for opening a store and for each read and write.
//
// Plain structs with defaults inline, copied by value; safe to share
// between threads as long as nobody modifies them.
#pragma once

#include <cstdint>
#include <string_view>

namespace pmstore {

// Smallest unit that reaches persistence without a system call, weakest
// last. A store persists at the granularity its mapping offers: cache-line
// flushes and one fence on DAX (or with PMEM2_FORCE_GRANULARITY), msync of
// the dirtied pages otherwise.
enum class Granularity {
  kByte,       // eADR: CPU caches are inside the persistence domain
  kCacheLine,  // flush the written lines, then fence
  kPage        // msync the dirtied pages
};
std::string_view GranularityName(Granularity granularity);  // "byte", "cache_line", "page"

struct Options {
  // --- Behaviour ---
  // Create the pool when the file is missing (else NotFound).
  bool create_if_missing = false;
  // Fail with AlreadyExists when the file is there.
  bool error_if_exists = false;
  // Size of a newly created pool file, rounded up to 2 MiB. Ignored when
  // the pool exists.
  uint64_t initial_size = 64ull << 20;
  // The largest the pool may grow to, in 2 MiB steps, when it runs out of
  // space (then ResourceExhausted). Fixed at creation: it sizes the chunk
  // table and the virtual range reserved so that growth never moves data.
  // 0 means initial_size (no growth).
  uint64_t max_size = 16ull << 30;
  // Open fails with FailedPrecondition when the mapping offers only a
  // coarser granularity than this (kCacheLine demands DAX or a forced
  // granularity; kPage accepts anything).
  Granularity required_granularity = Granularity::kPage;
  // Default for WriteOptions::sync when a call passes none.
  bool sync = true;
};

struct ReadOptions {
  // Verify the record's checksum on every read (DataLoss on a mismatch).
  // Off by default: `pmstore check` and Store::Check verify everything.
  bool verify_checksums = false;
};

struct WriteOptions {
  // true: the write is durable when the call returns (one fence at
  // cache-line granularity, one msync pass at page granularity).
  // false: gives up durability and, across a power failure or kernel
  // crash, atomicity: nothing is flushed until Store::Sync() or close.
  // A power failure before that Sync may leave a pool that Open reports
  // damaged (doc/FORMAT.md); after Sync returns, everything is durable.
  // A killed process loses nothing either way (the data is in the page
  // cache or the persistence domain's caches), as with LMDB's NOSYNC.
  bool sync = true;
};

}  // namespace pmstore
