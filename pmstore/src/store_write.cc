// The write path: every Put, Delete and WriteBatch is staged as one
// transaction, committed (doc/FORMAT.md, "Commit protocol") and applied.
// A persistence failure poisons the store.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/src/persist_site.h"
#include "pmstore/src/record.h"
#include "pmstore/src/store_impl.h"

namespace pmstore {

using internal::kUnitSize;
using internal::PersistSite;

namespace {

absl::Status CheckKey(std::string_view key) {
  if (key.size() > kMaxKeySize) {
    return absl::InvalidArgumentError(absl::StrCat("key of ", key.size(), " bytes exceeds the limit of ", kMaxKeySize));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StoreImpl::Put(const WriteOptions& options, std::string_view key, std::string_view value) {
  const Op op{WriteBatch::OpKind::kPut, key, value};
  return WriteOps(options, &op, 1);
}

absl::Status StoreImpl::Delete(const WriteOptions& options, std::string_view key) {
  const Op op{WriteBatch::OpKind::kDelete, key, {}};
  return WriteOps(options, &op, 1);
}

absl::Status StoreImpl::Write(const WriteOptions& options, const WriteBatch& batch) {
  std::vector<Op> ops;
  ops.reserve(batch.Count());
  for (const WriteBatch::Op& op : batch.ops()) ops.push_back(Op{op.kind, op.key, op.value});
  return WriteOps(options, ops.data(), ops.size());
}

absl::Status StoreImpl::WriteOps(const WriteOptions& options, const Op* ops, size_t count) {
  for (size_t i = 0; i < count; ++i) PMSTORE_RETURN_IF_ERROR(CheckKey(ops[i].key));
  internal::TurnGuard turn(&write_mu_);
  PMSTORE_RETURN_IF_ERROR(Writable());
  internal::ExclusiveGuard lock(&mu_);
  LoadSpace();
  bool sync = options.sync;
  for (int attempt = 0;; ++attempt) {
    // A durable write ends the unsynced run first: it writes in place
    // where the run's base may still be the state a crash returns to.
    absl::Status status;
    if (sync && undo_.open()) {
      status = PersistRun();
      if (status.ok()) ForgetRun();
    } else if (!sync && !undo_.open()) {
      status = BeginRun();
    }
    if (!status.ok()) return status;
    tx_.set_guard(sync ? nullptr : this);
    status = Stage(ops, count);
    if (status.ok()) {
      status = Commit(sync);
    } else {
      Abandon();
    }
    tx_.set_guard(nullptr);
    if (status.ok() || attempt > 0 || !poisoned_.ok()) return internal::WithPath(status, path_);
    PMSTORE_RETURN_IF_ERROR(MakeRoom(status, &sync));  // then once more
  }
}

absl::Status StoreImpl::Stage(const Op* ops, size_t count) {
  if (separator_image_ != 0 || index_.on_image()) PMSTORE_RETURN_IF_ERROR(DropSeparatorImage());
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].kind == WriteBatch::OpKind::kDelete) {
      PMSTORE_RETURN_IF_ERROR(StageDelete(ops[i].key));
    } else {
      PMSTORE_RETURN_IF_ERROR(StagePut(ops[i].key, ops[i].value));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> StoreImpl::WriteRecord(std::string_view key, std::string_view value) {
  const bool large = value.size() >= internal::kLargeValueThreshold;
  const uint64_t bytes = internal::RecordBytes(key.size(), value.size());
  PMSTORE_ASSIGN_OR_RETURN(const uint64_t record, alloc_.AllocUnits(tx_, internal::UnitsFor(bytes)));
  char* p = base_ + record;
  uint64_t checksum;
  if (!large) {
    checksum = internal::EncodeSmallRecord(p, key, value);
  } else {
    PMSTORE_ASSIGN_OR_RETURN(const uint64_t run, alloc_.AllocValue(tx_, value.size()));
    std::memcpy(base_ + run, value.data(), value.size());
    tx_.WroteInPlace(run, value.size());
    internal::RecordHeader header = {0, static_cast<uint32_t>(key.size()), internal::kRecordLargeValue,
                                     value.size()};
    std::memcpy(p, &header, sizeof(header));
    std::memcpy(p + sizeof(header), &run, 8);
    if (!key.empty()) std::memcpy(p + sizeof(header) + 8, key.data(), key.size());
    checksum = internal::RecordChecksum(p, base_ + run);
    std::memcpy(p, &checksum, 8);
  }
  tx_.WroteInPlace(record, bytes);
  tx_.Verify(internal::kVerifyRecord, record, checksum);
  return record;
}

void StoreImpl::FreeRecord(uint64_t record) {
  internal::RecordView view;
  if (!internal::ReadRecord(base_, pool_->length(), record, &view)) return;  // damaged: leak rather than guess
  if (view.large) alloc_.FreeValue(tx_, view.value_offset, view.value.size());
  alloc_.FreeUnits(tx_, record, view.units);
}

absl::Status StoreImpl::StagePut(std::string_view key, std::string_view value) {
  index_.Prefetch(key);  // the leaf's misses overlap the record's writing
  // A record that fits a leaf cell is written there by the index (format
  // version 2); any other is written out of line first.
  internal::LeafIndex::NewRecord record;
  record.value = value;
  if (!index_.geometry().Fits(internal::RecordBytes(key.size(), value.size()), value.size())) {
    PMSTORE_ASSIGN_OR_RETURN(record.record, WriteRecord(key, value));
  }
  internal::LeafIndex::Unlinked replaced;
  PMSTORE_RETURN_IF_ERROR(index_.Upsert(tx_, alloc_, key, record, &replaced));
  // A snapshot keeps what the key had (an abandoned commit leaves a
  // pre-image equal to the current record, which reads the same).
  if (!snapshots_.empty()) snapshots_.WillChange(key, replaced.record);
  if (replaced.record == 0) {
    ++key_delta_;
  } else if (!replaced.in_cell) {
    FreeRecord(replaced.record);
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::StageDelete(std::string_view key) {
  internal::LeafIndex::Unlinked removed;
  PMSTORE_RETURN_IF_ERROR(index_.Remove(tx_, alloc_, key, &removed));
  if (removed.record != 0) {
    if (!snapshots_.empty()) snapshots_.WillChange(key, removed.record);
    if (!removed.in_cell) FreeRecord(removed.record);
    --key_delta_;
  }
  return absl::OkStatus();
}

void StoreImpl::StageRoot() {
  uint64_t words[internal::kRootWords];
  for (uint64_t i = 0; i < internal::kRootWords; ++i) words[i] = tx_.Read(internal::kRootOffset + 8 * i);
  internal::Root root;
  std::memcpy(&root, words, sizeof(root));
  root.key_count = key_count_ + key_delta_;
  root.num_chunks = alloc_.num_chunks();
  root.checksum = internal::RootChecksum(root);
  std::memcpy(words, &root, sizeof(root));
  for (uint64_t i = 0; i < internal::kRootWords; ++i) {
    if (tx_.Read(internal::kRootOffset + 8 * i) != words[i]) tx_.Write(internal::kRootOffset + 8 * i, words[i]);
  }
}

void StoreImpl::Abandon() {
  // Everything written in place went to space nothing committed refers
  // to; only the in-memory views need to forget this transaction.
  tx_.Clear();
  key_delta_ = 0;
  alloc_.Abandoned();
  index_.Abandoned();
}

absl::Status StoreImpl::MakeRoom(const absl::Status& failure, bool* sync) {
  if (undo_.full()) {
    // The run touched more live lines than its undo log holds: it ends
    // here, and this write is made durable itself (a durable commit needs
    // no undo).
    PMSTORE_RETURN_IF_ERROR(PersistRun());
    ForgetRun();
    *sync = true;
    return absl::OkStatus();
  }
  if (!absl::IsResourceExhausted(failure)) return internal::WithPath(failure, path_);
  if (undo_.open()) {
    // What the run freed is reusable once it ended.
    PMSTORE_RETURN_IF_ERROR(PersistRun());
    ForgetRun();
    return absl::OkStatus();
  }
  // A commit of its own that frees empty small chunks, so that large
  // values can use them.
  if (alloc_.FreeEmptySmallChunks(tx_) == 0) {
    Abandon();
    return internal::WithPath(failure, path_);
  }
  return Commit(true);
}

absl::StatusOr<uint64_t> StoreImpl::Grow(uint64_t chunks) {
  const uint64_t now = alloc_.num_chunks();
  const uint64_t target = std::min(pool_->superblock.max_chunks, std::max(chunks, now + now / 4 + 1));
  const absl::Status grown = internal::GrowPool(*pool_, *persister_, target);
  if (grown.ok()) return target;
  // A full file system refuses cleanly (the file kept its size); anything
  // else is a file system that fails, and the length on the media unknown.
  if (absl::IsResourceExhausted(grown)) return grown;
  return Poison(grown);
}

// The commit protocol (doc/FORMAT.md): in-place writes and the log record
// are flushed and fenced once (the commit point); then the logged words
// are applied, their flush and fence left to the next commit (or Sync, or
// close). An unsynced commit writes no log record: it saves the live lines
// it is about to change in the run's undo log, applies its words, and
// leaves everything to the end of the run.
absl::Status StoreImpl::Commit(bool sync) {
  StageRoot();
  if (tx_.empty()) return absl::OkStatus();
  std::vector<internal::LogEntry>& entries = log_entries_;
  tx_.Entries(&entries);
  const uint64_t seq = next_seq_;
  if (!sync) {
    lines_.clear();
    for (const internal::LogEntry& entry : entries) {
      if (entry.offset & internal::kVerifyMask) continue;
      const uint64_t line = entry.offset & ~(kUnitSize - 1);
      if ((lines_.empty() || lines_.back() != line) && !alloc_.FreshInRun(line)) lines_.push_back(line);
    }
    absl::Status saved = SaveLines(lines_);
    // A process killed while the words are applied leaves half a commit
    // in memory; recovery in the same boot completes it from the journal.
    if (saved.ok()) saved = undo_.Journal(entries);
    if (!saved.ok()) {
      Abandon();
      return saved;  // when the undo log is full, the run ends and the write is made durable
    }
    // The commit before the run may have been durable, its applied words
    // still unflushed (unfenced_lines_): the run's end flushes them.
    for (uint64_t line : unfenced_lines_) MarkUnsynced(line, kUnitSize);
    for (const auto& [offset, size] : tx_.in_place()) MarkUnsynced(offset, size);
    for (const auto& [offset, size] : tx_.in_cells()) MarkUnsynced(offset, size);
    Apply(seq, sync);
    undo_.Applied();
    return absl::OkStatus();
  }
  if (entries.size() > internal::kLogCapacity) {
    Abandon();
    return absl::InvalidArgumentError(absl::StrCat(path_, ": a commit of ", entries.size(),
                                                   " metadata words exceeds the log (", internal::kLogCapacity,
                                                   "); split the batch"));
  }
  char* slot = base_ + internal::kLogOffset + (seq % 2) * internal::kLogSlotSize;
  const uint64_t log_bytes = sizeof(internal::LogHeader) + entries.size() * sizeof(internal::LogEntry);
  internal::LogHeader header = {};
  header.seq = seq;
  header.count = entries.size();
  header.checksum = internal::LogChecksum(header, entries.data());
  std::memcpy(slot + sizeof(header), entries.data(), entries.size() * sizeof(internal::LogEntry));
  std::memcpy(slot, &header, sizeof(header));
  const absl::Status persisted = PersistCommit(slot, log_bytes);
  if (!persisted.ok()) {
    // Not acknowledged, and nothing of it applied: readers keep the
    // state before it. What reached the media is unknown.
    Abandon();
    return Poison(persisted);
  }
  last_record_ = header;
  Apply(seq, sync);
  return absl::OkStatus();
}

// One fence for data and log together, the commit point. The log record
// may reach the media before the data written in place; it names that
// data (kVerifyRecord, kVerifyLeaf, and the leaf headers it changes cover
// their slots), and recovery drops a newest commit whose data does not
// verify. The fence also covers the previous commit's applied lines: its
// log slot is the next one this store overwrites.
absl::Status StoreImpl::PersistCommit(char* slot, uint64_t log_bytes) {
  for (const auto& [offset, size] : tx_.in_place()) {
    PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kCommitInPlaceFlush, persister_->Flush(base_ + offset, size)));
  }
  for (const auto& [offset, size] : tx_.in_cells()) {
    PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kCommitCellFlush, persister_->Flush(base_ + offset, size)));
  }
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kCommitLogFlush, persister_->Flush(slot, log_bytes)));
  for (uint64_t line : unfenced_lines_) {
    PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kCommitAppliedFlush, persister_->Flush(base_ + line, kUnitSize)));
  }
  // An msync takes milliseconds: readers go on meanwhile, unless this
  // write changed the in-memory index (readers would find the new leaves,
  // which hold it, before it is durable). A fence is over before the gate
  // could be handed over and back.
  if (pool_->mapping->granularity() == mapping::Granularity::kPage && !index_.edited()) {
    internal::GateOpen readers_in(&mu_);
    return PMSTORE_PERSIST(kCommitDrain, persister_->Drain());
  }
  return PMSTORE_PERSIST(kCommitDrain, persister_->Drain());
}

