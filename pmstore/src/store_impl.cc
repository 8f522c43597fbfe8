// Opening, writing and committing (reads are in store_read.cc).
#include "pmstore/src/store_impl.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/src/persist_site.h"
#include "pmstore/src/record.h"

namespace pmstore {

using internal::kChunkSize;
using internal::kUnitSize;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Options& options) {
  auto store = StoreImpl::OpenWith(path, options, &internal::MakeMappingPersister);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(*store));
}

absl::StatusOr<std::unique_ptr<StoreImpl>> StoreImpl::OpenWith(const std::string& path, const Options& options,
                                                               internal::PersisterFactory make_persister) {
  std::unique_ptr<internal::Persister> persister;
  PMSTORE_ASSIGN_OR_RETURN(auto pool, internal::OpenPool(path, options, make_persister, &persister));
  std::unique_ptr<StoreImpl> store(new StoreImpl(std::move(pool), std::move(persister), options.sync));
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(store->Recover(), path));
  return store;
}

StoreImpl::StoreImpl(std::unique_ptr<internal::Pool> pool, std::unique_ptr<internal::Persister> persister, bool sync)
    : pool_(std::move(pool)),
      persister_(std::move(persister)),
      default_sync_(sync),
      base_(pool_->base()),
      alloc_(pool_->base(), pool_->superblock,
             [this](uint64_t chunks) ABSL_NO_THREAD_SAFETY_ANALYSIS { return Grow(chunks); }),
      index_(pool_->base(), pool_->superblock.heap_offset, pool_.get()),
      tx_(pool_->base()) {}

absl::Status StoreImpl::Recover() {
  internal::ExclusiveGuard lock(&mu_);
  PMSTORE_RETURN_IF_ERROR(internal::ReplayLog(*pool_, *persister_, &next_seq_));
  PMSTORE_ASSIGN_OR_RETURN(internal::Root root, internal::ReadRoot(*pool_));
  key_count_ = root.key_count;
  alloc_.Load(pool_->file_chunks());
  return index_.Load(root.head_leaf, pool_->length());
}

