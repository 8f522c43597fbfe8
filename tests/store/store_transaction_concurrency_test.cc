// Transactions from several threads at once, on a pool where durable
// commits go in groups (tmpfs: page granularity):
//   - every committed transaction's reads were still current when it
//     committed: the committed history, rebuilt from unique values, is
//     serializable (its precedence graph has no cycle);
//   - bank transfers keep the total while a child process runs them and
//     is killed at random points, across reopens.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "pmstore/transaction.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

// Runs `body` in fresh transactions until one commits (or fails otherwise);
// returns the commit's status and counts the aborts.
template <typename Body>
absl::Status Transact(Store& store, Body body, std::atomic<uint64_t>* aborts) {
  for (;;) {
    auto t = store.BeginTransaction();
    absl::Status status = body(*t);
    if (status.ok()) status = t->Commit();
    if (!absl::IsAborted(status)) return status;
    aborts->fetch_add(1);
  }
}

// What one committed transaction did: the version it read of each key,
// and the version it wrote.
struct Committed {
  std::map<std::string, std::string> read;
  std::string wrote_key;
  std::string wrote;
};

TEST(StoreTransactionConcurrencyTest, CommittedTransactionsReadWhatWasCurrent) {
  TempDir dir("/dev/shm");
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = 6, kThreads = 4, kPerThread = 400;
  for (int k = 0; k < kKeys; ++k) ASSERT_TRUE(store->Put(absl::StrCat("k", k), absl::StrCat("init", k)).ok());
  std::vector<std::vector<Committed>> done(kThreads);
  std::atomic<uint64_t> aborts{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) {
    threads.emplace_back([&, id] {
      std::mt19937_64 rng(id);
      for (int n = 0; n < kPerThread; ++n) {
        // Read three keys, write one of them (read-modify-write) with a
        // value no other write has; any two such transactions that overlap
        // on a key read by one and written by the other may not both commit
        // unless one saw the other's write.
        Committed mine;
        const absl::Status status = Transact(
            *store,
            [&](Transaction& t) {
              mine = {};
              for (int r = 0; r < 3; ++r) {
                const std::string key = absl::StrCat("k", rng() % kKeys);
                std::string value;
                if (absl::Status s = t.Get(key, &value); !s.ok()) return s;
                mine.read[key] = value;
                mine.wrote_key = key;
              }
              mine.wrote = absl::StrCat("t", id, ".", n);
              // Every eighth transaction gives up the CPU between its reads
              // and its write, so that others commit meanwhile even on a
              // machine too busy to run the threads side by side (where
              // each ran its 400 in one time slice and none aborted).
              if (n % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
              return t.Put(mine.wrote_key, mine.wrote);
            },
            &aborts);
        ASSERT_TRUE(status.ok()) << status;
        done[id].push_back(mine);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<const Committed*> all;
  for (const auto& list : done) {
    for (const Committed& c : list) all.push_back(&c);
  }
  // Each version's writer, and each version's successor: the write of a
  // transaction that read it (a write always reads its key first). Two
  // committed successors of one version would be a lost update.
  std::map<std::string, size_t> writer_of;
  std::map<std::string, size_t> next_writer;  // version -> writer of the version after it
  for (size_t i = 0; i < all.size(); ++i) {
    writer_of[all[i]->wrote] = i;
    const std::string& replaced = all[i]->read.at(all[i]->wrote_key);
    ASSERT_TRUE(next_writer.emplace(replaced, i).second) << "lost update: two commits replaced " << replaced;
  }
  // Precedence: the writer of what T read comes before T; T comes before
  // whoever replaced what it read. Acyclic means a serial order exists in
  // which every read saw the latest commit (Kahn's algorithm).
  std::vector<std::vector<size_t>> after(all.size());
  std::vector<int> before_count(all.size(), 0);
  const auto edge = [&](size_t from, size_t to) {
    if (from == to) return;
    after[from].push_back(to);
    ++before_count[to];
  };
  for (size_t i = 0; i < all.size(); ++i) {
    for (const auto& [key, version] : all[i]->read) {
      if (const auto w = writer_of.find(version); w != writer_of.end()) edge(w->second, i);
      if (const auto n = next_writer.find(version); n != next_writer.end()) edge(i, n->second);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < all.size(); ++i) {
    if (before_count[i] == 0) ready.push_back(i);
  }
  size_t ordered = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++ordered;
    for (size_t j : after[i]) {
      if (--before_count[j] == 0) ready.push_back(j);
    }
  }
  EXPECT_EQ(ordered, all.size()) << "the committed history has a cycle: some commit read a stale value";
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
  // Contention was real: some transactions had to retry.
  EXPECT_GT(aborts.load(), 0u);
  std::cout << all.size() << " commits, " << aborts.load() << " aborts\n";
}

constexpr int kAccounts = 10;
constexpr int64_t kOpening = 1000;

std::string Account(int i) { return absl::StrCat("acct/", i); }

int64_t Total(Store& store) {
  int64_t total = 0;
  for (int i = 0; i < kAccounts; ++i) {
    std::string value;
    int64_t balance = 0;
    EXPECT_TRUE(store.Get(Account(i), &value).ok());
    EXPECT_TRUE(absl::SimpleAtoi(value, &balance)) << value;
    total += balance;
  }
  return total;
}

// Moves random amounts between random accounts from `threads` threads
// until killed.
[[noreturn]] void TransferForever(const std::string& path, int threads) {
  auto store = Store::Open(path, SmallPool());
  if (!store.ok()) _exit(2);
  std::atomic<uint64_t> aborts{0};
  std::vector<std::thread> workers;
  for (int id = 0; id < threads; ++id) {
    workers.emplace_back([&, id] {
      std::mt19937_64 rng(getpid() * 31 + id);
      for (;;) {
        const int from = rng() % kAccounts, to = rng() % kAccounts;
        const int64_t amount = rng() % 50;
        const absl::Status status = Transact(
            **store,
            [&](Transaction& t) -> absl::Status {
              std::string a, b;
              int64_t x = 0, y = 0;
              if (absl::Status s = t.Get(Account(from), &a); !s.ok()) return s;
              if (absl::Status s = t.Get(Account(to), &b); !s.ok()) return s;
              if (!absl::SimpleAtoi(a, &x) || !absl::SimpleAtoi(b, &y)) return absl::DataLossError("bad balance");
              if (from == to || x < amount) return absl::OkStatus();
              if (absl::Status s = t.Put(Account(from), absl::StrCat(x - amount)); !s.ok()) return s;
              return t.Put(Account(to), absl::StrCat(y + amount));
            },
            &aborts);
        if (!status.ok()) _exit(3);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  _exit(0);
}

TEST(StoreTransactionConcurrencyTest, BankTransfersKeepTheirTotalAcrossKills) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("bank");
  {
    auto store = OpenOrDie(path, SmallPool());
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < kAccounts; ++i) ASSERT_TRUE(store->Put(Account(i), absl::StrCat(kOpening)).ok());
  }
  std::mt19937_64 rng(42);
  for (int round = 0; round < 6; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) TransferForever(path, 3);
    usleep(50'000 + rng() % 250'000);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the child stopped by itself, status " << wstatus;
    auto store = OpenOrDie(path, SmallPool());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(Total(*store), kAccounts * kOpening) << "round " << round;
    const CheckReport report = store->CheckNow();
    EXPECT_TRUE(report.clean()) << report.problems.front();
    // Money moved: the child committed something before it died.
    int64_t unchanged = 0;
    for (int i = 0; i < kAccounts; ++i) {
      std::string value;
      ASSERT_TRUE(store->Get(Account(i), &value).ok());
      unchanged += value == absl::StrCat(kOpening);
    }
    if (round == 5) {
      EXPECT_LT(unchanged, kAccounts);
    }
  }
}

}  // namespace
}  // namespace pmstore