void StoreImpl::Apply(uint64_t seq, bool sync) {
  index_.Settle();
  unfenced_lines_.clear();
  for (const internal::LogEntry& entry : log_entries_) {
    if (entry.offset & internal::kVerifyMask) continue;
    std::memcpy(base_ + entry.offset, &entry.value, 8);
    const uint64_t line = entry.offset & ~(kUnitSize - 1);
    if (unfenced_lines_.empty() || unfenced_lines_.back() != line) unfenced_lines_.push_back(line);
  }
  // The applied lines are flushed by the next commit, just before its
  // commit fence (or by Sync or close). Flushing them now would cost a
  // third fence in effect: the locked instruction that releases the lock
  // waits for outstanding write-backs.
  if (!sync) {
    for (uint64_t line : unfenced_lines_) MarkUnsynced(line, kUnitSize);
    unfenced_lines_.clear();
  }

  next_seq_ = seq + 1;
  separator_image_ = reinterpret_cast<const internal::Root*>(base_ + internal::kRootOffset)->separator_image;
  key_count_ += key_delta_;
  key_delta_ = 0;
  tx_.Clear();
  alloc_.Committed(seq);
  index_.Committed(seq);
  ReleaseSpaceThrough(ReleasableThrough(seq));
}

void StoreImpl::ReleaseSpaceThrough(uint64_t seq) {
  alloc_.ReleaseThrough(seq);
  index_.ReleaseCellsThrough(seq);
}

