#include "pmstore/db/snapshot_list.h"

#include <iterator>

namespace pmstore::internal {

SnapshotList::Handle SnapshotList::Add(Snapshot* owner) {
  entries_.push_back(Entry{owner, {}});
  return std::prev(entries_.end());
}

void SnapshotList::Remove(Handle snapshot) {
  const auto gone = entries_.erase(snapshot, snapshot);  // the same entry, mutable
  if (gone != entries_.begin()) {
    // The older snapshot saw what this one saw for every key its own
    // overlay lacks; merge() moves exactly those nodes, without copies.
    std::prev(gone)->overlay.merge(gone->overlay);
  }
  entries_.erase(gone);
}

void SnapshotList::WillChange(std::string_view key, uint64_t record) {
  if (entries_.empty()) return;
  Overlay& newest = entries_.back().overlay;
  const auto at = newest.lower_bound(key);
  // Already there: the first change after the snapshot saved the record
  // it saw; a later one (in the same batch too) must not replace it.
  if (at != newest.end() && at->first == key) return;
  added_.push_back(newest.emplace_hint(at, std::string(key), record));
}

void SnapshotList::Abandoned() {
  if (!added_.empty()) {
    Overlay& newest = entries_.back().overlay;
    for (const Overlay::iterator& entry : added_) newest.erase(entry);
  }
  added_.clear();
}

bool SnapshotList::Find(Handle snapshot, std::string_view key, uint64_t* record) const {
  for (auto entry = snapshot; entry != entries_.end(); ++entry) {
    const auto found = entry->overlay.find(key);
    if (found != entry->overlay.end()) {
      *record = found->second;
      return true;
    }
  }
  return false;
}

SnapshotList::Merged::Merged(const SnapshotList& list, Handle snapshot, const Start& start) : forward_(start.forward) {
  for (auto entry = snapshot; entry != list.entries_.end(); ++entry) {
    const Overlay& overlay = entry->overlay;
    Overlay::const_iterator at;
    if (start.from_end) {
      at = forward_ ? overlay.begin() : overlay.end();
    } else if (forward_ == start.inclusive) {
      at = overlay.lower_bound(start.key);  // forward from >= key, or backward from < key
    } else {
      at = overlay.upper_bound(start.key);  // forward from > key, or backward from <= key
    }
    cursors_.push_back(Cursor{at, overlay.begin(), overlay.end()});
  }
  Settle();
}

void SnapshotList::Merged::Next() {
  const std::string& current = *key_;  // a node of an overlay, not moved by iterating
  for (Cursor& cursor : cursors_) {
    if (AtEnd(cursor) || Current(cursor)->first != current) continue;
    if (forward_) {
      ++cursor.at;
    } else {
      --cursor.at;
    }
  }
  Settle();
}

// The first key of the walk among the cursors (the smallest forward, the
// greatest backward); its record from the oldest overlay that has it (the
// first in cursors_, since ties keep the earlier one).
void SnapshotList::Merged::Settle() {
  key_ = nullptr;
  for (const Cursor& cursor : cursors_) {
    if (AtEnd(cursor)) continue;
    const auto entry = Current(cursor);
    if (key_ == nullptr || (forward_ ? entry->first < *key_ : entry->first > *key_)) {
      key_ = &entry->first;
      record_ = entry->second;
    }
  }
}

}  // namespace pmstore::internal
