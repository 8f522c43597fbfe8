#include "pmstore/env/fork_generation.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace pmstore::env {
namespace {

std::atomic<uint64_t> g_generation{0};

// Runs in the child right after fork, before fork returns there: an
// atomic increment is async-signal-safe.
void CountFork() { g_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint64_t ForkGeneration() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, CountFork); });
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace pmstore::env
