#include "store/crash_sim/simulator.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "pmstore/src/persist_site.h"
#include "pmstore/src/persister.h"
#include "pmstore/src/store_impl.h"
#include "store/crash_sim/image_file.h"
#include "store/store_test_util.h"
#include "xxhash.h"

namespace pmstore::crash_sim {
namespace {

using Model = std::map<std::string, std::string>;

constexpr uint64_t kLine = 64;
constexpr uint64_t kPage = 4096;
// The pool starts with one chunk and may grow to this: large values (one
// 2 MiB chunk each) make it grow during the workload.
constexpr uint64_t kMaxPoolBytes = 16ull << 20;
constexpr int kSmallKeys = 60;
// The one key that holds values of 1 MiB and more (each takes a chunk of
// its own); it sorts before the small keys.
constexpr char kLargeKey[] = "L";

// The model holds the large value as its size and XXH3 digest: it is
// compared for every image, and copied with the model for every write.
std::string Digest(std::string_view value) {
  return "size " + std::to_string(value.size()) + " xxh3 " + std::to_string(XXH3_64bits(value.data(), value.size()));
}

class Simulator;
Simulator* g_simulator = nullptr;  // the persister factory is a plain function

class Simulator {
 public:
  explicit Simulator(const Config& config)
      : config_(config), rng_(config.seed), pool_path_(config.dir + "/pool"), image_(config.dir + "/image") {}

  Result Run();

 private:
  // The store's persister: a model of the CPU cache.
  class ShadowPersister final : public internal::Persister {
   public:
    ShadowPersister(Simulator* sim, const mapping::Mapping& mapping, const mapping::PoolFile& file)
        : sim_(sim), base_(mapping.address()), mapping_(&mapping), file_(&file) {
      shadow_.assign(base_, base_ + mapping.length());  // what the file held when mapped
      sim_->durable_length_ = mapping.length();
      Extend();
      for (uint64_t page = 0; page < shadow_.size(); page += kPage) NoteContents(page);
    }
    ~ShadowPersister() override { sim_->closed_shadow_ = std::move(shadow_); }

    absl::Status Flush(const void* addr, size_t size) override {
      const uint64_t offset = static_cast<const char*>(addr) - base_;
      pending_.emplace_back(offset & ~(kLine - 1), (offset + size + kLine - 1) & ~(kLine - 1));
      return absl::OkStatus();
    }
    // The grown length survives a crash once this ran.
    absl::Status SyncLength() override {
      sim_->durable_length_ = file_->size();
      return absl::OkStatus();
    }
    absl::Status Drain() override {
      if (sim_->armed_) sim_->CrashHere("drain");
      Extend();
      bool changed = false;
      for (const auto& [begin, end] : pending_) {
        if (std::memcmp(shadow_.data() + begin, base_ + begin, end - begin) != 0) {
          std::memcpy(shadow_.data() + begin, base_ + begin, end - begin);
          changed = true;
          for (uint64_t page = begin & ~(kPage - 1); page < end; page += kPage) NoteContents(page);
        }
      }
      if (changed) ++generation_;
      pending_.clear();
      return absl::OkStatus();
    }

    // Grown space reads as zeros until something persists there.
    void Extend() {
      if (shadow_.size() < mapping_->length()) shadow_.resize(mapping_->length(), 0);
      nonzero_.resize((shadow_.size() + kPage - 1) / kPage, false);
    }
    // Per page of the shadow: whether it holds anything but zeros.
    const std::vector<bool>& nonzero_pages() const { return nonzero_; }
    uint64_t mapped() const { return mapping_->length(); }
    const char* live() const { return base_; }
    const std::vector<char>& shadow() const { return shadow_; }
    uint64_t generation() const { return generation_; }

   private:
    Simulator* sim_;
    const char* base_;
    const mapping::Mapping* mapping_;
    const mapping::PoolFile* file_;
    std::vector<char> shadow_;
    std::vector<std::pair<uint64_t, uint64_t>> pending_;
    uint64_t generation_ = 0;
    std::vector<bool> nonzero_;

    void NoteContents(uint64_t page) {
      const char* p = shadow_.data() + page;
      const uint64_t n = std::min(kPage, shadow_.size() - page);
      nonzero_[page / kPage] = !(p[0] == 0 && std::memcmp(p, p + 1, n - 1) == 0);
    }
  };

  static std::unique_ptr<internal::Persister> MakePersister(const mapping::Mapping& mapping,
                                                            const mapping::PoolFile& file) {
    auto persister = std::make_unique<ShadowPersister>(g_simulator, mapping, file);
    g_simulator->persister_ = persister.get();
    return persister;
  }

  uint64_t DurableLength() const { return std::min(durable_length_, persister_->mapped()); }

