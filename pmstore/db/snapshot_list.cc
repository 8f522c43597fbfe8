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
  newest.emplace_hint(at, std::string(key), record);
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

SnapshotList::Merged::Merged(const SnapshotList& list, Handle snapshot, std::string_view target) {
  for (auto entry = snapshot; entry != list.entries_.end(); ++entry) {
    cursors_.push_back(Cursor{entry->overlay.lower_bound(target), entry->overlay.end()});
  }
  Settle();
}

void SnapshotList::Merged::Next() {
  const std::string& current = *key_;  // a node of an overlay, not moved by iterating
  for (Cursor& cursor : cursors_) {
    if (cursor.at != cursor.end && cursor.at->first == current) ++cursor.at;
  }
  Settle();
}

// The smallest key among the cursors; its record from the oldest overlay
// that has it (the first in cursors_, since ties keep the earlier one).
void SnapshotList::Merged::Settle() {
  key_ = nullptr;
  for (const Cursor& cursor : cursors_) {
    if (cursor.at == cursor.end) continue;
    if (key_ == nullptr || cursor.at->first < *key_) {
      key_ = &cursor.at->first;
      record_ = cursor.at->second;
    }
  }
}

}  // namespace pmstore::internal
