// A reader of another process copies leaves while the writer changes
// them in place (format/leaf.h ReadStableLeaf over the leaf version word
// and the commit being applied, share/change_ring.h), holding the space it
// may reach with a pin (share/lock_region.h PinNewestPublished): every
// leaf it is handed is one a commit left whole, its checksum right. Real
// processes: the writer is a store, durable and unsynced commits, splits
// and leaves emptied; the reader maps the pool file and walks the chain
// over and over, as fast as it can.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/env/env.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

constexpr uint64_t kMaxPool = 256ull << 20;

// What the reader counted.
struct Tally {
  uint64_t passes = 0;
  uint64_t leaves = 0;   // copied whole
  uint64_t retries = 0;  // copies that met a change and were made again
  uint64_t torn = 0;     // handed out with a checksum that does not match
};

std::string KeyOf(uint64_t i) {
  char key[17];
  std::snprintf(key, sizeof(key), "key%012llu", static_cast<unsigned long long>(i));
  return key;
}

// The reader process: walks the chain of the pool at `path` until a byte
// arrives on `stop`, then writes its tally to `out`.
[[noreturn]] void ReadUntilStopped(const std::string& path, int stop, int out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) _exit(2);
  auto slot = internal::ReaderSlot::Attach(env::Env::Default(), fd, /*writable=*/false);
  if (!slot.ok()) _exit(3);
  // The pool's largest size: the file grows under the reader, which
  // touches only leaves, all inside it.
  void* mapped = mmap(nullptr, kMaxPool, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) _exit(4);
  const char* base = static_cast<const char*>(mapped);
  const internal::ChangeRing ring = (*slot)->change_ring();
  const auto applying = [&ring] { return ring.applying(); };
  Tally tally;
  pollfd stopped = {.fd = stop, .events = POLLIN, .revents = 0};
  while (poll(&stopped, 1, 0) == 0) {
    (*slot)->PinNewestPublished(ring);
    uint64_t offset =
        std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<char*>(base) + internal::kRootHeadLeafWord))
            .load(std::memory_order_acquire);
    for (int n = 0; offset != 0 && n < 100000; ++n) {
      internal::Leaf leaf;
      while (!internal::CopyStableLeaf(base, offset, &leaf, applying)) ++tally.retries;
      ++tally.leaves;
      if (internal::LeafChecksum(leaf.header, leaf) != leaf.header.checksum) ++tally.torn;
      offset = leaf.header.next;
    }
    ++tally.passes;
  }
  (*slot)->PublishPinned(std::nullopt, std::nullopt);
  _exit(write(out, &tally, sizeof(tally)) == sizeof(tally) ? 0 : 5);
}

TEST(LeafVersionTest, AReaderOfAnotherProcessIsHandedOnlyWholeLeavesWhileTheWriterChangesThem) {
  // On a tmpfs: durable commits cost no disk flush, so the writer commits
  // as often as it can.
  TempDir dir("/dev/shm");
  const std::string path = dir.path() + "/pool";
  auto store = OpenOrDie(path, SmallPool(8ull << 20, kMaxPool));
  ASSERT_NE(store, nullptr);
  for (uint64_t i = 0; i < 4000; i += 2) ASSERT_TRUE(store->Put(WriteOptions{false}, KeyOf(i), "seed").ok());
  int stop[2], out[2];
  ASSERT_EQ(pipe(stop), 0);
  ASSERT_EQ(pipe(out), 0);
  std::fflush(nullptr);
  const pid_t reader = fork();
  if (reader == 0) ReadUntilStopped(path, stop[0], out[1]);
  close(stop[0]);
  close(out[1]);

  // Commits that change leaf headers in place: inserts between keys
  // (splits), deletes (leaves emptied, separators moved), batches, each
  // durable or unsynced, for about two seconds.
  std::mt19937_64 random(7);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  uint64_t commits = 0;
  while (std::chrono::steady_clock::now() < until) {
    WriteBatch batch;
    for (int i = 0; i < 1 + static_cast<int>(random() % 20); ++i) {
      const uint64_t key = random() % 8000;
      if (random() % 3 == 0) {
        batch.Delete(KeyOf(key));
      } else {
        batch.Put(KeyOf(key), std::string(1 + random() % 120, 'w'));
      }
    }
    ASSERT_TRUE(store->Write(WriteOptions{random() % 16 == 0}, batch).ok());
    ++commits;
  }
  ASSERT_EQ(write(stop[1], "s", 1), 1);
  Tally tally;
  ASSERT_EQ(read(out[0], &tally, sizeof(tally)), static_cast<ssize_t>(sizeof(tally)));
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader status " << status;
  close(stop[1]);
  close(out[0]);
  std::printf("%llu commits; the reader made %llu passes, copied %llu leaves whole, retried %llu copies\n",
              static_cast<unsigned long long>(commits), static_cast<unsigned long long>(tally.passes),
              static_cast<unsigned long long>(tally.leaves), static_cast<unsigned long long>(tally.retries));
  EXPECT_EQ(tally.torn, 0u) << "leaves handed out half changed";
  EXPECT_GE(tally.passes, 10u) << "the reader hardly ran: the test checks little";
}

// A version word a crash left ahead of the commits (105, where the pool
// went back to 100) and the commit that later changes the leaf with that
// very number: the stamp must still differ from the word a reader loaded
// before the commit began, or the reader would take what it read during
// the apply for a whole leaf. The writer's steps run inside the reader's
// read, where a race would put them.
TEST(LeafVersionTest, AStampOverAStaleWordOfTheSameCommitStillMakesTheReaderReadAgain) {
  alignas(64) static char pool[4096];
  const uint64_t offset = 0;
  internal::LeafVersion(pool, offset).store(105, std::memory_order_relaxed);
  uint64_t applying = 0;
  const auto now_applying = [&] { return applying; };
  const std::optional<uint64_t> read = internal::ReadStableLeaf(pool, offset, now_applying, [&] {
    applying = 105;
    auto word = internal::LeafVersion(pool, offset);
    word.store(internal::NextVersionWord(word.load(std::memory_order_relaxed), 105), std::memory_order_relaxed);
  });
  EXPECT_FALSE(read.has_value()) << "a read across the apply of commit 105 was taken for a whole leaf";
  // While the commit is applied the leaf reads as busy; once published,
  // as changed by commit 105.
  EXPECT_FALSE(internal::ReadStableLeaf(pool, offset, now_applying, [] {}).has_value());
  applying = 0;
  EXPECT_EQ(internal::ReadStableLeaf(pool, offset, now_applying, [] {}), std::optional<uint64_t>(105));
  // A recovery marks every leaf busy, whatever its word.
  applying = internal::kApplyingEveryLeaf;
  EXPECT_FALSE(internal::ReadStableLeaf(pool, offset, now_applying, [] {}).has_value());
}

}  // namespace
}  // namespace pmstore
