// Space freed by commits, kept from reuse until no reader may still see
// it: what a transaction frees belongs to its commit's sequence number,
// and is released once every pin, snapshot and unsynced run that could
// read it has moved past that commit (the store says through which
// commit: ReleaseThrough). One list, in commit order, for every kind of
// space the store frees: units of small chunks, whole chunks, value pages
// and leaf cells.
//
// Holds no space itself: its owner (the allocator) marks what is held and
// unmarks it when released. Thread-compatible: the store's writer uses it.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace pmstore::internal {

class Quarantine {
 public:
  enum class Kind : uint8_t {
    kUnits,   // `count` units of a small chunk from `offset`
    kChunks,  // `count` whole chunks from `offset`
    kPages,   // `count` value pages from `offset` (across page chunks)
    kCell,    // the cell of slot `count` of the leaf at `offset`
  };
  struct Item {
    Kind kind;
    uint64_t offset;
    uint64_t count;
    uint64_t seq = 0;  // the commit that freed it (0 while its transaction is open)
  };

  // Freed by the open transaction.
  void Add(Kind kind, uint64_t offset, uint64_t count) { pending_.push_back(Item{kind, offset, count}); }
  // The open transaction committed as `seq`: what it freed waits for it.
  void Committed(uint64_t seq) {
    for (Item& item : pending_) {
      item.seq = seq;
      held_.push_back(item);
    }
    pending_.clear();
  }
  // Freed by commit `seq` of another process's writer, followed now: no
  // older than anything held.
  void AddCommitted(Item item, uint64_t seq) {
    item.seq = seq;
    held_.push_back(item);
  }
  // The open transaction was abandoned: what it freed was never freed.
  // Returns it (the caller unmarks what it marked), oldest first.
  std::vector<Item> TakeAbandoned() {
    std::vector<Item> abandoned;
    abandoned.swap(pending_);
    return abandoned;
  }
  // release(item) for everything freed by commits <= seq, oldest first.
  template <typename Release>
  void ReleaseThrough(uint64_t seq, Release&& release) {
    while (!held_.empty() && held_.front().seq <= seq) {
      release(held_.front());
      held_.pop_front();
    }
  }
  // Freed by the open transaction, in the order freed.
  const std::vector<Item>& pending() const { return pending_; }
  // Items committed and still held.
  size_t held() const { return held_.size(); }
  // visit(item) for everything committed and still held.
  template <typename Visit>
  void ForEachHeld(Visit&& visit) const {
    for (const Item& item : held_) visit(item);
  }

 private:
  std::vector<Item> pending_;
  std::deque<Item> held_;
};

}  // namespace pmstore::internal
