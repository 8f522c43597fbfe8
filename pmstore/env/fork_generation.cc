#include "pmstore/env/fork_generation.h"

#include <pthread.h>

#include <mutex>

namespace pmstore::env {
namespace {

// Runs in the child right after fork, before fork returns there: an
// atomic increment is async-signal-safe.
void CountFork() { fork_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint64_t CountForks() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, CountFork); });
  return ForkGeneration();
}

}  // namespace pmstore::env
