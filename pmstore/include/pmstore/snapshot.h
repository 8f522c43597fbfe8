// A consistent read view of a store: the state after one commit, kept
// while writers go on (LevelDB's and RocksDB's Snapshot, LMDB's read
// transaction). Name it in ReadOptions::snapshot and Get, MultiGet and
// NewIterator read that state, whatever was written since.
//
//   std::unique_ptr<pmstore::Snapshot> snap = store->GetSnapshot();
//   pmstore::ReadOptions at_snap;
//   at_snap.snapshot = snap.get();
//   s = store->Get(at_snap, "user/42", &value);   // as it was at GetSnapshot()
//   snap.reset();                                  // releases it
//
// Costs while one is held, nothing otherwise: each key written after the
// newest snapshot keeps its previous record (and the space of that
// record) until the snapshot is released, as a PinnedValue keeps its
// value, and the store holds the key and the record's offset in memory
// (doc/STORE.md, "Snapshots"). Holding one never blocks readers or
// writers.
//
// Thread-safe: any number of threads may read through one snapshot at
// once. Not copyable; destroying it (the unique_ptr) releases it. Release
// it before the store that made it is destroyed (one destroyed later does
// nothing; reading through it then is undefined); after Store::Close,
// reads through it fail as every read does (FailedPrecondition) and
// releasing it is fine.
#pragma once

#include <cstdint>

namespace pmstore {

class Snapshot {
 public:
  virtual ~Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // The sequence number of the last commit this snapshot sees (every
  // commit, durable or not, takes the next number; 0 before the first).
  virtual uint64_t sequence() const = 0;

 protected:
  Snapshot() = default;
};

}  // namespace pmstore
