#include "store/crash_sim/simulator.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "pmstore/env/boot_id.h"
#include "pmstore/persist/persist_site.h"
#include "pmstore/persist/persister.h"
#include "pmstore/db/store_impl.h"
#include "store/crash_sim/image_file.h"
#include "store/store_test_util.h"
#include "xxhash.h"

namespace pmstore::crash_sim {
namespace {

using Model = std::map<std::string, std::string>;

constexpr uint64_t kLine = 64;
constexpr uint64_t kPage = 4096;
// The pool starts with one chunk and may grow to this: large values (up
// to two chunks and a page chunk each) make it grow during the workload.
constexpr uint64_t kMaxPoolBytes = 24ull << 20;
constexpr int kSmallKeys = 60;
// The one key that holds values of 1 MiB and more (NextLargeSize); it
// sorts before the small keys.
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
      if (!sim_->inherited_shadow_.empty()) {
        // After a kill: the media still holds what it held; the mapping
        // shows memory (the file as the dead process left it).
        shadow_ = std::move(sim_->inherited_shadow_);
        sim_->inherited_shadow_.clear();
      } else {
        shadow_.assign(base_, base_ + mapping.length());  // what the file held when mapped
        sim_->durable_length_ = mapping.length();
      }
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

  enum class RestartKind { kClose, kPowerFailure, kKill };

  // The boot a store opened now runs in (a simulated boot id).
  static void SetBoot(uint64_t n) { internal::SetBootIdForTesting(internal::BootId{{0x626f6f742d73696dull, n}}); }
  // Whether acknowledged unsynced writes are not durable yet (or one is in
  // flight): a kill must keep them, a power failure may lose them.
  bool InsideRun() const { return allowed_.size() > 1 || (in_flight_.has_value() && !in_flight_sync_); }

  bool OpenStore(const char* what);
  void Step();
  WriteOptions NextWrite() const { return WriteOptions{.sync = run_left_ == 0}; }
  void PutOp(std::string key, size_t size);
  void DeleteOp(std::string key);
  void BatchOp();
  void TransactionOp();
  void SyncOp();
  void Restart(RestartKind kind);
  std::string NextValue(size_t size) { return testing::ValueFor(rng_(), size); }
  // Values of 1-1.5 MiB take pages of page chunks (an overwrite's new
  // value often crosses into the next chunk); from 2 MiB on, a run and the
  // first pages of the chunk after it. Every line of a value is a line
  // the shadow tracks, so sizes stay near what they were (1-1.1 MiB)
  // before page chunks. One draw, as then: the mutants test's seeds keep
  // the sequence of operations they had.
  size_t NextLargeSize() {
    const uint64_t draw = rng_();
    return (draw % 3 == 0 ? (2u << 20) : (1u << 20)) + (draw >> 8) % (512u << 10);
  }

  // The write about to be made: its state if it takes effect.
  void InFlight(Model next, bool sync) {
    in_flight_ = std::move(next);
    in_flight_sync_ = sync;
  }
  // It returned OK: its state is acknowledged, and durable with sync (a
  // durable write ends the unsynced run before it, too).
  void Acknowledged() {
    if (in_flight_sync_) allowed_.clear();
    allowed_.push_back(std::move(*in_flight_));
    in_flight_.reset();
    CrashHere("after acknowledgement");
  }
  // Everything acknowledged is durable (Sync, close).
  void AllDurable() { allowed_.erase(allowed_.begin(), allowed_.end() - 1); }
  const Model& acked() const { return allowed_.back(); }

  void CrashHere(const char* where);
  void Fail(const std::string& what) {
    if (result_.failure.empty()) result_.failure = what + " (op " + std::to_string(result_.ops) + ", " + where_ + ")";
  }
  bool BuildImage(const std::vector<uint64_t>& lines, uint64_t length, bool kill);
  void CheckImage(bool kill);
  // Everything `store` holds; the large value as its digest.
  Model Contents(Store& store);
  // The allowed state `seen` is (its index), or -1; the write in flight: -2.
  int Recognise(const Model& seen) const;
  std::string Describe(const Model& seen) const;

  const Config config_;
  std::mt19937_64 rng_;
  const std::string pool_path_;
  std::unique_ptr<StoreImpl> store_;
  ShadowPersister* persister_ = nullptr;
  std::vector<char> closed_shadow_;  // handed over by a closing store
  uint64_t durable_length_ = 0;
  std::vector<char> inherited_shadow_;  // for the persister of a store reopened after a kill
  uint64_t boot_ = 1;                   // the boot the workload runs in
  // Open is recovering from a power failure: the run may be lost already,
  // so a kill now may leave any state a power failure may.
  bool after_power_failure_ = false;
  bool armed_ = false;
  const char* where_ = "";
  bool closing_ = false;  // a store is closing (its crash points are the close's)

