// Readers holding zero-copy views (PinnedValue), snapshots, iterators and
// transactions register here with the last commit they could have seen;
// space freed by a later commit stays quarantined until they let go.
//
// The oldest pinned commit is also published in the open's slot of the
// pool's reader table (`pmstore readers`), which is where the processes
// that share a pool will read each other's. Published exactly when it
// appears or gets older (a pin of an older commit than the published
// one) and when the last pin goes; when a younger oldest remains after an
// unpin, at the next commit's ReusableThrough, which scans the pins
// anyway. Until then the published commit is older than the true one,
// which only ever keeps space longer. Keeping it exact at every unpin
// cost a pinned Get 25-35 ns of its 330 (a sorted count per commit).
//
// The newest pinned commit is published beside it, for the writer's rule
// on copying leaf images (ReaderSlot::NewestOtherPin): when a pin newer
// than the published one appears, and exact where the oldest is made so.
// Until then it is newer than the true one, which only costs copies.
//
// Thread-safe: pins come and go from reader threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "pmstore/env/fork_generation.h"
#include "pmstore/share/lock_region.h"

namespace pmstore {

class PinRegistry {
 public:
  uint64_t Pin(uint64_t seen_seq) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++next_id_;
    pins_.emplace(id, seen_seq);
    if (!published_.has_value()) {
      Publish(Range{seen_seq, seen_seq});
    } else if (seen_seq < published_->oldest || seen_seq > published_->newest) {
      Publish(Range{std::min(seen_seq, published_->oldest), std::max(seen_seq, published_->newest)});
    }
    return id;
  }
  void Unpin(uint64_t id) {
    // In a child forked while the pin was held, the registry is the
    // parent's copy, and a parent thread may have held mu_ at the fork: it
    // then stays locked in the child for ever. The pin is the parent's to
    // drop, in the parent's registry.
    if (env::ForkGeneration() != fork_generation_) return;
    std::lock_guard<std::mutex> lock(mu_);
    pins_.erase(id);
    if (pins_.empty() && published_.has_value()) Publish(std::nullopt);
  }
  // Space freed by commit K may be reused once every pin has seen K, i.e.
  // through this sequence number (`fallback` when nobody holds a pin).
  uint64_t ReusableThrough(uint64_t fallback) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<Range> pinned = Pinned();
    if (pinned != published_) Publish(pinned);
    return pinned.has_value() && pinned->oldest < fallback ? pinned->oldest : fallback;
  }
  // Where the pinned commits go from now on (null: nowhere); published at
  // once.
  void PublishTo(internal::ReaderSlot* slot) {
    std::lock_guard<std::mutex> lock(mu_);
    slot_ = slot;
    Publish(Pinned());
  }

 private:
  struct Range {
    uint64_t oldest;
    uint64_t newest;
    bool operator==(const Range&) const = default;
  };
  // The oldest and newest commits the pins saw (a walk of them: pins are few).
  std::optional<Range> Pinned() const {
    std::optional<Range> pinned;
    for (const auto& [id, seq] : pins_) {
      pinned =
          pinned.has_value() ? Range{std::min(pinned->oldest, seq), std::max(pinned->newest, seq)} : Range{seq, seq};
    }
    return pinned;
  }
  void Publish(std::optional<Range> pinned) {
    published_ = pinned;
    if (slot_ == nullptr) return;
    if (pinned.has_value()) {
      slot_->PublishPinned(pinned->oldest, pinned->newest);
    } else {
      slot_->PublishPinned(std::nullopt, std::nullopt);
    }
  }

  const uint64_t fork_generation_ = env::CountForks();  // at the open, as the store's
  std::mutex mu_;  // a pthread mutex, which ThreadSanitizer understands
  uint64_t next_id_ = 0;
  std::map<uint64_t, uint64_t> pins_;  // id -> last commit it could see
  internal::ReaderSlot* slot_ = nullptr;
  std::optional<Range> published_;  // what slot_ holds (nullopt: no pin)
};

}  // namespace pmstore
