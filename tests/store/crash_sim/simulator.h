// Simulated power failure for the store (doc/FORMAT.md, "Invariants").
//
// A Persister that models the CPU cache keeps a shadow image of what
// reached persistence: a 64-byte line gets there only when flushed and
// then drained. At every drain of a random workload, right after every
// acknowledged write, after Sync and after close, the simulator builds
// crash images (the shadow, plus subsets of the lines written but not yet
// persisted, which the hardware may have evicted on its own), recovers
// each with the normal Store::Open, and checks: the pool holds exactly
// the state after some commit from the last durable one to the last
// acknowledged one (only sync=false commits lie between them; with none,
// every acknowledged write with its exact value), or with the write in
// flight whole; CheckNow() clean; new writes accepted. The workload runs
// sync=false writes in runs of 1 to 12, ended by Sync, by a durable write
// or by a close, so that images inside runs are a good share of all.
// Now and then it also continues the workload from a crash image
// (recovery itself runs under the model) or from the image left by a
// clean close.
//
// Images are counted once: an image identical to one already checked
// (same persisted content, same evicted lines with the same bytes, same
// length) is skipped and counted apart.
//
// The growth fdatasync goes through the persister too: a grown length
// survives a crash only once Persister::SyncLength ran.
//
// Power failures and kills. Every crash image above is a power failure:
// it is recovered as in another boot (internal::SetBootIdForTesting), and
// a restart from one moves the workload to a new boot. Inside unsynced
// runs each crash point is also a kill: the image of memory (every line
// as written, the file at its full length) recovered in the same boot
// must hold every acknowledged write (or the write in flight, whole).
// Restarts from a kill keep the cache model's persisted lines and recover
// under it, so a power failure during or after that recovery is checked
// too: the kept run must be durable once Open returns.
//
// Links against either the store library or the test-only pmstore_mutants
// build (PMSTORE_PERSIST_MUTANTS), where one persistence site at a time can
// be removed.
#pragma once

#include <cstdint>
#include <string>

namespace pmstore::crash_sim {

struct Config {
  uint64_t seed = 1;
  // Stop once this many distinct images were checked, after `max_ops`
  // operations, or at the first failure.
  uint64_t target_images = 1000;
  int max_ops = 1 << 30;
  // Random subsets of the unpersisted lines per crash point (besides the
  // shadow alone and the shadow with every such line).
  int random_subsets = 10;
  // Continue from a crash image or after a close (half each) this often:
  // each restart copies the whole pool, an image check copies a few pages.
  int restarts_per_1000_ops = 10;
  // A scratch directory (best on tmpfs) for the pool and the image file.
  std::string dir;
};

struct Result {
  uint64_t images = 0;      // distinct images recovered and checked
  // Of those, images taken while acknowledged sync=false writes were not
  // durable yet (or such a write was in flight).
  uint64_t unsynced_images = 0;
  uint64_t duplicates = 0;  // images skipped as identical to a checked one
  uint64_t crash_points = 0;
  // Kill images: memory at a crash point inside an unsynced run, recovered
  // in the same boot (not counted in `images`).
  uint64_t kill_images = 0;
  int ops = 0;
  // What the workload did.
  int puts = 0, overwrites = 0, deletes = 0, batches = 0, transactions = 0, large_puts = 0, tail_puts = 0,
      unsynced_runs = 0;
  int crash_restarts = 0, close_restarts = 0, kill_restarts = 0;
  // Opens (recoveries included) that found the leaves through a separator
  // image; of those, recoveries of crash images taken inside a close (once
  // its image commit's fence was passed).
  int image_opens = 0;
  uint64_t closing_images = 0;
  uint64_t initial_file_bytes = 0, final_file_bytes = 0;
  double seconds = 0;
  std::string failure;  // empty: every image recovered to an allowed state
};

Result Run(const Config& config);

}  // namespace pmstore::crash_sim