  // What a crash may leave (doc/FORMAT.md, "Invariants"): the state after
  // some commit from the last durable one (front) to the last acknowledged
  // one (back), each commit between them unsynced; or the write in flight.
  std::vector<Model> allowed_ = {Model()};
  std::optional<Model> in_flight_;
  bool in_flight_sync_ = true;
  int run_left_ = 0;  // unsynced writes left in the current run

  ImageFile image_;
  std::unordered_set<uint64_t> seen_images_;
  Result result_;
};

void Simulator::CrashHere(const char* where) {
  where_ = where;
  ++result_.crash_points;
  persister_->Extend();
  const uint64_t length = DurableLength();
  const uint64_t mapped = persister_->mapped();
  const std::vector<char>& shadow = persister_->shadow();
  const char* live = persister_->live();
  // Lines written but not persisted: the hardware may have written back
  // any subset of them (those within the durable length); a kill leaves
  // them all, the file at its full length.
  std::vector<uint64_t> written;
  for (uint64_t page = 0; page < mapped; page += kPage) {
    const uint64_t end = std::min(page + kPage, mapped);
    if (std::memcmp(shadow.data() + page, live + page, end - page) == 0) continue;
    for (uint64_t line = page; line < end; line += kLine) {
      if (std::memcmp(shadow.data() + line, live + line, kLine) != 0) written.push_back(line);
    }
  }
  const std::vector<uint64_t> unpersisted(written.begin(), std::lower_bound(written.begin(), written.end(), length));
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
    if (BuildImage(chosen, length, /*kill=*/false)) CheckImage(/*kill=*/false);
  }
  if (InsideRun() && result_.failure.empty() && BuildImage(written, mapped, /*kill=*/true)) CheckImage(/*kill=*/true);
}

// Makes the image file hold the shadow (first `length` bytes) with the
// live contents of `lines`. False when an identical image was checked
// before (or the file cannot be written: then a failure is recorded).
bool Simulator::BuildImage(const std::vector<uint64_t>& lines, uint64_t length, bool kill) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, &kill, sizeof(kill));
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

// Everything the store holds. The large value is read in place (a pinned
// view) and digested rather than copied: it is read for every image.
Model Simulator::Contents(Store& store) {
  Model seen;
  IterateOptions small;
  small.lower_bound = std::string(kLargeKey) + '\0';
  for (const IterateOptions& range : {IterateOptions{"", "", kLargeKey}, small}) {
    auto it = store.NewIterator(ReadOptions(), range);
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen[std::string(it->key())] = std::string(it->value());
  }
  PinnedValue large;
  if (store.Get(ReadOptions(), kLargeKey, &large).ok()) seen[kLargeKey] = Digest(large.value());
  return seen;
}

int Simulator::Recognise(const Model& seen) const {
  for (size_t i = allowed_.size(); i-- > 0;) {
    if (allowed_[i] == seen) return static_cast<int>(i);
  }
  return in_flight_.has_value() && *in_flight_ == seen ? -2 : -1;
}

// Recovers the image file and checks it. A power failure (`kill` false:
// the pool is opened in the next boot) may leave the state after any
// commit since the last durable one, or the write in flight; a kill in
// this boot (memory as the process left it) must keep every acknowledged
// write, unsynced ones too, or have the write in flight whole.
void Simulator::CheckImage(bool kill) {
  if (kill) {
    ++result_.kill_images;
  } else {
    ++result_.images;
    if (InsideRun()) ++result_.unsynced_images;
    SetBoot(boot_ + 1);
  }
  const absl::Cleanup same_boot_again = [this] { SetBoot(boot_); };
  const std::string after = kill ? " after a kill" : "";
  auto recovered = Store::Open(image_.path(), Options());
  if (!recovered.ok()) {
    Fail("recovery" + after + " failed: " + std::string(recovered.status().message()));
    return;
  }
  Store& store = **recovered;
  if (store.GetStats().opened_from_separator_image) {
    ++result_.image_opens;
    if (closing_) ++result_.closing_images;
  }
  const Model seen = Contents(store);
  const int state = Recognise(seen);
  // (Compared directly: the write in flight may lead back to an earlier
  // state, which Recognise would name first.)
  const bool kept = seen == allowed_.back() || (in_flight_.has_value() && seen == *in_flight_);
  if (state == -1 || (kill && !kept && !after_power_failure_)) {
    Fail(kill ? "after a kill the pool " + std::string(state >= 0 ? "went back to an earlier commit" : "matches no state") +
                    ", losing acknowledged writes: " + Describe(seen)
              : "recovered contents match no state after a commit since the last durable one, nor the write in "
                "flight: " + Describe(seen));
    return;
  }
  const CheckReport report = store.CheckNow();
  if (!report.clean()) {
    Fail("check after recovery" + after + ": " + report.problems.front());
    return;
  }
  if (!store.Put("after-crash", "x").ok()) Fail("recovered store" + after + " refuses writes");
}

