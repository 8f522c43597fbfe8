// How many times this process's ancestry has forked since the library
// was loaded, as seen from this process: a child's count is its parent's
// plus one. An object that records the count when it is made can tell, by
// one relaxed load, that it is now in a forked child (a store must not be
// used across fork: its mapping, lock and locks' states were the
// parent's). Cheaper than getpid(), a system call, on every read.
#pragma once

#include <cstdint>

namespace pmstore::env {

// The current count. The first call registers the pthread_atfork handler
// that counts; a store calls it when it opens, before any fork it could
// be used across.
uint64_t ForkGeneration();

}  // namespace pmstore::env
