// The writer turn across processes (pmstore/share/cross_process_turn.h)
// against the OFD file lock it was chosen over (doc/FORMAT.md, "Many
// processes on one pool", 1.), both on one pool's lock region in /dev/shm,
// alternating in one run; and how soon a commit published by one process
// through the change ring is followed by another that polls for it, the
// floor under the target "a commit in one process becomes visible to a
// reader in another" (which adds applying the change to its memory).
//
//   take+give, alone      one process takes and gives the turn: the cost a
//                         commit pays when no other process writes
//   take+give, 2 procs    two processes take and give it in a loop: what a
//                         turn costs when every commit waits for another
//   publish -> followed   a process publishes a commit of one change;
//                         another, polling published() as every read call
//                         would, reads the change and notes when
//                         (CLOCK_MONOTONIC both sides)
//
//   cross_process_turn_bench [--rounds=N] [--ops=N]
// prints one line a round and the medians with the ratios.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "pmstore/env/env.h"
#include "pmstore/share/lock_region.h"

namespace {

using pmstore::internal::ChangeRing;
using pmstore::internal::CrossProcessTurn;
using pmstore::internal::ReaderSlot;

using bench::Median;
using bench::NowNs;

[[noreturn]] void Die(const std::string& what) { bench::Die("cross_process_turn_bench", what); }

// The pool file the region is named for, and this process's slot in it.
struct Pool {
  std::string path = "/dev/shm/pmstore-turn-bench-" + std::to_string(getpid());
  Pool() {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) Die("cannot create " + path);
    close(fd);
  }
  ~Pool() { unlink(path.c_str()); }
  std::unique_ptr<ReaderSlot> Attach() const {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    auto slot = ReaderSlot::Attach(pmstore::env::Env::Default(), fd, /*writable=*/true);
    close(fd);
    if (!slot.ok()) Die(std::string(slot.status().message()));
    return std::move(*slot);
  }
};

// The peer: an OFD write lock on one byte of the region file, taken
// waiting and dropped, as a lock per commit would be.
class OfdLock {
 public:
  explicit OfdLock(const std::string& region) : fd_(open(region.c_str(), O_RDWR | O_CLOEXEC)) {
    if (fd_ < 0) Die("cannot open " + region);
  }
  ~OfdLock() { close(fd_); }
  OfdLock(const OfdLock&) = delete;
  OfdLock& operator=(const OfdLock&) = delete;
  void Take() { Set(F_WRLCK, F_OFD_SETLKW); }
  void Give() { Set(F_UNLCK, F_OFD_SETLK); }

