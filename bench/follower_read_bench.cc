// Point reads of a read-only open that follows a writer of another
// process (doc/STORE.md, "A writer and read-only opens in other
// processes"), against the same reads in the writer's own process, in
// read-only opens of another process without a writer, and in LMDB doing
// the same, one run, the modes alternating round by round:
//
//   writer's process   Get in the process that has the pool open for
//                      writing (which writes nothing meanwhile)
//   follower, idle     Get in another process, Options{read_only}, beside
//                      the writer's open: each leaf read stable
//   follower, busy     the same while the writer overwrites random keys,
//                      unsynced, as fast as it can
//   alone, shared      Get in another process, Options{read_only}, with
//                      no writer open: the pool shared, no one to follow
//   exclusive reader   the same with Options{read_only, exclusive}
//   lmdb idle, busy    mdb_get in another process (MDB_RDONLY, a read
//                      transaction renewed per Get) beside an LMDB writer
//                      that is idle, or that overwrites random keys, one
//                      write transaction each (MDB_WRITEMAP | MDB_NOSYNC),
//                      as fast as it can
//
// Every key read is present (db_bench's readrandom: 16-byte keys, 100-byte
// values).
//
// Then the time from a durable Put's return to the first Get of a reader
// of another process that reads it, over --commits Puts.
//
//   follower_read_bench [--dir=/mnt/huge] [--keys=N] [--reads=N] [--rounds=N] [--commits=N]
// prints one line a round, the medians with the ratios, and the
// visibility percentiles.
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "lmdb.h"
#include "pmstore/store.h"

