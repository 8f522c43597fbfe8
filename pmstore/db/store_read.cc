// Reads: point lookups, zero-copy pins, iteration, stats.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/mapping/verify.h"
#include "pmstore/format/record.h"
#include "pmstore/db/store_impl.h"

namespace pmstore {
namespace {

absl::Status Damaged(const std::string& path, uint64_t record) {
  return absl::DataLossError(absl::StrCat(path, ": damaged record at offset ", record));
}

}  // namespace

absl::Status StoreImpl::ReadValue(const ReadOptions& options, uint64_t record, internal::RecordView* view) const {
  // A miss is no failure: its status carries no message, which absl keeps
  // inline (a message would cost an allocation per miss).
  if (record == 0) return absl::NotFoundError("");
  if (record == internal::LeafIndex::kDamagedLeaf) {
    return absl::DataLossError(
        absl::StrCat(pool_->path, ": checksum failure in the index leaf that would hold the key (pmstore check names it)"));
  }
  if (!internal::ReadRecord(base_, pool_->length(), record, view)) return Damaged(pool_->path, record);
  if (options.verify_checksums && !internal::RecordIsIntact(base_, pool_->length(), record)) {
    return Damaged(pool_->path, record);
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::Get(const ReadOptions& options, std::string_view key, std::string* value) {
  if (Forked()) return ForkedError();
  if (following_) {
    return ReadFollowing(options, key, /*take_pins=*/false,
                         [&](std::string_view found, uint64_t) { value->assign(found); });
  }
  internal::SharedGuard lock(&mu_);
  if (closed_) return ClosedError();
  if (options.snapshot != nullptr) PMSTORE_RETURN_IF_ERROR(CheckSnapshot(options));
  internal::RecordView view;
  absl::Status status = ReadValue(options, LookupAt(options, key), &view);
  if (status.ok()) value->assign(view.value.data(), view.value.size());
  return status;
}

absl::Status StoreImpl::Get(const ReadOptions& options, std::string_view key, PinnedValue* pinned) {
  pinned->Reset();
  if (Forked()) return ForkedError();
  if (following_) {
    return ReadFollowing(options, key, /*take_pins=*/true, [&](std::string_view found, uint64_t seen) {
      pinned->pin_id_ = pins_.Pin(seen);
      pinned->registry_ = &pins_;
      pinned->value_ = found;
    });
  }
  internal::SharedGuard lock(&mu_);
  if (closed_) return ClosedError();
  if (options.snapshot != nullptr) PMSTORE_RETURN_IF_ERROR(CheckSnapshot(options));
  internal::RecordView view;
  absl::Status status = ReadValue(options, LookupAt(options, key), &view);
  if (!status.ok()) return status;
  // Registered while the read lock keeps writers out, so no commit can
  // free this record before the pin is visible to it. A record read
  // through a snapshot may have been freed since: the pin is at the
  // snapshot's sequence, so the pin alone keeps it once the snapshot goes.
  pinned->pin_id_ = pins_.Pin(SeenSeq(options));
  pinned->registry_ = &pins_;
  pinned->value_ = view.value;
  return absl::OkStatus();
}

template <typename Take>
void StoreImpl::MultiGetWith(const ReadOptions& options, size_t count, const std::string_view* keys,
                             absl::Status* statuses, bool take_pins, Take take) {
  // The read lock is taken per chunk, so that a large batch keeps a
  // writer waiting no longer than a few Gets would.
  constexpr size_t kChunk = internal::LeafIndex::kMultiLookupChunk;
  if (Forked()) {
    std::fill(statuses, statuses + count, ForkedError());
    return;
  }
  if (options.snapshot != nullptr) {
    const absl::Status foreign = CheckSnapshot(options);
    if (!foreign.ok()) {
      std::fill(statuses, statuses + count, foreign);
      return;
    }
  }
  if (following_) {
    // A key at a time: each read checks its leaf, and follows the writer
    // when it changed.
    for (size_t i = 0; i < count; ++i) {
      statuses[i] = ReadFollowing(options, keys[i], take_pins,
                                  [&](std::string_view value, uint64_t seen) { take(i, value, seen); });
    }
    return;
  }
  uint64_t records[kChunk];
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = std::min(kChunk, count - first);
    internal::SharedGuard lock(&mu_);
    if (closed_) {
      std::fill(statuses + first, statuses + count, ClosedError());
      return;
    }
    index_.MultiLookup(keys + first, n, records);
    if (options.snapshot != nullptr) {
      // What the overlays name wins; the index's lookup of those keys was
      // wasted, which costs less than splitting the chunk.
      const auto& snapshot = static_cast<const SnapshotImpl&>(*options.snapshot);
      for (size_t i = 0; i < n; ++i) snapshots_.Find(snapshot.handle(), keys[first + i], &records[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      internal::RecordView view;
      statuses[first + i] = ReadValue(options, records[i], &view);
      if (statuses[first + i].ok()) take(first + i, view.value, SeenSeq(options));
    }
  }
}

std::vector<absl::Status> StoreImpl::MultiGet(const ReadOptions& options, std::span<const std::string_view> keys,
                                              std::vector<std::string>* values) {
  std::vector<absl::Status> statuses(keys.size());
  values->resize(keys.size());
  for (std::string& value : *values) value.clear();
  MultiGetWith(options, keys.size(), keys.data(), statuses.data(), /*take_pins=*/false,
               [&](size_t i, std::string_view value, uint64_t) { (*values)[i].assign(value.data(), value.size()); });
  return statuses;
}

void StoreImpl::MultiGet(const ReadOptions& options, size_t count, const std::string_view* keys, PinnedValue* values,
                         absl::Status* statuses) {
  for (size_t i = 0; i < count; ++i) values[i].Reset();
  MultiGetWith(options, count, keys, statuses, /*take_pins=*/true,
               [&](size_t i, std::string_view value, uint64_t seen_seq) {
                 // As in Get: pinned before the read lock lets a writer free the record.
                 values[i].pin_id_ = pins_.Pin(seen_seq);
                 values[i].registry_ = &pins_;
                 values[i].value_ = value;
               });
}

absl::StatusOr<bool> StoreImpl::Contains(std::string_view key) {
  if (Forked()) return ForkedError();
  if (following_) {
    const absl::Status status =
        ReadFollowing(ReadOptions(), key, /*take_pins=*/false, [](std::string_view, uint64_t) {});
    if (absl::IsNotFound(status)) return false;
    if (!status.ok()) return status;
    return true;
  }
  internal::SharedGuard lock(&mu_);
  if (closed_) return ClosedError();
  const uint64_t record = index_.Lookup(key);
  if (record == internal::LeafIndex::kDamagedLeaf) {
    internal::RecordView unused;
    return ReadValue(ReadOptions(), record, &unused);
  }
  return record != 0;
}

absl::Status StoreImpl::ScanBatch(const Snapshot& snapshot, const internal::SnapshotList::Start& start,
                                  const IterateOptions& range, size_t max_entries, std::vector<ScanEntry>* out,
                                  bool* end) {
  *end = true;
  if (Forked()) return ForkedError();
  internal::SharedGuard lock(&mu_);
  if (closed_) return ClosedError();
  PMSTORE_RETURN_IF_ERROR(CheckSnapshot(ReadOptions{.snapshot = &snapshot}));
  return ScanAt(static_cast<const SnapshotImpl&>(snapshot), start, [&](const internal::RecordView& view) {
    // In range: the walk starts inside it, so a key past one end of it
    // ends the walk, and a key before its start is passed over.
    const bool has_prefix = view.key.substr(0, range.prefix.size()) == range.prefix;
    if (start.forward) {
      if (!range.upper_bound.empty() && view.key >= range.upper_bound) return false;
      if (!has_prefix) return view.key < range.prefix;
    } else {
      if (view.key < range.lower_bound) return false;
      if (!has_prefix) return view.key > range.prefix;
      if (!range.upper_bound.empty() && view.key >= range.upper_bound) return true;
    }
    if (out->size() == max_entries) {
      *end = false;
      return false;
    }
    out->push_back({view.key, view.value});
    return true;
  });
}

absl::Status StoreImpl::ScanAt(const SnapshotImpl& snapshot, const internal::SnapshotList::Start& start,
                               const std::function<bool(const internal::RecordView&)>& take) const {
  absl::Status status;
  bool stopped = false;
  const auto read = [&](uint64_t record, internal::RecordView* view) {
    if (internal::ReadRecord(base_, pool_->length(), record, view)) return true;
    status = Damaged(pool_->path, record);
    return false;
  };
  // A pre-image: absent (0) is skipped, a record taken.
  const auto take_old = [&](uint64_t record) {
    internal::RecordView view;
    if (record == 0) return true;
    stopped = !read(record, &view) || !take(view);
    return !stopped;
  };
  // Whether key `a` comes before `b` in the walk.
  const auto before = [&](std::string_view a, std::string_view b) { return start.forward ? a < b : a > b; };
  internal::SnapshotList::Merged overlay(snapshots_, snapshot.handle(), start);
  const auto visit = [&](uint64_t record) {
    internal::RecordView view;
    if (!read(record, &view)) {
      stopped = true;
      return false;
    }
    // The index's forward scan starts at the first key >= the start's.
    if (start.forward && !start.inclusive && !start.from_end && view.key == start.key) return true;
    // Keys written since the snapshot that were absent then, or changed
    // then, come from the overlays.
    while (!overlay.done() && before(overlay.key(), view.key)) {
      if (!take_old(overlay.record())) return false;
      overlay.Next();
    }
    if (!overlay.done() && overlay.key() == view.key) {
      const uint64_t old = overlay.record();
      overlay.Next();
      return take_old(old);
    }
    stopped = !take(view);
    return !stopped;
  };
  const std::string_view from = start.forward && start.from_end ? std::string_view() : start.key;
  absl::Status scanned;
  if (following_) {
    const internal::LeafIndex::Following following{&*change_ring_, snapshot.sequence(), leaf_images()};
    scanned = start.forward ? index_.ScanFromFollowing(from, following, visit)
                            : index_.ScanBackFromFollowing(from, start.inclusive, start.from_end, following, visit);
  } else {
    scanned = start.forward ? index_.ScanFrom(from, visit)
                            : index_.ScanBackFrom(from, start.inclusive, start.from_end, visit);
  }
  if (!scanned.ok()) return absl::Status(scanned.code(), absl::StrCat(pool_->path, ": ", scanned.message()));
  for (; !stopped && !overlay.done(); overlay.Next()) take_old(overlay.record());
  if (following_ && status.ok()) return CheckNotRecoveredSince(snapshot);
  return status;
}

Stats StoreImpl::GetStats() {
  Stats stats;
  stats.path = path_;
  if (Forked()) return stats;
  // A follower's space as the bitmaps are at this moment (not at one
  // commit, while a writer changes them).
  if (following_) LoadWritersSpace();
  EnsureSpaceLoaded();
  internal::SharedGuard lock(&mu_);  // growth changes the mapped length; Close unmaps
  if (closed_) return stats;
  stats.keys = key_count_;
  stats.format_version = pool_->superblock.version;
  stats.opened_from_separator_image = opened_from_image_;
  stats.read_only = pool_->read_only;
  stats.pool_bytes = pool_->length();
  stats.max_pool_bytes = pool_->superblock.heap_offset + pool_->superblock.max_chunks * internal::kChunkSize;
  const internal::SpaceUsage usage = alloc_.Usage();
  stats.live_bytes = usage.live_bytes;
  stats.free_bytes = usage.free_bytes;
  stats.fragmentation =
      usage.free_bytes == 0 ? 0 : static_cast<double>(usage.free_in_partial_chunks) / usage.free_bytes;
  switch (pool_->mapping->granularity()) {
    case mapping::Granularity::kByte: stats.granularity = Granularity::kByte; break;
    case mapping::Granularity::kCacheLine: stats.granularity = Granularity::kCacheLine; break;
    case mapping::Granularity::kPage: stats.granularity = Granularity::kPage; break;
  }
  stats.dax = pool_->mapping->dax();
  stats.device_dax_align = pool_->device_align;
  stats.map_sync = pool_->mapping->map_sync();
  // smaps is blind to DAX; without PAGEMAP_SCAN (Linux < 6.7) a device
  // DAX pool is known by its one page size instead: the driver maps every
  // page at its align or not at all.
  const bool by_page_size = pool_->device_align != 0 && !mapping::PagemapScanAvailable();
  auto census = by_page_size ? mapping::CensusAtPageSize(pool_->length(), pool_->device_align)
                             : mapping::VerifyMapping(pool_->base(), pool_->length());
  if (census.ok()) {
    const uint64_t huge = census->pmd_bytes + census->pud_bytes;
    const uint64_t mapped = huge + census->pte_bytes;
    stats.pmd_mapped_share = mapped == 0 ? 0 : static_cast<double>(huge) / mapped;
    stats.pmd_verify_method = std::string(mapping::VerifyMethodName(census->method));
  } else {
    stats.pmd_verify_method = std::string(census.status().message());
  }
  return stats;
}

}  // namespace pmstore