 private:
  void Set(short type, int cmd) {
    struct flock lock = {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = 2;  // a byte the region's own protocol leaves alone
    lock.l_len = 1;
    while (fcntl(fd_, cmd, &lock) != 0) {
      if (errno != EINTR) Die("fcntl on the region failed");
    }
  }
  int fd_;
};

struct TurnOps {
  CrossProcessTurn turn;
  void Take() {
    if (!turn.Take().ok()) Die("take failed");
  }
  void Give() { turn.Give(); }
};

template <typename Lock>
double TakeGiveNs(Lock& lock, int ops) {
  const int64_t start = NowNs();
  for (int i = 0; i < ops; ++i) {
    lock.Take();
    lock.Give();
  }
  return static_cast<double>(NowNs() - start) / ops;
}

// `ops` take+give in each of two processes at once; ns per turn taken.
template <typename MakeLock>
double ContendedNs(const Pool& pool, const MakeLock& make_lock, int ops) {
  int go[2];
  if (pipe(go) != 0) Die("pipe failed");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    std::unique_ptr<ReaderSlot> slot = pool.Attach();
    auto lock = make_lock(*slot);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    TakeGiveNs(lock, ops);
    _exit(0);
  }
  std::unique_ptr<ReaderSlot> slot = pool.Attach();
  auto lock = make_lock(*slot);
  const int64_t start = NowNs();
  if (write(go[1], "g", 1) != 1) Die("pipe write failed");
  TakeGiveNs(lock, ops);
  int status = 0;
  waitpid(child, &status, 0);
  const double ns = static_cast<double>(NowNs() - start) / (2.0 * ops);
  close(go[0]);
  close(go[1]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the contending child failed");
  return ns;
}

struct Visibility {
  double p50_ns, p99_ns, max_ns;
};

// One process, holding the turn, stamps the time, stages one change (a
// 16-byte separator) and publishes commit i; the other polls the
// published commit and, when it moves, reads the change from the ring,
// notes the delay and acknowledges.
Visibility PublishToFollowed(const Pool& pool, int ops) {
  struct Shared {
    std::atomic<int64_t> stamp_ns;
    std::atomic<int64_t> acked;
  };
  auto* shared = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared) + ops * sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) Die("mmap failed");
  auto* delays = reinterpret_cast<int64_t*>(shared + 1);
  shared->acked.store(-1);
  std::unique_ptr<ReaderSlot> slot = pool.Attach();
  CrossProcessTurn turn = slot->cross_process_turn();
  ChangeRing ring = slot->change_ring();
  ChangeRing::Cursor cursor = ring.Now();  // before the first commit is published
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    std::unique_ptr<ReaderSlot> own = pool.Attach();
    ChangeRing reader = own->change_ring();
    std::vector<ChangeRing::Change> changes;
    for (int64_t i = 0; i < ops; ++i) {
      while (reader.published() != static_cast<uint64_t>(i)) {
      }
      changes.clear();
      auto followed = reader.Follow(&cursor, static_cast<uint64_t>(i), &changes);
      if (!followed.ok() || *followed != ChangeRing::Followed::kCaughtUp || changes.size() != 1) _exit(1);
      delays[i] = NowNs() - shared->stamp_ns.load(std::memory_order_relaxed);
      shared->acked.store(i, std::memory_order_release);
    }
    _exit(0);
  }
  const std::string separator(16, 's');
  for (int64_t i = 0; i < ops; ++i) {
    if (!turn.Take().ok()) Die("take failed");
    shared->stamp_ns.store(NowNs(), std::memory_order_relaxed);
    if (!ring.Stage(static_cast<uint64_t>(i), 1, separator).ok()) Die("stage failed");
    ring.Publish(static_cast<uint64_t>(i));
    turn.Give();
    for (uint64_t spins = 1; shared->acked.load(std::memory_order_acquire) != i; ++spins) {
      if (spins % (1 << 20) == 0 && waitpid(child, nullptr, WNOHANG) == child) Die("the following child failed");
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the following child failed");
  std::vector<int64_t> sorted(delays, delays + ops);
  std::sort(sorted.begin(), sorted.end());
  munmap(shared, sizeof(Shared) + ops * sizeof(int64_t));
  return {static_cast<double>(sorted[ops / 2]), static_cast<double>(sorted[ops * 99 / 100]),
          static_cast<double>(sorted.back())};
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int ops = 200000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--rounds=", 0) == 0 && std::atoi(arg.c_str() + 9) > 0) {
      rounds = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--ops=", 0) == 0 && std::atoi(arg.c_str() + 6) >= 100) {
      ops = std::atoi(arg.c_str() + 6);
    } else {
      std::fprintf(stderr, "usage: %s [--rounds=N] [--ops=N (at least 100)]\n", argv[0]);
      return 2;
    }
  }
  Pool pool;
  std::unique_ptr<ReaderSlot> slot = pool.Attach();  // keeps the region for the whole run
  auto make_turn = [](const ReaderSlot& s) { return TurnOps{s.cross_process_turn()}; };
  auto make_ofd = [](const ReaderSlot& s) { return OfdLock(s.region_path()); };
  std::vector<double> turn_alone, ofd_alone, turn_two, ofd_two, seen_p50, seen_p99;
  for (int r = 0; r < rounds; ++r) {
    TurnOps turn = make_turn(*slot);
    OfdLock ofd = make_ofd(*slot);
    turn_alone.push_back(TakeGiveNs(turn, ops));
    ofd_alone.push_back(TakeGiveNs(ofd, ops));
    turn_two.push_back(ContendedNs(pool, make_turn, ops));
    ofd_two.push_back(ContendedNs(pool, make_ofd, ops));
    const Visibility seen = PublishToFollowed(pool, ops / 10);
    seen_p50.push_back(seen.p50_ns);
    seen_p99.push_back(seen.p99_ns);
    std::printf(
        "round %d: take+give alone: turn %.0f ns, OFD lock %.0f ns; 2 procs: turn %.0f ns, OFD lock %.0f ns; "
        "publish->followed p50 %.0f ns, p99 %.0f ns, max %.0f ns\n",
        r + 1, turn_alone.back(), ofd_alone.back(), turn_two.back(), ofd_two.back(), seen.p50_ns, seen.p99_ns,
        seen.max_ns);
    std::fflush(stdout);
  }
  std::printf("median: take+give alone: turn %.0f ns, OFD lock %.0f ns (OFD / turn = %.1f)\n", Median(turn_alone),
              Median(ofd_alone), Median(ofd_alone) / Median(turn_alone));
  std::printf("median: take+give, 2 processes: turn %.0f ns, OFD lock %.0f ns (OFD / turn = %.1f)\n", Median(turn_two),
              Median(ofd_two), Median(ofd_two) / Median(turn_two));
  std::printf("median: publish -> followed in another process: p50 %.0f ns, p99 %.0f ns\n", Median(seen_p50),
              Median(seen_p99));
  return 0;
}
