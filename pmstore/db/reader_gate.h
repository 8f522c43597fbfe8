// A reader-writer lock whose readers touch no shared cache line: each
// reader counts itself in one of 64 padded slots (chosen per thread), and
// a writer raises a flag and waits for every slot to drain. Readers thus
// scale across cores (a plain shared mutex bounces one line between
// them); writers pay a scan of 64 slots, which is nothing next to a
// commit's fences.
//
// Writers take turns outside the gate (a WriterTurn, below): Lock is
// called by one thread at a time, which may drop the gate (Unlock) and
// take it again while it keeps its turn, to let readers in while it waits
// for the media (GateOpen, below).
//
// Not reentrant: a thread holding it shared must not ask for it
// exclusively (nor the other way round).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace pmstore::internal {

class ABSL_LOCKABLE ReaderGate {
 public:
  void LockShared() ABSL_SHARED_LOCK_FUNCTION() {
    std::atomic<int64_t>& mine = slots_[ThreadSlot()].readers;
    for (;;) {
      mine.fetch_add(1, std::memory_order_seq_cst);
      if (!writer_.load(std::memory_order_seq_cst)) return;
      mine.fetch_sub(1, std::memory_order_seq_cst);
      waiting_readers_.fetch_add(1, std::memory_order_relaxed);
      while (writer_.load(std::memory_order_acquire)) std::this_thread::yield();
      waiting_readers_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  void UnlockShared() ABSL_UNLOCK_FUNCTION() {
    slots_[ThreadSlot()].readers.fetch_sub(1, std::memory_order_release);
  }

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    // Readers that backed off for the previous writer go first (briefly:
    // a steady stream of readers must not starve writers either).
    for (int i = 0; i < 64 && waiting_readers_.load(std::memory_order_relaxed) > 0; ++i) std::this_thread::yield();
    writer_.store(true, std::memory_order_seq_cst);
    for (const Slot& slot : slots_) {
      while (slot.readers.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() { writer_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSlots = 64;
  struct alignas(64) Slot {
    std::atomic<int64_t> readers{0};
  };
  // Threads get slots round robin (thread ids hash badly: pthread_t is
  // an address, and those share their low bits).
  static int ThreadSlot() {
    static std::atomic<int> next{0};
    thread_local const int slot = next.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return slot;
  }

  Slot slots_[kSlots];
  std::atomic<bool> writer_{false};
  std::atomic<int> waiting_readers_{0};
};

// The writers' turn: a plain pthread mutex, which ThreadSanitizer sees
// (it does not see into Debian's absl::Mutex, built without it), tried a
// while before sleeping on it. A turn at cache-line granularity lasts a
// microsecond or two, less than a futex sleep and wake-up on a VM: with
// two threads writing, sleeping at once cost most of the throughput
// (durable fillseq from 2 threads, 1 M keys: 256 k ops/s sleeping at
// once, 447-500 k trying first; updaterandom 140 k and 209 k).
class ABSL_LOCKABLE WriterTurn {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    for (int i = 0; i < kSpins; ++i) {
      if (mu_.try_lock()) return;
      std::this_thread::yield();
    }
    mu_.lock();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  // Tries, each after a yield: long enough for a turn at cache-line
  // granularity, short next to an msync (the waiter then sleeps).
  static constexpr int kSpins = 100;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE TurnGuard {
 public:
  explicit TurnGuard(WriterTurn* turn) ABSL_EXCLUSIVE_LOCK_FUNCTION(turn) : turn_(turn) { turn_->Lock(); }
  ~TurnGuard() ABSL_UNLOCK_FUNCTION() { turn_->Unlock(); }
  TurnGuard(const TurnGuard&) = delete;
  TurnGuard& operator=(const TurnGuard&) = delete;

 private:
  WriterTurn* turn_;
};

class ABSL_SCOPED_LOCKABLE SharedGuard {
 public:
  explicit SharedGuard(ReaderGate* gate) ABSL_SHARED_LOCK_FUNCTION(gate) : gate_(gate) { gate_->LockShared(); }
  ~SharedGuard() ABSL_UNLOCK_FUNCTION() { gate_->UnlockShared(); }
  SharedGuard(const SharedGuard&) = delete;
  SharedGuard& operator=(const SharedGuard&) = delete;

 private:
  ReaderGate* gate_;
};

class ABSL_SCOPED_LOCKABLE ExclusiveGuard {
 public:
  explicit ExclusiveGuard(ReaderGate* gate) ABSL_EXCLUSIVE_LOCK_FUNCTION(gate) : gate_(gate) { gate_->Lock(); }
  ~ExclusiveGuard() ABSL_UNLOCK_FUNCTION() { gate_->Unlock(); }
  ExclusiveGuard(const ExclusiveGuard&) = delete;
  ExclusiveGuard& operator=(const ExclusiveGuard&) = delete;

 private:
  ReaderGate* gate_;
};

// Inside an ExclusiveGuard: lets readers in for its own scope (a writer
// waiting for an msync), then shuts them out again.
class ABSL_SCOPED_LOCKABLE GateOpen {
 public:
  explicit GateOpen(ReaderGate* gate) ABSL_UNLOCK_FUNCTION(gate) : gate_(gate) { gate_->Unlock(); }
  ~GateOpen() ABSL_EXCLUSIVE_LOCK_FUNCTION() { gate_->Lock(); }
  GateOpen(const GateOpen&) = delete;
  GateOpen& operator=(const GateOpen&) = delete;

 private:
  ReaderGate* gate_;
};

}  // namespace pmstore::internal