StoreImpl::~StoreImpl() {
  internal::ExclusiveGuard lock(&mu_);
  FlushUnsynced();
  for (uint64_t line : unfenced_lines_) PMSTORE_PERSIST(kCloseAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
  PMSTORE_PERSIST(kCloseDrain, persister_->Drain());
}

absl::StatusOr<uint64_t> StoreImpl::Grow(uint64_t chunks) {
  const uint64_t now = alloc_.num_chunks();
  const uint64_t target = std::min(pool_->superblock.max_chunks, std::max(chunks, now + now / 4 + 1));
  PMSTORE_RETURN_IF_ERROR(internal::GrowPool(*pool_, target));
  return target;
}

absl::StatusOr<uint64_t> StoreImpl::WriteRecord(std::string_view key, std::string_view value) {
  const bool large = value.size() >= internal::kLargeValueThreshold;
  const uint64_t bytes = internal::RecordBytes(key.size(), value.size());
  PMSTORE_ASSIGN_OR_RETURN(const uint64_t record, alloc_.AllocUnits(tx_, internal::UnitsFor(bytes)));
  char* p = base_ + record;
  internal::RecordHeader header = {0, static_cast<uint32_t>(key.size()), large ? internal::kRecordLargeValue : 0,
                                   value.size()};
  std::memcpy(p, &header, sizeof(header));
  char* body = p + sizeof(header);
  uint64_t run = 0;
  if (large) {
    PMSTORE_ASSIGN_OR_RETURN(run, alloc_.AllocRun(tx_, (value.size() + kChunkSize - 1) / kChunkSize));
    std::memcpy(base_ + run, value.data(), value.size());
    tx_.WroteInPlace(run, value.size());
    std::memcpy(body, &run, 8);
    body += 8;
  }
  if (!key.empty()) std::memcpy(body, key.data(), key.size());  // an empty view's data may be null
  if (!large && !value.empty()) std::memcpy(body + key.size(), value.data(), value.size());
  header.checksum = internal::RecordChecksum(p, large ? base_ + run : nullptr);
  std::memcpy(p, &header.checksum, 8);
  tx_.WroteInPlace(record, bytes);
  tx_.Verify(internal::kVerifyRecord, record, header.checksum);
  return record;
}

void StoreImpl::FreeRecord(uint64_t record) {
  internal::RecordView view;
  if (!internal::ReadRecord(base_, pool_->length(), record, &view)) return;  // damaged: leak rather than guess
  if (view.large) alloc_.FreeRun(tx_, view.value_offset);
  alloc_.FreeUnits(tx_, record, view.units);
}

absl::Status StoreImpl::StagePut(std::string_view key, std::string_view value) {
  index_.Prefetch(key);  // the leaf's misses overlap the record's writing
  PMSTORE_ASSIGN_OR_RETURN(const uint64_t record, WriteRecord(key, value));
  uint64_t replaced = 0;
  PMSTORE_RETURN_IF_ERROR(index_.Upsert(tx_, alloc_, key, record, &replaced));
  if (replaced != 0) {
    FreeRecord(replaced);
  } else {
    ++key_delta_;
  }
  return absl::OkStatus();
}

void StoreImpl::StageDelete(std::string_view key) {
  uint64_t removed = 0;
  index_.Remove(tx_, alloc_, key, &removed);
  if (removed != 0) {
    FreeRecord(removed);
    --key_delta_;
  }
}

namespace {
absl::Status CheckKey(std::string_view key) {
  if (key.size() > kMaxKeySize) {
    return absl::InvalidArgumentError(absl::StrCat("key of ", key.size(), " bytes exceeds the limit of ", kMaxKeySize));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status StoreImpl::Put(const WriteOptions& options, std::string_view key, std::string_view value) {
  PMSTORE_RETURN_IF_ERROR(CheckKey(key));
  internal::ExclusiveGuard lock(&mu_);
  absl::Status staged = StagePut(key, value);
  if (!staged.ok()) {
    Abandon();
    if (!absl::IsResourceExhausted(staged) || !ReclaimEmptyChunks()) return internal::WithPath(staged, pool_->path);
    staged = StagePut(key, value);  // once more, with the reclaimed chunks
    if (!staged.ok()) {
      Abandon();
      return internal::WithPath(staged, pool_->path);
    }
  }
  return Commit(options.sync);
}

bool StoreImpl::ReclaimEmptyChunks() {
  if (alloc_.FreeEmptySmallChunks(tx_) == 0) {
    Abandon();
    return false;
  }
  return Commit(true).ok();
}

absl::Status StoreImpl::Delete(const WriteOptions& options, std::string_view key) {
  PMSTORE_RETURN_IF_ERROR(CheckKey(key));
  internal::ExclusiveGuard lock(&mu_);
  StageDelete(key);
  return Commit(options.sync);
}

absl::Status StoreImpl::Write(const WriteOptions& options, const WriteBatch& batch) {
  for (const WriteBatch::Op& op : batch.ops()) PMSTORE_RETURN_IF_ERROR(CheckKey(op.key));
  internal::ExclusiveGuard lock(&mu_);
  absl::Status staged = StageBatch(batch);
  if (!staged.ok()) {
    Abandon();
    if (!absl::IsResourceExhausted(staged) || !ReclaimEmptyChunks()) return internal::WithPath(staged, pool_->path);
    staged = StageBatch(batch);  // once more, with the reclaimed chunks
    if (!staged.ok()) {
      Abandon();
      return internal::WithPath(staged, pool_->path);
    }
  }
  return Commit(options.sync);
}

absl::Status StoreImpl::StageBatch(const WriteBatch& batch) {
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.kind == WriteBatch::OpKind::kDelete) {
      StageDelete(op.key);
    } else {
      PMSTORE_RETURN_IF_ERROR(StagePut(op.key, op.value));
    }
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
  const internal::Root* root = reinterpret_cast<const internal::Root*>(base_ + internal::kRootOffset);
  absl::Status reloaded = index_.Load(root->head_leaf, pool_->length());
  (void)reloaded;  // it loaded at open; the leaves have not changed since
}

void StoreImpl::MarkUnsynced(uint64_t offset, uint64_t size) {
  if (size == 0) return;
  const uint64_t pages = pool_->length() / 4096;
  if (unsynced_pages_.size() * 64 < pages) unsynced_pages_.resize((pages + 63) / 64, 0);
  for (uint64_t page = offset / 4096; page <= (offset + size - 1) / 4096; ++page) {
    unsynced_pages_[page / 64] |= 1ull << (page % 64);
  }
  any_unsynced_ = true;
}

void StoreImpl::FlushUnsynced() {
  if (!any_unsynced_) return;
  for (uint64_t w = 0; w < unsynced_pages_.size(); ++w) {
    for (uint64_t bits = unsynced_pages_[w]; bits != 0; bits &= bits - 1) {
      const uint64_t page = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
      PMSTORE_PERSIST(kUnsyncedPagesFlush, persister_->Flush(base_ + page * 4096, 4096));
    }
    unsynced_pages_[w] = 0;
  }
  any_unsynced_ = false;
}

// The commit protocol (doc/FORMAT.md): in-place writes and the log record
// are flushed and fenced once (the commit point); then the logged words
// are applied, their flush and fence left to the next commit (or Sync, or
// close).
absl::Status StoreImpl::Commit(bool sync) {
  StageRoot();
  if (tx_.empty()) return absl::OkStatus();
  std::vector<internal::LogEntry>& entries = log_entries_;
  tx_.Entries(&entries);
  if (entries.size() > internal::kLogCapacity) {
    Abandon();
    return absl::InvalidArgumentError(absl::StrCat(pool_->path, ": a commit of ", entries.size(),
                                                   " metadata words exceeds the log (", internal::kLogCapacity,
                                                   "); split the batch"));
  }
  const uint64_t seq = next_seq_;
  char* slot = base_ + internal::kLogOffset + (seq % 2) * internal::kLogSlotSize;
  const uint64_t log_bytes = sizeof(internal::LogHeader) + entries.size() * sizeof(internal::LogEntry);
  if (!sync) {
    // The previous commit may have been durable, its applied words still
    // unflushed (unfenced_lines_). The next commit overwrites its log
    // record, so they join this run's ranges for the Sync (or close) that
    // ends it; they are cleared below.
    for (uint64_t line : unfenced_lines_) MarkUnsynced(line, kUnitSize);
    for (const auto& [offset, size] : tx_.in_place()) MarkUnsynced(offset, size);
    MarkUnsynced(static_cast<uint64_t>(slot - base_), log_bytes);
  }
  internal::LogHeader header = {};
  header.seq = seq;
  header.count = entries.size();
  header.checksum = internal::LogChecksum(header, entries.data());
  std::memcpy(slot + sizeof(header), entries.data(), entries.size() * sizeof(internal::LogEntry));
  std::memcpy(slot, &header, sizeof(header));
  if (sync) {
    // One fence for data and log together, the commit point. The log
    // record may reach the media before the data written in place; it
    // names that data (kVerifyRecord, kVerifyLeaf, and the leaf headers it
    // changes cover their slots), and recovery drops a newest commit whose
    // data does not verify. The fence also covers the previous commit's
    // applied lines: its log slot is the next one this store overwrites.
    FlushUnsynced();
    for (const auto& [offset, size] : tx_.in_place()) {
      PMSTORE_PERSIST(kCommitInPlaceFlush, persister_->Flush(base_ + offset, size));
    }
    PMSTORE_PERSIST(kCommitLogFlush, persister_->Flush(slot, log_bytes));
    for (uint64_t line : unfenced_lines_) PMSTORE_PERSIST(kCommitAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
    PMSTORE_PERSIST(kCommitDrain, persister_->Drain());
  }

  unfenced_lines_.clear();
  for (const internal::LogEntry& entry : entries) {
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
  key_count_ += key_delta_;
  key_delta_ = 0;
  tx_.Clear();
  alloc_.Committed(seq);
  alloc_.ReleaseThrough(pins_.ReusableThrough(seq));
  return absl::OkStatus();
}

absl::Status StoreImpl::Sync() {
  internal::ExclusiveGuard lock(&mu_);
  FlushUnsynced();
  for (uint64_t line : unfenced_lines_) PMSTORE_PERSIST(kSyncAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
  PMSTORE_PERSIST(kSyncDrain, persister_->Drain());
  return absl::OkStatus();
}

}  // namespace pmstore
