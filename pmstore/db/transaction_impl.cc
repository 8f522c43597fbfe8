#include "pmstore/db/transaction_impl.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/db/overlaid_iterator.h"
#include "pmstore/db/store_impl.h"

namespace pmstore {
namespace {

// Keys in messages: escaped, and cut short, as keys may be binary and long.
std::string Printable(std::string_view key) {
  constexpr size_t kShown = 64;
  std::string shown = absl::CHexEscape(std::string(key.substr(0, kShown)));
  if (key.size() > kShown) absl::StrAppend(&shown, "... (", key.size(), " bytes)");
  return shown;
}

// An iterator made after the transaction ended reads nothing.
class EndedIterator final : public Iterator {
 public:
  explicit EndedIterator(absl::Status status) : status_(std::move(status)) {}
  void SeekToFirst() override {}
  void Seek(std::string_view) override {}
  void SeekToLast() override {}
  void SeekForPrev(std::string_view) override {}
  void Next() override {}
  void Prev() override {}
  bool Valid() const override { return false; }
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  absl::Status status() const override { return status_; }

 private:
  absl::Status status_;
};

}  // namespace

std::unique_ptr<Transaction> StoreImpl::BeginTransaction(const TransactionOptions& options) {
  return std::make_unique<TransactionImpl>(this, GetSnapshot(), options, default_sync_);
}

TransactionImpl::TransactionImpl(StoreImpl* store, std::unique_ptr<Snapshot> snapshot,
                                 const TransactionOptions& options, bool default_sync)
    : store_(store),
      snapshot_(std::move(snapshot)),
      begin_sequence_(snapshot_->sequence()),
      default_sync_(default_sync) {
  read_options_.verify_checksums = options.verify_checksums;
  read_options_.snapshot = snapshot_.get();
}

absl::Status TransactionImpl::Open() const {
  if (!ended_) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the transaction has ended (committed, aborted or rolled back); begin a new one");
}

absl::Status TransactionImpl::Get(std::string_view key, std::string* value) {
  PMSTORE_RETURN_IF_ERROR(Open());
  const auto staged = staged_.find(key);
  if (staged != staged_.end()) {
    if (!staged->second) return absl::NotFoundError("");
    *value = *staged->second;
    return absl::OkStatus();
  }
  absl::Status status = store_->Get(read_options_, key, value);
  // A miss is a read too: a commit that adds the key conflicts.
  if (status.ok() || absl::IsNotFound(status)) read_.emplace(key);
  return status;
}

absl::Status TransactionImpl::Put(std::string_view key, std::string_view value) {
  PMSTORE_RETURN_IF_ERROR(Open());
  PMSTORE_RETURN_IF_ERROR(store_->CheckKey(key));
  staged_.insert_or_assign(std::string(key), std::string(value));
  return absl::OkStatus();
}

absl::Status TransactionImpl::Delete(std::string_view key) {
  PMSTORE_RETURN_IF_ERROR(Open());
  PMSTORE_RETURN_IF_ERROR(store_->CheckKey(key));
  staged_.insert_or_assign(std::string(key), std::nullopt);
  return absl::OkStatus();
}

absl::Status TransactionImpl::Write(const WriteBatch& batch) {
  PMSTORE_RETURN_IF_ERROR(Open());
  // All or nothing: a bad key leaves nothing of the batch staged.
  for (const WriteBatch::Op& op : batch.ops()) PMSTORE_RETURN_IF_ERROR(store_->CheckKey(op.key));
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.kind == WriteBatch::OpKind::kPut) {
      staged_.insert_or_assign(op.key, op.value);
    } else {
      staged_.insert_or_assign(op.key, std::nullopt);
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Iterator> TransactionImpl::NewIterator(const IterateOptions& range) {
  if (absl::Status open = Open(); !open.ok()) return std::make_unique<EndedIterator>(std::move(open));
  std::vector<StagedWrite> staged;
  // From the first key the range may hold; a key past the upper bound, or
  // (being >= the prefix) without the prefix, is past every key in range.
  for (auto it = staged_.lower_bound(std::max(range.lower_bound, range.prefix)); it != staged_.end(); ++it) {
    if (!range.upper_bound.empty() && it->first >= range.upper_bound) break;
    if (!absl::StartsWith(it->first, range.prefix)) break;
    staged.push_back(StagedWrite{it->first, it->second});
  }
  // After the transaction ends, its iterators go on reading what it saw;
  // the keys they land on no longer matter.
  made_iterator_ = true;
  return std::make_unique<OverlaidIterator>(store_->NewIterator(read_options_, range), snapshot_, std::move(staged),
                                            [this](std::string_view key) {
                                              if (!ended_) read_.emplace(key);
                                            });
}

absl::Status TransactionImpl::Commit(const WriteOptions& options) {
  PMSTORE_RETURN_IF_ERROR(Open());
  // Without writes there is nothing to apply, and the reads, all from one
  // snapshot, are consistent whatever was committed since.
  const absl::Status status = staged_.empty() ? absl::OkStatus() : store_->CommitTransaction(options, *this);
  End();
  return status;
}

void TransactionImpl::Rollback() {
  if (!ended_) End();
}

void TransactionImpl::End() {
  ended_ = true;
  staged_.clear();
  read_.clear();
  snapshot_.reset();  // releases the space it kept
}

SnapshotImpl* TransactionImpl::SnapshotNoIteratorReads() const {
  return made_iterator_ ? nullptr : static_cast<SnapshotImpl*>(snapshot_.get());
}

absl::Status TransactionImpl::Validate(const internal::SnapshotList& snapshots) const {
  const auto handle = static_cast<const SnapshotImpl*>(snapshot_.get())->handle();
  const auto changed = [&](std::string_view key) -> absl::Status {
    if (!snapshots.ChangedSince(handle, key)) return absl::OkStatus();
    return absl::AbortedError(absl::StrCat("transaction begun at sequence ", begin_sequence_, ": key \"",
                                           Printable(key),
                                           "\" was changed by another commit since; nothing was written, "
                                           "retry the transaction"));
  };
  for (const std::string& key : read_) PMSTORE_RETURN_IF_ERROR(changed(key));
  for (const auto& [key, value] : staged_) PMSTORE_RETURN_IF_ERROR(changed(key));
  return absl::OkStatus();
}

}  // namespace pmstore