  bool OpenStore(const char* what);
  void Step();
  void PutOp(std::string key, size_t size);
  void UnsyncedRun();
  bool UnsyncedWrites(Model* next);
  void Restart(bool clean);
  std::string NextValue(size_t size) { return testing::ValueFor(rng_(), size); }
  void Acknowledged() {
    acked_ = std::move(*in_flight_);
    in_flight_.reset();
    CrashHere("after acknowledgement");
  }

  void CrashHere(const char* where);
  void Fail(const std::string& what) {
    if (result_.failure.empty()) result_.failure = what + " (op " + std::to_string(result_.ops) + ", " + where_ + ")";
  }
  bool BuildImage(const std::vector<uint64_t>& lines, uint64_t length);
  void CheckImage();
  bool Matches(Store& store, const Model& model, std::string* diff);
  std::string Describe(const Model& seen) const;

  const Config config_;
  std::mt19937_64 rng_;
  const std::string pool_path_;
  std::unique_ptr<StoreImpl> store_;
  ShadowPersister* persister_ = nullptr;
  std::vector<char> closed_shadow_;  // handed over by a closing store
  uint64_t durable_length_ = 0;
  bool armed_ = false;
  const char* where_ = "";

  Model acked_;                     // state after every acknowledged write
  std::optional<Model> in_flight_;  // state if the write being made took effect

  ImageFile image_;
  std::unordered_set<uint64_t> seen_images_;
  Result result_;
};

void Simulator::CrashHere(const char* where) {
  where_ = where;
  ++result_.crash_points;
  persister_->Extend();
  const uint64_t length = DurableLength();
  const std::vector<char>& shadow = persister_->shadow();
  const char* live = persister_->live();
  // Lines written but not persisted: the hardware may have written back
  // any subset of them.
  std::vector<uint64_t> unpersisted;
  for (uint64_t page = 0; page < length; page += kPage) {
    const uint64_t end = std::min(page + kPage, length);
    if (std::memcmp(shadow.data() + page, live + page, end - page) == 0) continue;
    for (uint64_t line = page; line < end; line += kLine) {
      if (std::memcmp(shadow.data() + line, live + line, kLine) != 0) unpersisted.push_back(line);
    }
  }
  std::vector<uint64_t> chosen;
  const int variants = unpersisted.empty() ? 1 : config_.random_subsets + 2;
  for (int variant = 0; variant < variants && result_.failure.empty(); ++variant) {
    chosen.clear();
    if (variant == 1) {
      chosen = unpersisted;
    } else if (variant > 1) {
      // Vary how much the hardware wrote back: few lines, half, most.
      static constexpr uint32_t kOdds[] = {2, 8, 2, 8, 2, 4};  // keep a line with 1/odds, or 1 - 1/odds
      const uint32_t odds = kOdds[(variant - 2) % 6];
      const bool keep_most = variant % 4 == 3;
      for (uint64_t line : unpersisted) {
        const bool hit = rng_() % odds == 0;
        if (hit != keep_most) chosen.push_back(line);
      }
    }
    if (BuildImage(chosen, length)) CheckImage();
  }
}

// Makes the image file hold the shadow (first `length` bytes) with the
// live contents of `lines`. False when an identical image was checked
// before (or the file cannot be written: then a failure is recorded).
bool Simulator::BuildImage(const std::vector<uint64_t>& lines, uint64_t length) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  const uint64_t generation = persister_->generation();
  XXH3_64bits_update(state, &generation, sizeof(generation));
  XXH3_64bits_update(state, &length, sizeof(length));
  const char* live = persister_->live();
  for (uint64_t line : lines) {
    XXH3_64bits_update(state, &line, sizeof(line));
    XXH3_64bits_update(state, live + line, kLine);
  }
  // The generation names the shadow's contents: it moves whenever a drain
  // changes them (and contents never return to an earlier generation's:
  // every commit writes a new sequence number).
  const uint64_t key = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!seen_images_.insert(key).second) {
    ++result_.duplicates;
    return false;
  }

  std::string error;
  if (!image_.Write(persister_->shadow(), persister_->nonzero_pages(), length, lines, live, &error)) {
    Fail(error);
    return false;
  }
  return true;
}