std::string Simulator::Describe(const Model& seen) const {
  const Model& acked = allowed_.back();
  std::string out = std::to_string(seen.size()) + " keys, acknowledged " + std::to_string(acked.size()) + " (" +
                    std::to_string(allowed_.size() - 1) + " of those writes unsynced)";
  int shown = 0;
  auto show = [&](const std::string& key, const char* what) {
    if (++shown <= 3) out += "; key " + key + " " + what;
  };
  for (const auto& [k, v] : seen) {
    auto a = acked.find(k);
    if (a == acked.end()) {
      show(k, "present, never acknowledged");
    } else if (a->second != v) {
      show(k, "holds another value");
    }
  }
  for (const auto& [k, v] : acked) {
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
  Model next = acked();
  const bool exists = next.count(key) != 0;
  const std::string value = NextValue(size);
  next[key] = key == kLargeKey ? Digest(value) : value;
  const WriteOptions options = NextWrite();
  InFlight(std::move(next), options.sync);
  const absl::Status status = store_->Put(options, key, value);
  if (!status.ok()) return Fail("put: " + std::string(status.message()));
  ++result_.puts;
  if (exists) ++result_.overwrites;
  if (size >= (1u << 20)) ++result_.large_puts;
  if (size >= (2u << 20)) ++result_.tail_puts;
  Acknowledged();
}

void Simulator::DeleteOp(std::string key) {
  Model next = acked();
  next.erase(key);
  const WriteOptions options = NextWrite();
  InFlight(std::move(next), options.sync);
  const absl::Status status = store_->Delete(options, key);
  if (!status.ok()) return Fail("delete: " + std::string(status.message()));
  ++result_.deletes;
  Acknowledged();
}

void Simulator::BatchOp() {
  Model next = acked();
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
  const WriteOptions options = NextWrite();
  InFlight(std::move(next), options.sync);
  const absl::Status status = store_->Write(options, batch);
  if (!status.ok()) return Fail("batch: " + std::string(status.message()));
  ++result_.batches;
  Acknowledged();
}

// A read-modify-write transaction over two small keys (its reads checked
// against the model); its commit is staged and persisted as a batch's, and
// its crash images must recover the same way.
void Simulator::TransactionOp() {
  Model next = acked();
  std::unique_ptr<Transaction> transaction = store_->BeginTransaction();
  for (int i = 0; i < 2; ++i) {
    const std::string k = "k" + std::to_string(rng_() % kSmallKeys);
    std::string value;
    const absl::Status read = transaction->Get(k, &value);
    const auto expected = next.find(k);
    if (read.ok() ? expected == next.end() || expected->second != value
                  : !absl::IsNotFound(read) || expected != next.end()) {
      return Fail("transaction read " + k + ": " + (read.ok() ? "a value the model lacks" : read.ToString()));
    }
    if (rng_() % 4 == 0) {
      if (const absl::Status s = transaction->Delete(k); !s.ok()) return Fail("transaction delete: " + s.ToString());
      next.erase(k);
    } else {
      const std::string v = NextValue(rng_() % 200);
      if (const absl::Status s = transaction->Put(k, v); !s.ok()) return Fail("transaction put: " + s.ToString());
      next[k] = v;
    }
  }
  const WriteOptions options = NextWrite();
  InFlight(std::move(next), options.sync);
  const absl::Status status = transaction->Commit(options);
  if (!status.ok()) return Fail("transaction commit: " + std::string(status.message()));
  ++result_.transactions;
  Acknowledged();
}

// After Sync returns, everything acknowledged is durable; a crash inside
// it may still go back to the last durable state (its drains are crash
// points like any other).
void Simulator::SyncOp() {
  where_ = "sync";
  const absl::Status synced = store_->Sync();
  if (!synced.ok()) return Fail("sync: " + std::string(synced.message()));
  AllDurable();
  CrashHere("after sync");
}

// Continues from a crash image (recovery runs under the model, so its own
// drain is a crash point; the next boot), from memory as a killed process
// left it (the same boot; the model keeps what had reached the media), or
// from what a closed store left persisted.
void Simulator::Restart(RestartKind kind) {
  const bool clean = kind == RestartKind::kClose;
  std::vector<char> image;
  if (kind == RestartKind::kKill) {
    ++result_.kill_restarts;
    persister_->Extend();
    image.assign(persister_->live(), persister_->live() + persister_->mapped());
    std::vector<char> media = persister_->shadow();
    armed_ = false;
    store_.reset();  // its close writes to the old file, which is replaced below
    persister_ = nullptr;
    armed_ = true;
    inherited_shadow_ = std::move(media);
  } else if (clean) {
    ++result_.close_restarts;
    where_ = "close";
    run_left_ = 0;
    closing_ = true;
    store_.reset();  // drains (crash points), then the persister hands its shadow over
    closing_ = false;
    persister_ = nullptr;
    AllDurable();
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
    SetBoot(++boot_);
  }
  const int fd = open(pool_path_.c_str(), O_RDWR | O_TRUNC);
  const bool written = fd >= 0 && write(fd, image.data(), image.size()) == static_cast<ssize_t>(image.size());
  if (fd >= 0) close(fd);
  if (!written) return Fail("cannot write the pool for a restart");
  where_ = clean ? "reopen after close" : kind == RestartKind::kKill ? "reopen after kill" : "reopen after crash";
  after_power_failure_ = kind == RestartKind::kPowerFailure;
  const bool opened = OpenStore(where_);
  after_power_failure_ = false;
  if (!opened) return;
  if (store_->GetStats().opened_from_separator_image) ++result_.image_opens;
  const Model seen = Contents(*store_);
  const int state = Recognise(seen);
  if (state < 0 || (kind != RestartKind::kPowerFailure && state != static_cast<int>(allowed_.size()) - 1)) {
    return Fail("reopened store lost acknowledged state: " + Describe(seen));
  }
  // Whatever it recovered to is now the durable state to build on (after a
  // kill too: Open made the run durable).
  Model recovered = allowed_[static_cast<size_t>(state)];
  allowed_ = {std::move(recovered)};
  run_left_ = 0;
}

void Simulator::Step() {
  ++result_.ops;
  where_ = "write";
  // Runs of 1 to 12 unsynced writes: each crash point inside one must
  // recover to a state after a commit since the last durable one. The
  // first run starts at once, on the new pool (whose log has no commit);
  // later ones start more often while fewer than a third of the images
  // so far were taken inside runs (short sanitizer runs too get their
  // share, whatever the seed).
  const bool few_unsynced = result_.unsynced_images * 3 < result_.images;
  if (run_left_ == 0 && (result_.ops == 1 || rng_() % 100 < (few_unsynced ? 25 : 5))) {
    run_left_ = 1 + static_cast<int>(rng_() % 12);
    ++result_.unsynced_runs;
  }
  // Short runs (sanitizer builds) cover the rare steps too: a large put by
  // op 30, a restart from a crash image by op 60 and after a close by 120,
  // and at op 90 a durable put and then a run that commits nothing (its
  // end must still flush what the put applied, before it retires the put's
  // record); from op 40, at the first chance, a restart after a kill inside
  // a run.
  if (result_.ops == 30 && result_.large_puts == 0) {
    PutOp(kLargeKey, NextLargeSize());
  } else if (result_.ops == 90 && run_left_ == 0) {
    PutOp("k1", 10);
    run_left_ = 1;
    DeleteOp("absent");
  } else if ((result_.ops == 60 && result_.crash_restarts == 0) || (result_.ops == 120 && result_.close_restarts == 0)) {
    return Restart(result_.ops == 120 ? RestartKind::kClose : RestartKind::kPowerFailure);
  } else if (result_.ops >= 40 && result_.kill_restarts == 0 && allowed_.size() > 1) {
    return Restart(RestartKind::kKill);
  } else if (rng_() % 1000 < static_cast<uint64_t>(config_.restarts_per_1000_ops)) {
    static constexpr RestartKind kKinds[] = {RestartKind::kClose, RestartKind::kPowerFailure, RestartKind::kKill};
    return Restart(kKinds[rng_() % 3]);
  } else {
    const uint64_t dice = rng_() % 100;
    if (dice < 40) {
      // One draw per statement: the order of a call's arguments is up to
      // the compiler, and every build must run the same workload.
      std::string key = "k" + std::to_string(rng_() % kSmallKeys);
      PutOp(std::move(key), rng_() % 300);
    } else if (dice < 43) {
      PutOp(kLargeKey, NextLargeSize());
    } else if (dice < 70) {
      // The large value is deleted often: it is read for every image while
      // it exists, and this keeps it there about a third of the time.
      DeleteOp(dice < 49 ? kLargeKey : "k" + std::to_string(rng_() % kSmallKeys));
    } else if (dice < 86) {
      BatchOp();
    } else if (dice < 94) {
      TransactionOp();
    } else {
      SyncOp();
    }
  }
  // A run ends with Sync half the time; else the next durable write or a
  // close ends it.
  if (run_left_ > 0 && --run_left_ == 0 && rng_() % 2 == 0 && result_.failure.empty()) SyncOp();
}

Result Simulator::Run() {
  const auto start = std::chrono::steady_clock::now();
  g_simulator = this;
  const internal::BootId real_boot = internal::CurrentBootId();
  SetBoot(boot_);
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
  internal::SetBootIdForTesting(real_boot);
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
