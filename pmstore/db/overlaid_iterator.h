// An iterator over another iterator's keys with a sorted set of staged
// writes laid over them: a staged put replaces or adds a key, a staged
// delete hides one. What a transaction's iterator is (transaction.h).
//
// Both sources are walked side by side in the current direction; a turn
// (Next after Prev, or the reverse) re-seeks the one that is not at the
// current key, as LevelDB's merging iterator does.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmstore/iterator.h"

namespace pmstore {

struct StagedWrite {
  std::string key;
  std::optional<std::string> value;  // nullopt: deleted
};

class OverlaidIterator final : public Iterator {
 public:
  // `staged`: in ascending key order, each key once, only keys in the
  // base iterator's range. `landed` is called with each key the iterator
  // lands on that comes from `base` (a transaction's read). `reads_through`
  // (the snapshot `base` reads at) is kept while the iterator lives.
  OverlaidIterator(std::unique_ptr<Iterator> base, std::shared_ptr<const void> reads_through,
                   std::vector<StagedWrite> staged, std::function<void(std::string_view)> landed);

  void SeekToFirst() override;
  void Seek(std::string_view target) override;
  void SeekToLast() override;
  void SeekForPrev(std::string_view target) override;
  void Next() override;
  void Prev() override;
  bool Valid() const override { return valid_; }
  std::string_view key() const override { return from_staged_ ? staged_[at_].key : base_->key(); }
  std::string_view value() const override { return from_staged_ ? *staged_[at_].value : base_->value(); }
  absl::Status status() const override { return base_->status(); }

 private:
  bool StagedValid() const { return at_ >= 0 && at_ < static_cast<std::ptrdiff_t>(staged_.size()); }
  // The first staged write >= `key` (> when not `inclusive`), or, going
  // backward, the last one <= `key` (< when not `inclusive`).
  std::ptrdiff_t StagedFrom(std::string_view key, bool forward, bool inclusive) const;
  // Moves both sources one step the current way from the current key.
  void Step();
  // Both sources strictly past `key` the current way (after a turn).
  void Reposition(const std::string& key);
  // Picks the current entry from the two sources, skipping staged deletes
  // and the keys they hide.
  void Settle();

  // Destroyed after base_, which reads through it.
  const std::shared_ptr<const void> reads_through_;
  std::unique_ptr<Iterator> base_;
  const std::vector<StagedWrite> staged_;
  const std::function<void(std::string_view)> landed_;
  std::ptrdiff_t at_ = -1;  // the staged write the walk is at
  bool forward_ = true;
  bool valid_ = false;
  bool from_staged_ = false;  // the current entry is staged_[at_]
  bool hides_base_ = false;   // ... and base_ is at the same key
};

}  // namespace pmstore
