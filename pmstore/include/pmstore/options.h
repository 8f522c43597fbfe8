// Options for opening a store and for each read and write.
//
// Plain structs with defaults inline, copied by value; safe to share
// between threads as long as nobody modifies them.
#pragma once

#include <cstdint>
#include <string_view>

namespace pmstore {

class Snapshot;  // snapshot.h

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
  // Open to read only (LMDB's MDB_RDONLY): the file is opened read-only
  // and never written, so a user who may only read it reads the pool.
  // Every write (Put, Delete, Write, a transaction's Commit) and Sync
  // returns PermissionDenied; reads, snapshots, iterators, transactions'
  // reads, Stats and CopyTo work as in a writable open. Any number of
  // processes may hold a pool read-only, beside one process that holds it
  // for writing (unless one of them is exclusive, below): each read call
  // sees every commit the writer made before the call began, without
  // reopening, following the writer's published changes (doc/STORE.md,
  // "Many processes on one pool"). A snapshot or an iterator of a
  // read-only open reads the commit it began at, with the leaves the
  // writer changed since as they were (the lock region's leaf image ring:
  // one image of each leaf however often it changes, 32 768 leaves deep,
  // a pool of some million keys); one that outlives that many returns
  // Aborted (begin it again). CheckNow checks the newest commit, holding
  // the writer's next commit off while it checks. A pool that a crash left
  // mid-commit, with no writer to recover it, is recovered in this
  // process's memory alone (a private copy-on-write mapping), so every
  // acknowledged write is read, and the file is left for the next writable
  // open to recover; no writer may join such an open (FailedPrecondition
  // names it). One process opens a pool once, read-only or not (as LMDB
  // opens an environment once): a second open in the same process, by
  // any name of the file, is FailedPrecondition ("already open in this
  // process"); its threads share the one Store. Never creates a pool:
  // create_if_missing is ignored (NotFound). A pool on device DAX, which
  // the driver maps shared only, is mapped without write permission: one
  // that a crash or a kill left to recover is FailedPrecondition ("open
  // the pool for writing once"), and nothing is changed.
  bool read_only = false;
  // Be alone with the pool (LMDB has no such mode; it is pmstore's
  // behaviour before pools were shared). A writable exclusive open shuts
  // out every other open, read-only ones included, and they shut it out;
  // a read-only exclusive open shuts out writers (other read-only opens
  // may share it). What it saves: a writable open alone takes no writer
  // turn per commit (a robust mutex in shared memory, about 100 ns) but
  // still publishes its commits for followers (a few ring entries and a
  // version word per changed leaf, nothing measurable, doc/FORMAT.md); a
  // read-only open alone reads in place under its own gate, where a
  // shared one checks the pool is quiet around each point read and, while
  // a writer applies a commit, pins it and reads each leaf stable (the
  // costs are in doc/STORE.md). Refused opens get FailedPrecondition
  // naming a holder's pid.
  bool exclusive = false;
  // Permission bits of a new pool file, less the process's umask, as
  // mdb_env_open's mode argument (0644 and umask 022 give rw-r--r--).
  // Only 0 to 0777; others are InvalidArgument. Ignored when the pool
  // exists: it keeps its own.
  uint32_t mode = 0644;
};

struct ReadOptions {
  // Verify the record's checksum on every read (DataLoss on a mismatch).
  // Off by default: `pmstore check` and Store::Check verify everything.
  bool verify_checksums = false;
  // Read the state as of this snapshot (Store::GetSnapshot of the same
  // store; another store's is InvalidArgument) instead of the latest
  // state. Not owned; it must outlive the call (and an iterator made
  // with it). nullptr: the latest state (an iterator takes a snapshot of
  // its own).
  const Snapshot* snapshot = nullptr;
};

struct WriteOptions {
  // true: the write is durable when the call returns (one fence at
  // cache-line granularity, one msync pass at page granularity).
  // false: the write is visible at once and durable only once Store::Sync
  // returns OK, a later sync=true write returns OK, or Close does. Such
  // writes form a run; a power failure (or kernel crash) inside one leaves
  // the pool clean and exactly as the last durable write left it: the
  // run's writes are lost together, never partly, never damaging (an undo
  // log in the pool sees to that, doc/FORMAT.md "Unsynced runs"). A killed
  // process loses nothing either way, as with LMDB's NOSYNC: its writes are
  // in the page cache or the persistence domain's caches, and the next
  // open in the same boot (told by the kernel's boot id) keeps every
  // acknowledged one and makes them durable. Cost: nothing
  // is flushed per write, but the first change of each 64-byte line that
  // existed before the run costs a flush and fence (page granularity: an
  // msync) — cheap for loads into new space, about three lines per leaf
  // for overwrites spread over an existing pool.
  bool sync = true;
};

}  // namespace pmstore
