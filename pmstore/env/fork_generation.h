// How many times this process's ancestry has forked since an object began
// counting, as seen from this process: a child's count is its parent's
// plus one. An object that records the count when it is made can tell, by
// one relaxed load, that it is now in a forked child (a store must not be
// used across fork: its mapping, lock and locks' states were the
// parent's). Cheaper than getpid(), a system call, on every read.
#pragma once

#include <atomic>
#include <cstdint>

namespace pmstore::env {

// Bumped in the child by the pthread_atfork handler CountForks registers.
inline std::atomic<uint64_t> fork_generation{0};

// Registers that handler (the first call only) and returns the current
// count: a store calls it when it opens, before any fork it could be used
// across.
uint64_t CountForks();

// The current count; meaningful once CountForks has been called.
inline uint64_t ForkGeneration() { return fork_generation.load(std::memory_order_relaxed); }

}  // namespace pmstore::env
