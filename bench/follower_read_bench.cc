// Point reads of a read-only open that follows a writer of another
// process (doc/STORE.md, "A writer and read-only opens in other
// processes"), against the same reads in the writer's own process and in
// an exclusive read-only open of another process, one run, the modes
// alternating round by round:
//
//   writer's process   Get in the process that has the pool open for
//                      writing (which writes nothing meanwhile)
//   exclusive reader   Get in another process, Options{read_only,
//                      exclusive}: leaves read in place, no writer may join
//   follower, idle     Get in another process, Options{read_only}, beside
//                      the writer's open: each leaf copied stable
//   follower, busy     the same while the writer overwrites random keys,
//                      unsynced, as fast as it can
//
// Every key read is present (db_bench's readrandom: 16-byte keys, 100-byte
// values).
//
//   follower_read_bench [--dir=/mnt/huge] [--keys=N] [--reads=N] [--rounds=N]
// prints one line a round and the medians with the ratios.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_support.h"
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

// Runs `read` in a child process, which opens the pool with `options`;
// `while_reading` runs here between the child's open and its end. The
// child's ns per read.
double InAnotherProcess(const std::string& path, const pmstore::Options& options,
                        const std::function<double(pmstore::Store&)>& read_store,
                        const std::function<void(int done_fd)>& while_reading) {
  int ready[2], result[2];
  if (pipe(ready) != 0 || pipe(result) != 0) Die("pipe failed");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    close(result[0]);
    auto store = pmstore::Store::Open(path, options);
    if (!store.ok()) Die(std::string(store.status().message()));
    if (write(ready[1], "r", 1) != 1) _exit(1);
    const double ns = read_store(**store);
    (*store)->Close().IgnoreError();
    if (write(result[1], &ns, sizeof(ns)) != sizeof(ns)) _exit(1);
    _exit(0);
  }
  close(ready[1]);
  close(result[1]);
  char c;
  if (read(ready[0], &c, 1) != 1) Die("the reader did not open the pool");
  while_reading(result[0]);
  double ns = 0;
  if (::read(result[0], &ns, sizeof(ns)) != sizeof(ns)) Die("the reader failed");
  close(ready[0]);
  close(result[0]);
  int status = 0;
  waitpid(child, &status, 0);
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
          "follower_read_bench [--dir=DIR] [--keys=N] [--reads=N] [--rounds=N]\n"
          "Gets of a read-only open that follows a writer of another process, against the writer's own process\n"
          "and an exclusive read-only open, on a pool in DIR (default /mnt/huge, a tmpfs mounted huge=always).\n");
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
  const auto reader = [&](uint64_t seed) {
    return [=](pmstore::Store& store) { return ReadRandom(store, keys, reads, seed); };
  };
  const auto idle = [](int) {};
  std::vector<double> own, exclusive, follower_idle, follower_busy;
  uint64_t overwrites = 0;
  for (int round = 0; round < rounds; ++round) {
    own.push_back(ReadRandom(*writer, keys, reads, round));
    follower_idle.push_back(InAnotherProcess(path, {.read_only = true}, reader(round), idle));
    follower_busy.push_back(InAnotherProcess(path, {.read_only = true}, reader(round), [&](int done) {
      // Overwrites until the reader's result is ready to be read.
      std::mt19937_64 rng(round);
      struct timeval now = {0, 0};
      for (;;) {
        for (int i = 0; i < 256; ++i, ++overwrites) {
          if (!writer->Put({.sync = false}, KeyOf(rng() % keys), value).ok()) Die("overwrite failed");
        }
        fd_set ready;
        FD_ZERO(&ready);
        FD_SET(done, &ready);
        if (select(done + 1, &ready, nullptr, nullptr, &now) > 0) break;
      }
    }));
    if (!writer->Close().ok()) Die("close failed");
    exclusive.push_back(InAnotherProcess(path, {.read_only = true, .exclusive = true}, reader(round), idle));
    opened = pmstore::Store::Open(path, pmstore::Options());
    if (!opened.ok()) Die(std::string(opened.status().message()));
    writer = std::move(*opened);
    std::printf(
        "round %d: ns per Get: writer's process %.0f, exclusive reader %.0f, follower idle %.0f, "
        "follower busy %.0f\n",
        round + 1, own.back(), exclusive.back(), follower_idle.back(), follower_busy.back());
  }
  const double base = Median(own);
  std::printf(
      "medians, ns per Get (%llu keys, %llu reads a run, %d rounds): writer's process %.0f, "
      "exclusive reader %.0f (%.2fx), follower idle %.0f (%.2fx), follower busy %.0f (%.2fx; the writer "
      "made %llu overwrites meanwhile)\n",
      static_cast<unsigned long long>(keys), static_cast<unsigned long long>(reads), rounds, base, Median(exclusive),
      base / Median(exclusive), Median(follower_idle), base / Median(follower_idle), Median(follower_busy),
      base / Median(follower_busy), static_cast<unsigned long long>(overwrites));
  writer->Close().IgnoreError();
  pmstore::Store::Destroy(path).IgnoreError();
  return 0;
}