// Everything the store holds. The large value is compared in place (a
// pinned view) rather than copied: it is read for every image.
bool Simulator::Matches(Store& store, const Model& model, std::string* diff) {
  Model seen;
  IterateOptions small;
  small.lower_bound = std::string(kLargeKey) + '\0';
  for (const IterateOptions& range : {IterateOptions{"", "", kLargeKey}, small}) {
    auto it = store.NewIterator(ReadOptions(), range);
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen[std::string(it->key())] = std::string(it->value());
  }
  PinnedValue large;
  const absl::Status got = store.Get(ReadOptions(), kLargeKey, &large);
  auto expected = model.find(kLargeKey);
  const std::string large_digest = got.ok() ? Digest(large.value()) : "";
  bool large_ok = got.ok() ? expected != model.end() && expected->second == large_digest
                           : absl::IsNotFound(got) && expected == model.end();
  if (large_ok && seen.size() + (expected == model.end() ? 0 : 1) == model.size()) {
    bool same = true;
    for (const auto& [k, v] : seen) {
      auto m = model.find(k);
      if (m == model.end() || m->second != v) {
        same = false;
        break;
      }
    }
    if (same) return true;
  }
  if (diff != nullptr) {
    if (got.ok()) seen[kLargeKey] = large_digest;
    *diff = Describe(seen) + (large_ok ? "" : "; the large value differs");
  }
  return false;
}

void Simulator::CheckImage() {
  ++result_.images;
  auto recovered = Store::Open(image_.path(), Options());
  if (!recovered.ok()) {
    Fail("recovery failed: " + std::string(recovered.status().message()));
    return;
  }
  Store& store = **recovered;
  std::string diff;
  if (!Matches(store, acked_, &diff) && !(in_flight_.has_value() && Matches(store, *in_flight_, nullptr))) {
    Fail("recovered contents match neither the acknowledged state nor the write in flight: " + diff);
    return;
  }
  const CheckReport report = store.CheckNow();
  if (!report.clean()) {
    Fail("check after recovery: " + report.problems.front());
    return;
  }
  if (!store.Put("after-crash", "x").ok()) Fail("recovered store refuses writes");
}

std::string Simulator::Describe(const Model& seen) const {
  std::string out = std::to_string(seen.size()) + " keys, acknowledged " + std::to_string(acked_.size());
  int shown = 0;
  auto show = [&](const std::string& key, const char* what) {
    if (++shown <= 3) out += "; key " + key + " " + what;
  };
  for (const auto& [k, v] : seen) {
    auto a = acked_.find(k);
    if (a == acked_.end()) {
      show(k, "present, never acknowledged");
    } else if (a->second != v) {
      show(k, "holds another value");
    }
  }
  for (const auto& [k, v] : acked_) {
    if (seen.find(k) == seen.end()) show(k, "lost");
  }
  return out;
}

bool Simulator::OpenStore(const char* what) {
  auto opened = StoreImpl::OpenWith(pool_path_, testing::SmallPool(1, kMaxPoolBytes), &MakePersister);
  if (!opened.ok()) {
    where_ = what;
    Fail("open failed: " + std::string(opened.status().message()));
    return false;
  }
  store_ = std::move(*opened);
  return true;
}

void Simulator::PutOp(std::string key, size_t size) {
  Model next = acked_;
  const bool exists = next.count(key) != 0;
  const std::string value = NextValue(size);
  next[key] = key == kLargeKey ? Digest(value) : value;
  in_flight_ = std::move(next);
  const absl::Status status = store_->Put(key, value);
  if (!status.ok()) return Fail("put: " + std::string(status.message()));
  ++result_.puts;
  if (exists) ++result_.overwrites;
  if (size >= (1u << 20)) ++result_.large_puts;
  Acknowledged();
}

// Writes with sync=false give up durability and atomicity until Sync:
// no crash is checked in between, and Sync must make all of them durable.
void Simulator::UnsyncedRun() {
  ++result_.unsynced_runs;
  Model next = acked_;
  if (!UnsyncedWrites(&next)) return;
  const absl::Status synced = store_->Sync();
  armed_ = true;
  if (!synced.ok()) return Fail("sync: " + std::string(synced.message()));
  in_flight_ = std::move(next);
  Acknowledged();
}

// A few sync=false writes, applied to *next; leaves the simulator
// disarmed (Sync or close must make them durable).
bool Simulator::UnsyncedWrites(Model* next) {
  armed_ = false;
  const int count = 1 + static_cast<int>(rng_() % 4);
  for (int i = 0; i < count; ++i) {
    const std::string key = "k" + std::to_string(rng_() % kSmallKeys);
    absl::Status status;
    if (rng_() % 3 == 0) {
      next->erase(key);
      status = store_->Delete(WriteOptions{false}, key);
    } else {
      const std::string value = NextValue(rng_() % 300);
      (*next)[key] = value;
      status = store_->Put(WriteOptions{false}, key, value);
    }
    if (!status.ok()) {
      Fail("unsynced write: " + std::string(status.message()));
      return false;
    }
  }
  return true;
}