uint64_t StoreImpl::ReleasableThrough(uint64_t seq) {
  return pins_.ReusableThrough(undo_.open() ? std::min(seq, undo_.base_seq()) : seq);
}

absl::Status StoreImpl::PersistAll(PersistSite applied_site, PersistSite drain_site) {
  absl::Status status;
  for (uint64_t line : unfenced_lines_) {
    if (!status.ok()) break;
    status = PMSTORE_PERSIST_AT(applied_site, persister_->Flush(base_ + line, kUnitSize));
  }
  if (status.ok()) status = PMSTORE_PERSIST_AT(drain_site, persister_->Drain());
  return status.ok() ? status : Poison(status);
}

absl::Status StoreImpl::MakeDurable(PersistSite applied_site, PersistSite drain_site) {
  if (!undo_.open()) return PersistAll(applied_site, drain_site);
  PMSTORE_RETURN_IF_ERROR(PersistRun());
  internal::ExclusiveGuard lock(&mu_);
  ForgetRun();
  return absl::OkStatus();
}

absl::Status StoreImpl::Sync() {
  internal::TurnGuard turn(&write_mu_);
  PMSTORE_RETURN_IF_ERROR(Writable());
  return MakeDurable(PersistSite::kSyncAppliedFlush, PersistSite::kSyncDrain);
}

absl::Status StoreImpl::Poison(const absl::Status& failure) {
  const absl::Status named = internal::WithPath(failure, path_);
  if (poisoned_.ok()) poisoned_ = named;
  return named;
}

absl::Status StoreImpl::Writable() const {
  if (ABSL_TS_UNCHECKED_READ(closed_)) return ClosedError();  // changes only under write_mu_
  if (poisoned_.ok()) return absl::OkStatus();
  return absl::Status(poisoned_.code(),
                      absl::StrCat(poisoned_.message(), " (an earlier write failed there; the store refuses writes "
                                                        "until the pool is reopened)"));
}

}  // namespace pmstore
