// The live snapshots, oldest first, each with an overlay of pre-images:
// the records keys had at that snapshot and no longer have.
//
// The index (leaf_index.h) changes in place and keeps no history, so
// history is kept beside it, in memory and only while a snapshot lives.
// When a write changes key k and the newest snapshot's overlay lacks k,
// k -> the record it had (0: absent) goes there. The state at snapshot S
// is then: the first overlay from S's on (S's, then each newer one's, in
// order) that names k, else the current index. Releasing S merges its
// overlay into the next older snapshot's, keeping that one's entries
// where both name a key (doc/STORE.md, "Snapshots", has the argument).
// The overlays from S's on therefore name exactly the keys that commits
// after S changed: a write that is abandoned takes its entries back out
// (Abandoned), which is what lets a transaction's commit ask whether
// anything it read changed since it began (ChangedSince).
// Records named in overlays stay valid: records are never changed once
// written, and the store pins each snapshot's sequence, so their space is
// not reused while a snapshot that can see them lives.
//
// Thread-compatible: the store reads it under its read gate and changes
// it with the gate held exclusively.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pmstore/snapshot.h"

namespace pmstore::internal {

class SnapshotList {
 public:
  // Key -> the record it had at the snapshot (0: absent).
  using Overlay = std::map<std::string, uint64_t, std::less<>>;
  struct Entry {
    Snapshot* owner;  // for the store to detach it when the store goes first
    Overlay overlay;
  };
  using Handle = std::list<Entry>::const_iterator;

  bool empty() const { return entries_.empty(); }
  const std::list<Entry>& entries() const { return entries_; }

  // A snapshot of the current state, the newest one (no write may be
  // staged meanwhile), held by `owner`.
  Handle Add(Snapshot* owner);
  // Forgets `snapshot`; an older neighbour takes over its pre-images.
  void Remove(Handle snapshot);

  // A write is about to change `key`, which has `record` now (0: absent).
  void WillChange(std::string_view key, uint64_t record);
  // The staged write whose changes WillChange saw was committed, or was
  // abandoned: then the entries it added go (the keys did not change).
  void Committed() { added_.clear(); }
  void Abandoned();

  // Whether a commit after `snapshot` (not one staged now) changed `key`.
  bool ChangedSince(Handle snapshot, std::string_view key) const {
    uint64_t record;
    return Find(snapshot, key, &record);
  }

  // The record `key` had at `snapshot`, when an overlay holds it: true
  // and *record (0: absent). false: the current index has it.
  bool Find(Handle snapshot, std::string_view key, uint64_t* record) const;

  // Where a walk of the overlays starts, and which way it goes: forward
  // from the first key >= `key` (> when not `inclusive`), or backward
  // from the last key <= `key` (< when not `inclusive`; from the greatest
  // key of all when `from_end`).
  struct Start {
    std::string_view key;
    bool inclusive = true;
    bool forward = true;
    bool from_end = false;
  };
  // The union of the overlays from `snapshot` on, in key order (or its
  // reverse) from `start`; where several name a key, the oldest wins.
  class Merged {
   public:
    Merged(const SnapshotList& list, Handle snapshot, const Start& start);
    bool done() const { return key_ == nullptr; }
    const std::string& key() const { return *key_; }
    uint64_t record() const { return record_; }
    // To the next key in the walk's direction.
    void Next();

   private:
    // Forward, the cursor's entry is *at; backward, the one before `at`.
    struct Cursor {
      Overlay::const_iterator at;
      Overlay::const_iterator begin;
      Overlay::const_iterator end;
    };
    bool AtEnd(const Cursor& cursor) const { return forward_ ? cursor.at == cursor.end : cursor.at == cursor.begin; }
    Overlay::const_iterator Current(const Cursor& cursor) const { return forward_ ? cursor.at : std::prev(cursor.at); }
    void Settle();

    bool forward_;
    std::vector<Cursor> cursors_;  // oldest overlay first
    const std::string* key_ = nullptr;
    uint64_t record_ = 0;
  };

 private:
  std::list<Entry> entries_;  // oldest first
  // The entries the write being staged added to the newest overlay.
  // Snapshots come and go only between writes, so these stay valid.
  std::vector<Overlay::iterator> added_;
};

}  // namespace pmstore::internal