// Continues from a crash image (recovery runs under the model, so its own
// drain is a crash point) or, when `clean`, from what a closed store left
// persisted.
void Simulator::Restart(bool clean) {
  std::vector<char> image;
  if (clean) {
    ++result_.close_restarts;
    where_ = "close";
    // Half the time with sync=false writes that only the close makes
    // durable (its drain is then no crash point: they are not atomic).
    if (rng_() % 2 == 0) {
      Model next = acked_;
      if (!UnsyncedWrites(&next)) return;
      acked_ = std::move(next);
    }
    store_.reset();  // a drain, then the persister hands its shadow over
    persister_ = nullptr;
    armed_ = true;
    image = std::move(closed_shadow_);
    if (image.size() > durable_length_) image.resize(durable_length_);
  } else {
    ++result_.crash_restarts;
    persister_->Extend();
    const uint64_t length = DurableLength();
    image.assign(persister_->shadow().begin(), persister_->shadow().begin() + static_cast<int64_t>(length));
    for (uint64_t line = 0; line < length; line += kLine) {
      if (rng_() % 2 == 0) std::memcpy(image.data() + line, persister_->live() + line, kLine);
    }
    armed_ = false;
    store_.reset();
    persister_ = nullptr;
    armed_ = true;
  }
  const int fd = open(pool_path_.c_str(), O_RDWR | O_TRUNC);
  const bool written = fd >= 0 && write(fd, image.data(), image.size()) == static_cast<ssize_t>(image.size());
  if (fd >= 0) close(fd);
  if (!written) return Fail("cannot write the pool for a restart");
  where_ = clean ? "reopen after close" : "reopen after crash";
  if (!OpenStore(where_)) return;
  std::string diff;
  if (!Matches(*store_, acked_, &diff)) Fail("reopened store lost acknowledged state: " + diff);
}

void Simulator::Step() {
  ++result_.ops;
  where_ = "write";
  // Short runs (sanitizer builds) cover the rare steps too: a large put by
  // op 30, a restart from a crash image by op 60 and after a close by 120.
  if (result_.ops == 30 && result_.large_puts == 0) return PutOp(kLargeKey, (1u << 20) + rng_() % 100000);
  const bool owed_crash = result_.ops == 60 && result_.crash_restarts == 0;
  const bool owed_close = result_.ops == 120 && result_.close_restarts == 0;
  if (owed_crash || owed_close) return Restart(/*clean=*/owed_close);
  if (rng_() % 1000 < static_cast<uint64_t>(config_.restarts_per_1000_ops)) return Restart(rng_() % 2 == 0);
  const uint64_t dice = rng_() % 100;
  if (dice < 40) {
    PutOp("k" + std::to_string(rng_() % kSmallKeys), rng_() % 300);
  } else if (dice < 43) {
    PutOp(kLargeKey, (1u << 20) + rng_() % 100000);
  } else if (dice < 70) {
    // The large value is deleted often: it is read for every image while
    // it exists, and this keeps it there about a third of the time.
    Model next = acked_;
    const std::string key = dice < 49 ? kLargeKey : "k" + std::to_string(rng_() % kSmallKeys);
    next.erase(key);
    in_flight_ = std::move(next);
    const absl::Status status = store_->Delete(key);
    if (!status.ok()) return Fail("delete: " + std::string(status.message()));
    ++result_.deletes;
    Acknowledged();
  } else if (dice < 94) {
    Model next = acked_;
    WriteBatch batch;
    const int count = 1 + static_cast<int>(rng_() % 8);
    for (int i = 0; i < count; ++i) {
      const std::string k = "k" + std::to_string(rng_() % kSmallKeys);
      if (rng_() % 3 == 0) {
        batch.Delete(k);
        next.erase(k);
      } else {
        const std::string v = NextValue(rng_() % 200);
        batch.Put(k, v);
        next[k] = v;
      }
    }
    in_flight_ = std::move(next);
    const absl::Status status = store_->Write(batch);
    if (!status.ok()) return Fail("batch: " + std::string(status.message()));
    ++result_.batches;
    Acknowledged();
  } else {
    UnsyncedRun();
  }
}

Result Simulator::Run() {
  const auto start = std::chrono::steady_clock::now();
  g_simulator = this;
  // Creation is not armed: until it is published under its name the pool
  // does not exist for a reader. Right after, it must open empty.
  if (OpenStore("create")) {
    result_.initial_file_bytes = persister_->mapped();
    armed_ = true;
    CrashHere("after create");
    while (result_.failure.empty() && result_.images < config_.target_images && result_.ops < config_.max_ops) Step();
    armed_ = false;
    if (store_ != nullptr) result_.final_file_bytes = persister_->mapped();
  }
  store_.reset();
  g_simulator = nullptr;
  unlink(image_.path().c_str());
  unlink(pool_path_.c_str());
  result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result_;
}

}  // namespace

Result Run(const Config& config) {
  Simulator simulator(config);
  return simulator.Run();
}

}  // namespace pmstore::crash_sim