namespace {

using bench::Median;
using bench::NowNs;

[[noreturn]] void Die(const std::string& what) { bench::Die("follower_read_bench", what); }

std::string KeyOf(uint64_t i) {
  char key[21];  // 16 digits for any key count this takes; room for all 20
  std::snprintf(key, sizeof(key), "%016llu", static_cast<unsigned long long>(i));
  return key;
}

// ns per Get of `reads` random keys, every one present.
double ReadRandom(pmstore::Store& store, uint64_t keys, uint64_t reads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string value;
  const int64_t start = NowNs();
  for (uint64_t i = 0; i < reads; ++i) {
    if (!store.Get(pmstore::ReadOptions(), KeyOf(rng() % keys), &value).ok()) Die("a key was missing");
  }
  return static_cast<double>(NowNs() - start) / static_cast<double>(reads);
}

// Runs `read_in_child` in a child process: it opens what it reads, calls
// `opened()`, reads and returns its ns per read. `while_reading` runs here
// between the child's open and its end, given a descriptor that becomes
// readable when the child is done. The child's ns per read.
double InAnotherProcess(const std::function<double(const std::function<void()>& opened)>& read_in_child,
                        const std::function<void(int done_fd)>& while_reading) {
  int ready[2], result[2];
  if (pipe(ready) != 0 || pipe(result) != 0) Die("pipe failed");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    close(result[0]);
    const double ns = read_in_child([&] {
      if (write(ready[1], "r", 1) != 1) _exit(1);
    });
    if (write(result[1], &ns, sizeof(ns)) != sizeof(ns)) _exit(1);
    _exit(0);
  }
  close(ready[1]);
  close(result[1]);
  char c;
  if (read(ready[0], &c, 1) != 1) Die("the reader did not open its store");
  while_reading(result[0]);
  double ns = 0;
  if (::read(result[0], &ns, sizeof(ns)) != sizeof(ns)) Die("the reader failed");
  close(ready[0]);
  close(result[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return ns;
}

// Calls `write_some()` until `done_fd` is readable: a writer busy for as
// long as the reader of another process reads.
void WriteUntilDone(int done_fd, const std::function<void()>& write_some) {
  for (;;) {
    write_some();
    struct timeval now = {0, 0};
    fd_set ready;
    FD_ZERO(&ready);
    FD_SET(done_fd, &ready);
    if (select(done_fd + 1, &ready, nullptr, nullptr, &now) > 0) return;
  }
}

// LMDB as pmstore's bench drives it (pmstore/cli/kv_engines.cc): one
// environment file, MDB_WRITEMAP and MDB_NOSYNC for the writer.
class Lmdb {
 public:
  Lmdb(const std::string& path, bool read_only) {
    const unsigned flags = MDB_NOSUBDIR | MDB_NOTLS | MDB_NORDAHEAD |
                           (read_only ? MDB_RDONLY : (MDB_WRITEMAP | MDB_NOSYNC | MDB_NOMETASYNC));
    Check(mdb_env_create(&env_), "mdb_env_create");
    Check(mdb_env_set_mapsize(env_, 8ull << 30), "mdb_env_set_mapsize");
    Check(mdb_env_open(env_, path.c_str(), flags, 0644), "mdb_env_open");
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, read_only ? MDB_RDONLY : 0, &txn), "mdb_txn_begin");
    Check(mdb_dbi_open(txn, nullptr, 0, &dbi_), "mdb_dbi_open");
    Check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  ~Lmdb() { mdb_env_close(env_); }
  Lmdb(const Lmdb&) = delete;
  Lmdb& operator=(const Lmdb&) = delete;

  // Puts `count` keys from `first` in one write transaction.
  void Fill(uint64_t first, uint64_t count, const std::string& value) {
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    for (uint64_t i = first; i < first + count; ++i) Put(txn, KeyOf(i), value);
    Check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  // One write transaction.
  void Overwrite(const std::string& key, const std::string& value) {
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    Put(txn, key, value);
    Check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  // ns per mdb_get of `reads` random keys, each in the read transaction
  // renewed for it (LMDB's advice for many short reads), the value copied
  // out as pmstore's Get copies it.
  double ReadRandom(uint64_t keys, uint64_t reads, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string value;
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
    mdb_txn_reset(txn);
    const int64_t start = NowNs();
    for (uint64_t i = 0; i < reads; ++i) {
      Check(mdb_txn_renew(txn), "mdb_txn_renew");
      const std::string key = KeyOf(rng() % keys);
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v;
      if (mdb_get(txn, dbi_, &k, &v) != 0) Die("a key was missing from LMDB");
      value.assign(static_cast<const char*>(v.mv_data), v.mv_size);
      mdb_txn_reset(txn);
    }
    const int64_t end = NowNs();
    mdb_txn_abort(txn);
    return static_cast<double>(end - start) / static_cast<double>(reads);
  }

 private:
  static void Check(int rc, const char* call) {
    if (rc != 0) Die(std::string(call) + ": " + mdb_strerror(rc));
  }
  void Put(MDB_txn* txn, const std::string& key, const std::string& value) {
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val v{value.size(), const_cast<char*>(value.data())};
    Check(mdb_put(txn, dbi_, &k, &v, 0), "mdb_put");
  }

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

// Commit to visible: the writer puts "visible" = i (durable, the
// default) and notes when Put returned; a read-only open of another
// process Gets the key in a loop and notes when it first reads i. What
// the two share lies in an anonymous shared mapping made before the fork.
struct Visibility {
  std::atomic<uint64_t> ready{0};    // the reader has opened the pool
  std::atomic<uint64_t> seen{0};     // the newest value the reader read
  std::atomic<uint64_t> seen_ns{0};  // when it first read it (stored before `seen`)
};

// ns from each of `commits` Puts' return to the other process's first Get
// that read it; 0 where the Get came first (a commit is published before
// its Put returns).
std::vector<double> CommitToVisible(const std::string& path, pmstore::Store& writer, uint64_t commits) {
  void* mapped = mmap(nullptr, sizeof(Visibility), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) Die("mmap of the shared page failed");
  auto* shared = new (mapped) Visibility;
  if (!writer.Put("visible", "0").ok()) Die("put failed");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    auto store = pmstore::Store::Open(path, pmstore::Options{.read_only = true});
    if (!store.ok()) _exit(1);
    shared->ready.store(1, std::memory_order_release);
    std::string value;
    for (uint64_t last = 0; last < commits;) {
      if (!(*store)->Get("visible", &value).ok()) _exit(2);
      const uint64_t read = std::strtoull(value.c_str(), nullptr, 10);
      if (read <= last) continue;
      shared->seen_ns.store(static_cast<uint64_t>(NowNs()), std::memory_order_relaxed);
      shared->seen.store(read, std::memory_order_release);
      last = read;
    }
    _exit(0);
  }
  while (shared->ready.load(std::memory_order_acquire) == 0) {
  }
  std::vector<double> ns;
  ns.reserve(commits);
  for (uint64_t i = 1; i <= commits; ++i) {
    if (!writer.Put("visible", std::to_string(i)).ok()) Die("put failed");
    const int64_t returned = NowNs();
    while (shared->seen.load(std::memory_order_acquire) < i) {
    }
    const int64_t seen = static_cast<int64_t>(shared->seen_ns.load(std::memory_order_relaxed));
    ns.push_back(static_cast<double>(std::max<int64_t>(0, seen - returned)));
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the visibility reader failed");
  munmap(mapped, sizeof(Visibility));
  return ns;
}

uint64_t Flag(int argc, char** argv, const std::string& name, uint64_t fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--" + name + "=", 0) == 0) return std::strtoull(arg.c_str() + name.size() + 3, nullptr, 10);
  }
  return fallback;
}

std::string Dir(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--dir=", 0) == 0) return arg.substr(6);
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "follower_read_bench [--dir=DIR] [--keys=N] [--reads=N] [--rounds=N] [--commits=N]\n"
          "Gets of a read-only open that follows a writer of another process, idle or overwriting, against the\n"
          "writer's own process, read-only opens with no writer (shared and exclusive), and LMDB readers beside\n"
          "an LMDB writer, idle or overwriting; pool and environment in DIR (default /mnt/huge, a tmpfs mounted\n"
          "huge=always). Prints the ratios against the targets of doc/STORE.md; then the time from a durable\n"
          "Put's return to the first Get of another process's reader that reads it, over --commits Puts\n"
          "(default 10000).\n");
      std::exit(0);
    }
  }
  return "/mnt/huge";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = Dir(argc, argv);
  const uint64_t keys = Flag(argc, argv, "keys", 1000000);
  const uint64_t reads = Flag(argc, argv, "reads", 1000000);
  const int rounds = static_cast<int>(Flag(argc, argv, "rounds", 3));
  const uint64_t visibility_commits = std::max<uint64_t>(1, Flag(argc, argv, "commits", 10000));
  const std::string path = dir + "/follower_read_bench.pool";
  pmstore::Store::Destroy(path).IgnoreError();
  const pmstore::Options writable{.create_if_missing = true, .initial_size = 64ull << 20, .max_size = 8ull << 30};
  auto opened = pmstore::Store::Open(path, writable);
  if (!opened.ok()) Die(std::string(opened.status().message()));
  std::unique_ptr<pmstore::Store> writer = std::move(*opened);
  const std::string value(100, 'v');
  std::printf("filling %llu keys in %s\n", static_cast<unsigned long long>(keys), path.c_str());
  for (uint64_t i = 0; i < keys; ++i) {
    if (!writer->Put({.sync = false}, KeyOf(i), value).ok()) Die("fill failed");
  }
  if (!writer->Sync().ok()) Die("sync failed");
  const std::string lmdb_path = dir + "/follower_read_bench.mdb";
  unlink(lmdb_path.c_str());
  unlink((lmdb_path + "-lock").c_str());
  auto lmdb_writer = std::make_unique<Lmdb>(lmdb_path, false);
  std::printf("filling %llu keys in %s\n", static_cast<unsigned long long>(keys), lmdb_path.c_str());
  for (uint64_t first = 0; first < keys; first += 10000)
    lmdb_writer->Fill(first, std::min<uint64_t>(10000, keys - first), value);

