// Simulated power failure. A Persister that models the CPU cache keeps a
// shadow image of what reached persistence: a line gets there only when
// flushed and then drained. At every drain of a random workload the test
// builds crash images (the shadow, plus a random subset of the lines
// written but not yet persisted, which the hardware may have evicted), and
// again right after each write is acknowledged,
// recovers each with the normal open, and checks doc/FORMAT.md's
// invariants: acknowledged writes present with their exact values, the
// write in flight all or nothing, `check` clean, new writes accepted.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/src/persister.h"
#include "pmstore/src/store_impl.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using Model = std::map<std::string, std::string>;

class CrashHarness;
CrashHarness* g_harness = nullptr;

class CrashHarness {
 public:
  CrashHarness(std::string image_path, uint64_t seed, int subsets)
      : image_path_(std::move(image_path)), rng_(seed), subsets_(subsets) {}

  // The persister the store under test uses.
  class ShadowPersister final : public internal::Persister {
   public:
    ShadowPersister(CrashHarness* harness, const mapping::Mapping& mapping)
        : harness_(harness), base_(mapping.address()), mapping_(&mapping) {
      shadow_.assign(base_, base_ + mapping.length());  // what the file held when mapped
    }
    uint64_t mapped() const { return mapping_->length(); }
    void Flush(const void* addr, size_t size) override {
      const uint64_t begin = (static_cast<const char*>(addr) - base_) & ~63ull;
      const uint64_t end = ((static_cast<const char*>(addr) - base_) + size + 63) & ~63ull;
      pending_.emplace_back(begin, end);
    }
    void Drain() override {
      if (harness_->armed_) harness_->CrashHere(*this);
      for (const auto& [begin, end] : pending_) {
        if (shadow_.size() < end) shadow_.resize(end, 0);  // growth: new file space reads as zeros
        std::memcpy(shadow_.data() + begin, base_ + begin, end - begin);
      }
      pending_.clear();
    }
    const char* base_live() const { return base_; }
    std::vector<char>& shadow() { return shadow_; }

   private:
    CrashHarness* harness_;
    const char* base_;
    const mapping::Mapping* mapping_;
    std::vector<char> shadow_;
    std::vector<std::pair<uint64_t, uint64_t>> pending_;
  };

  static std::unique_ptr<internal::Persister> Make(const mapping::Mapping& mapping) {
    auto persister = std::make_unique<ShadowPersister>(g_harness, mapping);
    g_harness->persister_ = persister.get();
    return persister;
  }

  // A crash right after a write was acknowledged: it must be there.
  void CrashAfterAcknowledgement() {
    if (persister_ != nullptr) CrashHere(*persister_);
  }

  // What the store must show after recovery.
  Model acked;                   // state after every acknowledged write
  std::optional<Model> in_flight;  // state if the write being made took effect
  bool armed_ = false;
  ShadowPersister* persister_ = nullptr;
  int images_checked = 0;
  std::string failure;

 private:
  void CrashHere(ShadowPersister& persister) {
    const std::vector<char>& shadow = persister.shadow();
    for (int variant = 0; variant <= subsets_ && failure.empty(); ++variant) {
      std::vector<char> image = shadow;
      image.resize(persister.mapped(), 0);  // grown space not yet persisted reads as zeros
      if (variant > 0) {
        // Lines the CPU may have written back on its own.
        const char* live = persister.base_live();
        for (uint64_t line = 0; line + 64 <= image.size(); line += 64) {
          if (std::memcmp(image.data() + line, live + line, 64) != 0 && rng_() % 2 == 0) {
            std::memcpy(image.data() + line, live + line, 64);
          }
        }
      }
      CheckImage(image);
    }
  }

  void CheckImage(const std::vector<char>& image) {
    ++images_checked;
    const int fd = open(image_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (write(fd, image.data(), image.size()) != static_cast<ssize_t>(image.size())) failure = "cannot write image";
    close(fd);
    auto recovered = Store::Open(image_path_, Options());
    if (!recovered.ok()) {
      failure = "recovery failed: " + std::string(recovered.status().message());
      return;
    }
    Store& store = **recovered;
    Model seen;
    auto it = store.NewIterator(ReadOptions(), {});
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen[std::string(it->key())] = std::string(it->value());
    if (seen != acked && !(in_flight.has_value() && seen == *in_flight)) {
      failure = "recovered contents match neither the acknowledged state nor the write in flight (" +
                std::to_string(seen.size()) + " keys, acked " + std::to_string(acked.size()) + ")";
      for (const auto& [k, v] : seen) {
        auto a = acked.find(k);
        if (a == acked.end() || a->second != v) {
          failure += "; key " + k + " has " + std::to_string(v.size()) + " bytes, acked " +
                     (a == acked.end() ? std::string("absent") : std::to_string(a->second.size()));
          if (in_flight.has_value()) {
            auto f = in_flight->find(k);
            failure += f == in_flight->end() ? ", in flight absent" : (f->second == v ? ", = in flight" : ", != in flight");
          }
        }
      }
      return;
    }
    const CheckReport report = store.CheckNow();
    if (!report.clean()) {
      failure = "check after recovery: " + report.problems.front();
      return;
    }
    if (!store.Put("after-crash", "x").ok()) failure = "recovered store refuses writes";
  }

 private:
  std::string image_path_;
  std::mt19937_64 rng_;
  int subsets_;
};

TEST(StoreCrashTest, EveryDrainPointRecoversToAcknowledgedState) {
  TempDir dir("/dev/shm");
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CrashHarness harness(dir.File("image"), seed, 2);
  g_harness = &harness;
  Options options = testing::SmallPool(8ull << 20, 16ull << 20);
  auto opened = StoreImpl::OpenWith(dir.File("pool"), options, &CrashHarness::Make);
  ASSERT_TRUE(opened.ok()) << opened.status();
  StoreImpl& store = **opened;
  std::mt19937_64 rng(seed);
  harness.armed_ = true;
  for (int op = 0; op < 500 && harness.failure.empty(); ++op) {
    Model next = harness.acked;
    const std::string key = "k" + std::to_string(rng() % 60);
    const uint64_t dice = rng() % 10;
    absl::Status status;
    if (dice < 5) {
      const size_t size = rng() % 50 == 0 ? (1u << 20) + rng() % 100000 : rng() % 300;
      const std::string value = testing::ValueFor(rng(), size);
      next[key] = value;
      harness.in_flight = next;
      status = store.Put(key, value);
    } else if (dice < 8) {
      next.erase(key);
      harness.in_flight = next;
      status = store.Delete(key);
    } else {
      WriteBatch batch;
      for (int i = 0; i < 8; ++i) {
        const std::string k = "k" + std::to_string(rng() % 60);
        if (rng() % 3 == 0) {
          batch.Delete(k);
          next.erase(k);
        } else {
          const std::string v = testing::ValueFor(rng(), rng() % 200);
          batch.Put(k, v);
          next[k] = v;
        }
      }
      harness.in_flight = next;
      status = store.Write(batch);
    }
    ASSERT_TRUE(status.ok()) << status;
    harness.acked = next;
    harness.in_flight.reset();
    harness.CrashAfterAcknowledgement();
  }
  harness.armed_ = false;
  std::printf("crash images recovered and checked: %d (seed %llu)\n", harness.images_checked,
              static_cast<unsigned long long>(seed));
  EXPECT_EQ(harness.failure, "");
  EXPECT_GT(harness.images_checked, 2000);
  g_harness = nullptr;
}

}  // namespace
}  // namespace pmstore
