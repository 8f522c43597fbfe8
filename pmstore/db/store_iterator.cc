// The Iterator a store hands out (include/pmstore/iterator.h): batches of
// entries found under the read lock, refilled from past the last key
// returned, both ways, as of one snapshot (the caller's, or its own), so
// that the refills add up to one consistent state. An entry is a view
// into the mapped pool, not a copy: the snapshot keeps its space from
// reuse while the iterator lives.
#include <algorithm>

#include "pmstore/db/store_impl.h"

namespace pmstore {
namespace {

using Start = internal::SnapshotList::Start;

// The least key greater than every key that starts with `prefix`; empty
// when there is none (a prefix of 0xff bytes only).
std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

class StoreIterator final : public Iterator {
 public:
  StoreIterator(StoreImpl* store, const Snapshot* snapshot, std::unique_ptr<Snapshot> own, IterateOptions range)
      : store_(store),
        own_(std::move(own)),
        snapshot_(snapshot ? snapshot : own_.get()),
        range_(std::move(range)),
        prefix_end_(PrefixSuccessor(range_.prefix)) {}

  void SeekToFirst() override { Seek(""); }
  void Seek(std::string_view target) override {
    target_ = std::max({std::string(target), range_.lower_bound, range_.prefix});
    Fill(Start{target_, true, true, false}, false);
  }
  void SeekToLast() override { Fill(Top(), false); }
  void SeekForPrev(std::string_view target) override {
    const Start top = Top();
    target_ = target;
    Fill(top.from_end || target_ < top.key ? Start{target_, true, false, false} : top, false);
  }
  void Next() override {
    if (forward_ && ++index_ < entries_.size()) return;
    if (forward_ && end_) return;
    // Past the last key copied; or, turning round, past the current one.
    const bool onward = forward_;
    target_ = entries_[forward_ ? entries_.size() - 1 : index_].key;
    Fill(Start{target_, false, true, false}, onward);
  }
  void Prev() override {
    if (!forward_ && ++index_ < entries_.size()) return;
    if (!forward_ && end_) return;
    const bool onward = !forward_;
    target_ = entries_[!forward_ ? entries_.size() - 1 : index_].key;
    Fill(Start{target_, false, false, false}, onward);
  }
  bool Valid() const override { return status_.ok() && index_ < entries_.size(); }
  std::string_view key() const override { return entries_[index_].key; }
  std::string_view value() const override { return entries_[index_].value; }
  absl::Status status() const override { return status_; }

 private:
  // Where a backward walk of the whole range starts: below upper_bound,
  // below the first key past the prefix's, or at the end.
  Start Top() const {
    Start top{{}, false, false, true};
    if (!range_.upper_bound.empty()) top = Start{range_.upper_bound, false, false, false};
    if (!prefix_end_.empty() && (top.from_end || prefix_end_ < top.key)) top = Start{prefix_end_, false, false, false};
    return top;
  }
  // `onward`: the walk goes on the way it went, so the batch doubles; a
  // seek, or a turn, starts small again.
  void Fill(const Start& start, bool onward) {
    forward_ = start.forward;
    batch_ = onward ? std::min(2 * batch_, kBatchEntries) : kFirstBatch;
    entries_.clear();
    index_ = 0;
    status_ = store_->ScanBatch(*snapshot_, start, range_, batch_, &entries_, &end_);
  }

  // Per refill: a seek finds a few entries (a short range read, RocksDB's
  // seekrandom with a few nexts, pays for no more); each refill that goes
  // on doubles it, up to enough to amortise the re-seek, little enough
  // that the read lock is held only briefly.
  static constexpr size_t kFirstBatch = 16;
  static constexpr size_t kBatchEntries = 1024;
  StoreImpl* store_;
  std::unique_ptr<Snapshot> own_;  // when the caller named none
  const Snapshot* snapshot_;
  IterateOptions range_;
  const std::string prefix_end_;  // PrefixSuccessor(range_.prefix)
  std::string target_;            // the key the last fill started from
  std::vector<StoreImpl::ScanEntry> entries_;  // in the walk's order: ascending forward, descending backward
  bool forward_ = true;
  size_t batch_ = kFirstBatch;  // entries the last fill asked for
  size_t index_ = 0;
  bool end_ = true;  // nothing further in the walk's direction
  absl::Status status_;
};

}  // namespace

std::unique_ptr<Iterator> StoreImpl::NewIterator(const ReadOptions& options, const IterateOptions& range) {
  std::unique_ptr<Snapshot> own;
  if (options.snapshot == nullptr) own = GetSnapshot();
  return std::make_unique<StoreIterator>(this, options.snapshot, std::move(own), range);
}

}  // namespace pmstore
