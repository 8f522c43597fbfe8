#include "pmstore/db/overlaid_iterator.h"

#include <algorithm>

namespace pmstore {

OverlaidIterator::OverlaidIterator(std::unique_ptr<Iterator> base, std::shared_ptr<const void> reads_through,
                                   std::vector<StagedWrite> staged, std::function<void(std::string_view)> landed)
    : reads_through_(std::move(reads_through)),
      base_(std::move(base)),
      staged_(std::move(staged)),
      landed_(std::move(landed)) {}

std::ptrdiff_t OverlaidIterator::StagedFrom(std::string_view key, bool forward, bool inclusive) const {
  const auto less = [](const StagedWrite& write, std::string_view k) { return write.key < k; };
  const auto greater = [](std::string_view k, const StagedWrite& write) { return k < write.key; };
  // Forward: the first >= key (lower bound) or > key (upper bound).
  // Backward: the one before the first > key (<= key) or >= key (< key).
  const auto bound = (forward == inclusive) ? std::lower_bound(staged_.begin(), staged_.end(), key, less)
                                            : std::upper_bound(staged_.begin(), staged_.end(), key, greater);
  return (bound - staged_.begin()) - (forward ? 0 : 1);
}

void OverlaidIterator::SeekToFirst() {
  forward_ = true;
  base_->SeekToFirst();
  at_ = 0;
  Settle();
}

void OverlaidIterator::Seek(std::string_view target) {
  forward_ = true;
  base_->Seek(target);
  at_ = StagedFrom(target, true, true);
  Settle();
}

void OverlaidIterator::SeekToLast() {
  forward_ = false;
  base_->SeekToLast();
  at_ = static_cast<std::ptrdiff_t>(staged_.size()) - 1;
  Settle();
}

void OverlaidIterator::SeekForPrev(std::string_view target) {
  forward_ = false;
  base_->SeekForPrev(target);
  at_ = StagedFrom(target, false, true);
  Settle();
}

void OverlaidIterator::Next() {
  if (forward_) {
    Step();
  } else {
    forward_ = true;
    Reposition(std::string(key()));
  }
  Settle();
}

void OverlaidIterator::Prev() {
  if (!forward_) {
    Step();
  } else {
    forward_ = false;
    Reposition(std::string(key()));
  }
  Settle();
}

void OverlaidIterator::Step() {
  const std::ptrdiff_t step = forward_ ? 1 : -1;
  if (!from_staged_ || hides_base_) {
    if (forward_) {
      base_->Next();
    } else {
      base_->Prev();
    }
  }
  if (from_staged_) at_ += step;
}

void OverlaidIterator::Reposition(const std::string& key) {
  if (forward_) {
    base_->Seek(key);
    if (base_->Valid() && base_->key() == key) base_->Next();
  } else {
    base_->SeekForPrev(key);
    if (base_->Valid() && base_->key() == key) base_->Prev();
  }
  at_ = StagedFrom(key, forward_, false);
}

void OverlaidIterator::Settle() {
  for (;;) {
    if (!base_->status().ok()) {
      valid_ = false;  // damaged data: the walk stops, as the base's does
      return;
    }
    const bool base_valid = base_->Valid();
    const bool staged_valid = StagedValid();
    if (!base_valid && !staged_valid) {
      valid_ = false;
      return;
    }
    valid_ = true;
    from_staged_ = staged_valid && (!base_valid || (forward_ ? staged_[at_].key <= base_->key()
                                                              : staged_[at_].key >= base_->key()));
    hides_base_ = from_staged_ && base_valid && staged_[at_].key == base_->key();
    if (!from_staged_) {
      landed_(base_->key());
      return;
    }
    if (staged_[at_].value.has_value()) return;
    Step();  // a staged delete: neither it nor the key it hides is an entry
  }
}

}  // namespace pmstore
