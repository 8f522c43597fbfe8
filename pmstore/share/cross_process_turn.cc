#include "pmstore/share/cross_process_turn.h"

#include <pthread.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/share/region_layout.h"

namespace pmstore::internal {

absl::Status CrossProcessTurn::MakeIn(void* region, const std::string& path) {
  pthread_mutexattr_t attr;
  if (const int err = pthread_mutexattr_init(&attr); err != 0) {
    return base::ErrnoStatus(err, "pthread_mutexattr_init", path);
  }
  int err = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (err == 0) err = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (err == 0) err = pthread_mutex_init(&region::TurnOf(region)->mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  if (err != 0) return base::ErrnoStatus(err, "pthread_mutex_init (process-shared, robust)", path);
  return absl::OkStatus();
}

absl::StatusOr<CrossProcessTurn::Taken> CrossProcessTurn::Answer(int err, const char* call) {
  switch (err) {
    case 0:
      return Taken::kGivenBack;
    case EOWNERDEAD:  // taken: the kernel marked it when its holder's thread exited
      return Taken::kHolderDied;
    case ENOTRECOVERABLE:
      return absl::FailedPreconditionError(absl::StrCat(
          path_,
          ": the pool's writer turn is unrecoverable: a writer died inside a commit and the process that took the "
          "turn next could not recover the pool. Close the pool in every process; the next open recovers it"));
    default:
      return base::ErrnoStatus(err, call, path_);
  }
}

absl::StatusOr<CrossProcessTurn::Taken> CrossProcessTurn::Take() {
  return Answer(pthread_mutex_lock(&region::TurnOf(region_)->mutex), "pthread_mutex_lock");
}

absl::StatusOr<std::optional<CrossProcessTurn::Taken>> CrossProcessTurn::TryTake() {
  const int err = pthread_mutex_trylock(&region::TurnOf(region_)->mutex);
  if (err == EBUSY) return std::nullopt;
  absl::StatusOr<Taken> taken = Answer(err, "pthread_mutex_trylock");
  if (!taken.ok()) return taken.status();
  return *taken;
}

void CrossProcessTurn::Recovered() {
  pthread_mutex_consistent(&region::TurnOf(region_)->mutex);  // EINVAL only when not owed: nothing to do
}

void CrossProcessTurn::Give() { pthread_mutex_unlock(&region::TurnOf(region_)->mutex); }

}  // namespace pmstore::internal