  // A reader of another process that opens `path` with `options`.
  const auto pmstore_reader = [&](const pmstore::Options& options, uint64_t seed) {
    return [=, &path](const std::function<void()>& ready) {
      auto store = pmstore::Store::Open(path, options);
      if (!store.ok()) Die(std::string(store.status().message()));
      ready();
      const double ns = ReadRandom(**store, keys, reads, seed);
      (*store)->Close().IgnoreError();
      return ns;
    };
  };
  const auto lmdb_reader = [&](uint64_t seed) {
    return [=, &lmdb_path](const std::function<void()>& ready) {
      Lmdb store(lmdb_path, true);
      ready();
      return store.ReadRandom(keys, reads, seed);
    };
  };
  const auto idle = [](int) {};
  const pmstore::Options follow{.read_only = true};
  std::vector<double> own, follower_idle, follower_busy, alone, exclusive, lmdb_idle, lmdb_busy;
  uint64_t overwrites = 0, lmdb_overwrites = 0;
  for (int round = 0; round < rounds; ++round) {
    own.push_back(ReadRandom(*writer, keys, reads, round));
    follower_idle.push_back(InAnotherProcess(pmstore_reader(follow, round), idle));
    std::mt19937_64 rng(round);
    follower_busy.push_back(InAnotherProcess(pmstore_reader(follow, round), [&](int done) {
      WriteUntilDone(done, [&] {
        for (int i = 0; i < 256; ++i, ++overwrites) {
          if (!writer->Put({.sync = false}, KeyOf(rng() % keys), value).ok()) Die("overwrite failed");
        }
      });
    }));
    lmdb_idle.push_back(InAnotherProcess(lmdb_reader(round), idle));
    lmdb_busy.push_back(InAnotherProcess(lmdb_reader(round), [&](int done) {
      WriteUntilDone(done, [&] {
        for (int i = 0; i < 256; ++i, ++lmdb_overwrites) lmdb_writer->Overwrite(KeyOf(rng() % keys), value);
      });
    }));
    if (!writer->Close().ok()) Die("close failed");
    alone.push_back(InAnotherProcess(pmstore_reader(follow, round), idle));
    exclusive.push_back(InAnotherProcess(pmstore_reader({.read_only = true, .exclusive = true}, round), idle));
    opened = pmstore::Store::Open(path, pmstore::Options());
    if (!opened.ok()) Die(std::string(opened.status().message()));
    writer = std::move(*opened);
    std::printf(
        "round %d: ns per Get: writer's process %.0f, follower idle %.0f, follower busy %.0f, alone shared %.0f, "
        "exclusive reader %.0f, lmdb idle %.0f, lmdb busy %.0f\n",
        round + 1, own.back(), follower_idle.back(), follower_busy.back(), alone.back(), exclusive.back(),
        lmdb_idle.back(), lmdb_busy.back());
  }
  const double base = Median(own);
  std::printf(
      "medians, ns per Get (%llu keys, %llu reads a run, %d rounds): writer's process %.0f; follower idle %.0f "
      "(%.2fx the writer's process), busy %.0f (%.2fx; the writer made %llu overwrites meanwhile); alone on the "
      "shared pool %.0f, exclusive reader %.0f\n",
      static_cast<unsigned long long>(keys), static_cast<unsigned long long>(reads), rounds, base,
      Median(follower_idle), base / Median(follower_idle), Median(follower_busy), base / Median(follower_busy),
      static_cast<unsigned long long>(overwrites), Median(alone), Median(exclusive));
  std::printf("lmdb: reader beside an idle writer %.0f, beside a busy one %.0f (%llu overwrites meanwhile)\n",
              Median(lmdb_idle), Median(lmdb_busy), static_cast<unsigned long long>(lmdb_overwrites));
  std::printf(
      "targets: follower beside a busy writer %.2fx lmdb beside a busy writer (target >= 2x); beside an idle "
      "one %.2fx lmdb's; alone on a shared pool %.2fx an exclusive open (target >= 0.95x)\n",
      Median(lmdb_busy) / Median(follower_busy), Median(lmdb_idle) / Median(follower_idle),
      Median(exclusive) / Median(alone));
  std::vector<double> visible = CommitToVisible(path, *writer, visibility_commits);
  std::sort(visible.begin(), visible.end());
  const auto at = [&](double q) { return visible[static_cast<size_t>(q * static_cast<double>(visible.size() - 1))]; };
  std::printf(
      "commit to visible in another process (%zu durable Puts, ns from Put's return to the reader's first Get "
      "that read it): p50 %.0f, p99 %.0f, max %.0f (target p99 <= 20 us)\n",
      visible.size(), at(0.5), at(0.99), visible.back());
  writer->Close().IgnoreError();
  lmdb_writer.reset();
  pmstore::Store::Destroy(path).IgnoreError();
  unlink(lmdb_path.c_str());
  unlink((lmdb_path + "-lock").c_str());
  return 0;
}
