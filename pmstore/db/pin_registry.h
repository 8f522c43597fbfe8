// Readers holding zero-copy views (PinnedValue) register here with the
// last commit they could have seen; space freed by a later commit stays
// quarantined until they let go.
//
// Thread-safe: pins come and go from reader threads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "pmstore/env/fork_generation.h"

namespace pmstore {

class PinRegistry {
 public:
  uint64_t Pin(uint64_t seen_seq) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++next_id_;
    pins_.emplace(id, seen_seq);
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
  }
  // Space freed by commit K may be reused once every pin has seen K, i.e.
  // through this sequence number (`fallback` when nobody holds a pin).
  uint64_t ReusableThrough(uint64_t fallback) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t oldest = fallback;
    for (const auto& [id, seq] : pins_) oldest = seq < oldest ? seq : oldest;
    return oldest;
  }

 private:
  const uint64_t fork_generation_ = env::CountForks();  // at the open, as the store's
  std::mutex mu_;  // a pthread mutex, which ThreadSanitizer understands
  uint64_t next_id_ = 0;
  std::map<uint64_t, uint64_t> pins_;  // id -> last commit it could see
};

}  // namespace pmstore
