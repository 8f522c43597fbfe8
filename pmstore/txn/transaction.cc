#include "pmstore/txn/transaction.h"

#include <algorithm>

#include <cstring>

namespace pmstore::internal {
namespace {

inline size_t HashOffset(uint64_t offset) { return static_cast<size_t>((offset >> 3) * 0x9E3779B97F4A7C15ull >> 20); }

}  // namespace

void Transaction::Clear() {
  if (table_.size() != 64) {
    table_.assign(64, Slot{kEmpty, 0, false});
  } else {
    for (uint32_t i : order_) table_[i] = Slot{kEmpty, 0, false};
  }
  order_.clear();
  in_place_.clear();
  in_cells_.clear();
  fresh_.clear();
}

int64_t Transaction::Find(uint64_t offset) const {
  const size_t mask = table_.size() - 1;
  for (size_t i = HashOffset(offset) & mask;; i = (i + 1) & mask) {
    if (table_[i].offset == offset) return table_[i].live ? static_cast<int64_t>(i) : -1;
    if (table_[i].offset == kEmpty) return -1;
  }
}

// fresh_ is kept sorted by start (the ranges never overlap), so that the
// test every Write makes is a binary search: a batch of a thousand puts
// allocates dozens of leaves, and a linear scan per word written cost a
// sixth of a bulk load's time.
void Transaction::MarkFresh(uint64_t offset, uint64_t size) {
  auto at = std::upper_bound(fresh_.begin(), fresh_.end(), std::make_pair(offset, uint64_t{0}));
  fresh_.emplace(at, offset, size);
}

bool Transaction::IsFresh(uint64_t offset) const {
  // The last range that starts at or before `offset`.
  auto after = std::upper_bound(fresh_.begin(), fresh_.end(), std::make_pair(offset, ~uint64_t{0}));
  if (after == fresh_.begin()) return false;
  const auto& [start, size] = *std::prev(after);
  return offset < start + size;
}

void Transaction::Write(uint64_t offset, uint64_t value) {
  if (IsFresh(offset)) {
    std::memcpy(base_ + offset, &value, 8);
    in_place_.emplace_back(offset, 8);
    return;
  }
  if ((order_.size() + 1) * 2 > table_.size()) Grow();
  const size_t mask = table_.size() - 1;
  size_t i = HashOffset(offset) & mask;
  while (table_[i].offset != kEmpty && table_[i].offset != offset) i = (i + 1) & mask;
  if (table_[i].offset == kEmpty) {
    table_[i].offset = offset;
    order_.push_back(static_cast<uint32_t>(i));
  }
  table_[i].value = value;
  table_[i].live = true;
}

void Transaction::DropWritesInto(uint64_t offset, uint64_t size) {
  for (uint32_t i : order_) {
    const uint64_t target = table_[i].offset & ~kVerifyMask;
    if (target >= offset && target < offset + size) table_[i].live = false;
  }
}

void Transaction::Grow() {
  std::vector<Slot> old = std::move(table_);
  std::vector<uint32_t> old_order = std::move(order_);
  table_.assign(old.size() * 2, Slot{kEmpty, 0, false});
  order_.clear();
  const size_t mask = table_.size() - 1;
  for (uint32_t j : old_order) {
    size_t i = HashOffset(old[j].offset) & mask;
    while (table_[i].offset != kEmpty) i = (i + 1) & mask;
    table_[i] = old[j];
    order_.push_back(static_cast<uint32_t>(i));
  }
}

void Transaction::Entries(std::vector<LogEntry>* entries) const {
  entries->clear();
  for (uint32_t i : order_) {
    if (table_[i].live) entries->push_back(LogEntry{table_[i].offset, table_[i].value});
  }
}

}  // namespace pmstore::internal
