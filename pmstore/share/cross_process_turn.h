// The writer turn across processes: one commit at a time among every
// process attached to a pool's lock region (doc/FORMAT.md, "Many
// processes on one pool", 1.). The holder publishes its commit through the
// change ring (change_ring.h).
//
// A process-shared robust mutex in the region's header, not a file lock:
// uncontended, taking and giving it are two atomic instructions, where an
// OFD lock costs two system calls per commit. Robust, because a writer may
// die holding it: the kernel marks the mutex when its owner's thread
// exits, and the next taker learns that the previous holder died inside a
// commit, which it must recover (redo the sealed commit, undo an unsynced
// run, publish the result) before it gives the turn back. A taker that
// gives the turn back without saying it recovered leaves the turn
// unrecoverable, and every later taker is told to have every process close
// the pool (the next open, alone, makes the region anew and recovers the
// pool itself), as LMDB answers MDB_PANIC.
//
// A handle into a ReaderSlot's mapping, valid while the slot is. The turn
// belongs to a thread: the thread that took it gives it. Within a process
// the store's own writer turn comes first, so one thread per process asks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pmstore::internal {

class CrossProcessTurn {
 public:
  // What the taker found.
  enum class Taken {
    kGivenBack,   // the previous holder gave the turn back: the pool is as it left it
    kHolderDied,  // the previous holder died holding it: recover, then Recovered()
  };

  // The turn of the region mapped at `region`, named `path` in messages.
  CrossProcessTurn(void* region, std::string path) : region_(region), path_(std::move(path)) {}

  // Makes the turn in a region being made (every process has left the old
  // one): free, and no holder has died. The failing call's error.
  static absl::Status MakeIn(void* region, const std::string& path);

  // Waits for the turn and takes it. FailedPrecondition when a taker
  // before could not recover from a dead holder (the turn is
  // unrecoverable until every process closes the pool); the failing
  // call's error otherwise, without the turn.
  absl::StatusOr<Taken> Take();
  // Takes the turn only if nobody holds it: nullopt when somebody does.
  absl::StatusOr<std::optional<Taken>> TryTake();
  // After Take answered kHolderDied: the pool is recovered, and the next
  // taker finds the turn given back.
  void Recovered();
  // Gives the turn back. Without Recovered() after kHolderDied, the turn
  // becomes unrecoverable (see above).
  void Give();

 private:
  absl::StatusOr<Taken> Answer(int err, const char* call);

  void* region_;
  std::string path_;
};

// Holds a CrossProcessTurn for a scope, when there is one (null: none to
// take): taken by the constructor, given back by the destructor.
class TurnHeld {
 public:
  explicit TurnHeld(CrossProcessTurn* turn) : turn_(turn) {
    if (turn_ == nullptr) return;
    absl::StatusOr<CrossProcessTurn::Taken> taken = turn_->Take();
    if (!taken.ok()) {
      status_ = taken.status();
      turn_ = nullptr;
      return;
    }
    holder_died_ = *taken == CrossProcessTurn::Taken::kHolderDied;
  }
  ~TurnHeld() {
    if (turn_ != nullptr) turn_->Give();
  }
  TurnHeld(const TurnHeld&) = delete;
  TurnHeld& operator=(const TurnHeld&) = delete;

  // OK when the turn is held (or there was none); else why not.
  const absl::Status& status() const { return status_; }
  // Whether the holder before died holding the turn.
  bool holder_died() const { return holder_died_; }
  // CrossProcessTurn::Recovered.
  void Recovered() {
    if (turn_ != nullptr) turn_->Recovered();
    holder_died_ = false;
  }

 private:
  CrossProcessTurn* turn_;
  absl::Status status_;
  bool holder_died_ = false;
};

}  // namespace pmstore::internal
