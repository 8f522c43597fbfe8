// The pool subcommands of `pmstore`: each takes its arguments as a config
// struct (flags stay in main.cc) and returns the process exit status:
// 0 success, 1 missing key (get) or damaged pool (check), 2 any error,
// after printing one line naming the file and the problem (for a failing
// device: the system call too). Commands that write close the store
// before they return, so a write that could not be made durable is an
// error, never a success.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pmstore::cli {

// Prints `status` as the one line "pmstore: MESSAGE" on stderr; returns 2.
int Fail(const absl::Status& status);

// Whether `path` is a character device (a pool on device DAX, or not a
// pool at all: the store says which).
bool IsCharacterDevice(const std::string& path);

struct CreateConfig {
  std::string pool;
  uint64_t size = 0;      // 0 for a device, which is the pool's size
  uint64_t max_size = 0;  // 0: 16 times size
  uint32_t mode = 0644;  // permission bits, less the umask
  bool force = false;    // destroy a pool already at `pool` first
};
int Create(const CreateConfig& config);

// Store::Destroy: removes the pool file, or erases a device's pool.
int Destroy(const std::string& pool);

struct PutConfig {
  std::string pool;
  std::string key;
  bool have_value = false;
  std::string value;
  std::string file;  // read the value from here ("" and !have_value: stdin)
  bool exclusive = false;  // Options::exclusive
};
int Put(const PutConfig& config);

// `exclusive`, here and in the configs: open the pool with
// Options::exclusive (--exclusive).
int Get(const std::string& pool, const std::string& key, bool exclusive);
int Del(const std::string& pool, const std::string& key, bool exclusive);

struct ListConfig {
  std::string pool;
  std::string prefix;
  uint64_t limit = 0;  // 0: all
  bool reverse = false;  // descending key order
  bool exclusive = false;
};
int List(const ListConfig& config);

int PrintStats(const std::string& pool, bool json, bool exclusive);

// The pool's reader table (Store::Readers), after freeing its stale slots
// when `clear_stale` (Store::ClearStaleReaders).
int Readers(const std::string& pool, bool clear_stale, bool json);
// Store::Check, reported as text or JSON; exit 0 clean, 1 damaged.
int Check(const std::string& pool, bool json);

// mdb_dump's text format (mdb_text.h) out of a pool and into one.
struct DumpConfig {
  std::string pool;
  bool print = false;  // format=print (mdb_dump -p) instead of hex
  std::string file;    // "" : stdout
  bool exclusive = false;
};
int Dump(const DumpConfig& config);

struct LoadConfig {
  std::string pool;    // created when missing
  std::string file;    // "" : stdin
  uint64_t size = 0;   // of a new pool; 0: 64 MiB
  uint64_t max_size = 0;  // 0: 16 times size
  uint32_t mode = 0644;   // of a new pool: permission bits, less the umask
  bool exclusive = false;
};
int Load(const LoadConfig& config);

// A hot copy of POOL into a new pool DEST (Store::CopyTo); copy_command.cc.
struct CopyConfig {
  std::string pool;
  std::string dest;
  bool json = false;
  bool progress = true;  // a stderr line a second on copies longer than a second
  bool exclusive = false;  // POOL's open; DEST is new, no other process can open it yet
};
int Copy(const CopyConfig& config);

}  // namespace pmstore::cli
