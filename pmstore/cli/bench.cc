#include "pmstore/cli/bench.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <thread>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/tick_clock.h"
#include "pmstore/base/units.h"
#include "pmstore/cli/bench_space.h"
#include "pmstore/cli/kv_engine.h"

namespace pmstore::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  std::string name;
  uint64_t ops = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  uint64_t found = 0;
  // updaterandom in transactions: commits that returned Aborted and were
  // begun again (unset otherwise).
  std::optional<uint64_t> aborts;
  double ops_per_sec() const { return seconds > 0 ? ops / seconds : 0; }
  double mb_per_sec() const { return seconds > 0 ? bytes / seconds / 1048576.0 : 0; }
};

bool IsFill(const std::string& name) { return name == "fillseq" || name == "fillrandom"; }
bool IsRead(const std::string& name) {
  return name == "readrandom" || name == "readseq" || name == "readreverse" || name == "readmissing" ||
         name == "multiget" || name == "seekrandom" || name == "readwhilewriting" || name == "reopen.firstread";
}

// k in decimal, zero padded on the left to `size` bytes, into *key: the
// buffer is reused, so that neither engine's figures include an
// allocation per operation (a 16-byte std::string is not inline).
void MakeKey(uint64_t k, int size, std::string* key) {
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof(digits), k).ptr;
  const size_t n = static_cast<size_t>(end - digits);
  const size_t pad = static_cast<size_t>(size) > n ? static_cast<size_t>(size) - n : 0;
  key->assign(pad, '0');
  key->append(digits, n);
}

// Latencies are kept in clock ticks (base::ReadTicks: the TSC where it is
// invariant, about 11 ns a read here against 27 for clock_gettime, a
// cost both engines' figures would otherwise carry twice per operation).
double PercentileUs(std::vector<uint32_t>& ticks, double q, double ns_per_tick) {
  if (ticks.empty()) return 0;
  const size_t i = std::min(ticks.size() - 1, static_cast<size_t>(q * ticks.size()));
  std::nth_element(ticks.begin(), ticks.begin() + i, ticks.end());
  return std::round(ticks[i] * ns_per_tick) / 1000.0;  // whole nanoseconds
}

// updaterandom (RocksDB db_bench's read-modify-write): a Get of a random
// key, then a Put of a new value of --value-size under it, each pair timed
// as one operation (and, with --transactions, made in one transaction). Of
// --threads threads, thread t updates keys k with k % threads == t only:
// no two threads touch one key, so no commit should abort, and an abort
// counted is the store's doing, not the workload's.
bool IsUpdate(const std::string& name) { return name == "updaterandom"; }
uint64_t OwnKey(std::mt19937_64& rng, uint64_t num, int threads, int t) {
  const uint64_t n = static_cast<uint64_t>(threads), self = static_cast<uint64_t>(t);
  // A thread has operations only when it has keys (num >= threads, or t == 0).
  const uint64_t mine = num > self ? (num - self + n - 1) / n : 1;
  return (rng() % mine) * n + self;
}

// readwhilewriting (db_bench's): config.threads threads do readrandom's
// lookups while one more thread puts random keys (durable unless --nosync)
// until the readers are done. What a writer's fence or msync costs the
// readers shows in their figures, which come first; the writer's follow.
bool IsReadWhileWriting(const std::string& name) { return name == "readwhilewriting"; }

// A key never written (LevelDB's readmissing): a written key and '.',
// which sorts beside it, so the lookup reaches the same leaf and only
// the fingerprints tell it is absent.
void MakeMissingKey(uint64_t k, int size, std::string* key) {
  MakeKey(k, size, key);
  key->push_back('.');
}

// multiget: --batch random keys per Store::MultiGet call, timed per call.
struct MultiGetTally {
  std::vector<uint32_t> latencies;  // per batch
  uint64_t ops = 0, found = 0, bytes = 0;
};
absl::Status RunMultiGets(KvEngine& engine, const BenchConfig& config, uint64_t ops, std::mt19937_64& rng, bool tsc,
                          MultiGetTally* tally) {
  const size_t batch = static_cast<size_t>(std::max(1, config.batch));
  std::vector<std::string> keys(batch);
  std::vector<std::string_view> views(batch);
  std::vector<std::string> values;
  tally->latencies.reserve(ops / batch + 1);
  for (uint64_t done = 0; done < ops;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(batch, ops - done));
    for (size_t i = 0; i < n; ++i) {
      MakeKey(rng() % config.num, config.key_size, &keys[i]);
      views[i] = keys[i];
    }
    uint64_t found = 0;
    const uint64_t begin = base::ReadTicks(tsc);
    absl::Status status = engine.MultiGet(std::span<const std::string_view>(views.data(), n), &values, &found);
    tally->latencies.push_back(static_cast<uint32_t>(std::min<uint64_t>(base::ReadTicks(tsc) - begin, UINT32_MAX)));
    if (!status.ok()) return status;
    for (size_t i = 0; i < n; ++i) tally->bytes += values[i].empty() ? 0 : keys[i].size() + values[i].size();
    tally->found += found;
    done += n;
    tally->ops = done;
  }
  return absl::OkStatus();
}

// Puts random keys until *stop, timing each put; for readwhilewriting.
struct BackgroundWriter {
  std::vector<uint32_t> latencies;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  absl::Status status;

  void Run(KvEngine& engine, const BenchConfig& config, const std::string& random_bytes, bool tsc,
           const std::atomic<bool>* stop) {
    std::mt19937_64 rng(config.seed * 7777 + 1);
    std::string key;
    latencies.reserve(1 << 16);
    while (!stop->load(std::memory_order_relaxed)) {
      MakeKey(rng() % config.num, config.key_size, &key);
      const size_t offset = rng() % (random_bytes.size() - config.value_size);
      const uint64_t begin = base::ReadTicks(tsc);
      status = engine.Put(key, std::string_view(random_bytes).substr(offset, config.value_size));
      latencies.push_back(static_cast<uint32_t>(std::min<uint64_t>(base::ReadTicks(tsc) - begin, UINT32_MAX)));
      if (!status.ok()) return;
      ++ops;
      bytes += key.size() + config.value_size;
    }
  }
};

absl::StatusOr<std::vector<Result>> RunOne(KvEngine& engine, const std::string& name, const BenchConfig& config) {
  const int threads = std::max(1, config.threads);
  // readwhilewriting's readers do what readrandom does.
  const std::string op = IsReadWhileWriting(name) ? "readrandom" : name;
  std::vector<std::vector<uint32_t>> latencies(threads);
  std::vector<absl::Status> statuses(threads);
  std::vector<uint64_t> found(threads, 0), bytes(threads, 0), done_ops(threads, 0), aborts(threads, 0);
  // Values are slices of this, at random offsets (1 MiB to choose from).
  std::string random_bytes(static_cast<size_t>(config.value_size) + (1 << 20), '\0');
  std::mt19937_64 fill(config.seed);
  for (char& c : random_bytes) c = static_cast<char>(' ' + fill() % 95);
  base::TickCalibration calibration(base::InvariantTscAvailable());
  const bool tsc = calibration.use_tsc();
  const Clock::time_point start = Clock::now();
  calibration.Start();

  // Reads may run longer than the key space is wide (db_bench's --reads).
  const bool reads = op == "readrandom" || op == "readseq" || op == "readreverse" || op == "readmissing" ||
                     op == "multiget" || op == "seekrandom";
  const uint64_t total = reads && config.reads != 0 ? config.reads : config.num;
  auto worker = [&](int t) {
    const uint64_t per = total / threads + (t == 0 ? total % threads : 0);
    const uint64_t first = t == 0 ? 0 : total % threads + t * (total / threads);
    std::mt19937_64 rng(config.seed * 1000003 + t * 7919 + std::hash<std::string>()(op));
    auto& lat = latencies[t];
    lat.reserve(per);
    std::string value_out;
    std::string key;
    Clock::time_point last_report = Clock::now();
    if (op == "readseq" || op == "readreverse") {
      const Clock::time_point begin = Clock::now();
      auto n = engine.Scan(per, &bytes[t], op == "readreverse");
      if (!n.ok()) {
        statuses[t] = n.status();
        return;
      }
      const double each = std::chrono::duration<double, std::nano>(Clock::now() - begin).count() / std::max<uint64_t>(1, *n);
      lat.assign(1, static_cast<uint32_t>(each));
      done_ops[t] = *n;
      found[t] = *n;
      return;
    }
    if (op == "seekrandom") {
      // db_bench's: a seek to a random key (present), then --seek_nexts
      // more entries, forward or (--reverse) back from the last key <= it,
      // through one cursor the thread keeps.
      auto cursor = engine.NewCursor();
      if (!cursor.ok()) {
        statuses[t] = cursor.status();
        return;
      }
      for (uint64_t i = 0; i < per; ++i) {
        MakeKey(rng() % config.num, config.key_size, &key);
        const uint64_t begin = base::ReadTicks(tsc);
        auto visited = (*cursor)->Seek(key, config.seek_nexts, config.reverse, &bytes[t]);
        lat.push_back(static_cast<uint32_t>(std::min<uint64_t>(base::ReadTicks(tsc) - begin, UINT32_MAX)));
        if (!visited.ok()) {
          statuses[t] = visited.status();
          return;
        }
        found[t] += *visited > 0;
        done_ops[t] = i + 1;
      }
      return;
    }
    if (op == "multiget") {
      MultiGetTally tally;
      statuses[t] = RunMultiGets(engine, config, per, rng, tsc, &tally);
      lat = std::move(tally.latencies);
      done_ops[t] = tally.ops;
      found[t] = tally.found;
      bytes[t] = tally.bytes;
      return;
    }
    for (uint64_t i = 0; i < per; ++i) {
      const uint64_t k = op == "fillseq"   ? first + i
                         : IsUpdate(op)      ? OwnKey(rng, config.num, threads, t)
                                             : rng() % config.num;
      if (op == "readmissing") {
        MakeMissingKey(k, config.key_size, &key);
      } else {
        MakeKey(k, config.key_size, &key);
      }
      const uint64_t begin = base::ReadTicks(tsc);
      absl::Status status;
      if (op == "fillseq" || op == "fillrandom" || op == "overwrite") {
        const size_t offset = rng() % (random_bytes.size() - config.value_size);
        status = engine.Put(key, std::string_view(random_bytes).substr(offset, config.value_size));
        bytes[t] += key.size() + config.value_size;
      } else if (op == "readrandom" || op == "readmissing") {
        bool hit = false;
        status = engine.Get(key, &value_out, &hit);
        if (hit) {
          ++found[t];
          bytes[t] += key.size() + value_out.size();
        }
      } else if (IsUpdate(op)) {
        const size_t offset = rng() % (random_bytes.size() - config.value_size);
        bool hit = false;
        status = engine.Update(key, std::string_view(random_bytes).substr(offset, config.value_size),
                               config.transactions, &value_out, &hit, &aborts[t]);
        if (hit) {  // db_bench's bytes: the value read, when there was one, and the value written
          ++found[t];
          bytes[t] += key.size() + value_out.size();
        }
        bytes[t] += key.size() + config.value_size;
      } else if (op == "deleterandom") {
        status = engine.Delete(key);
        bytes[t] += key.size();
      } else {
        status = absl::InvalidArgumentError(absl::StrCat("unknown benchmark '", name, "'"));
      }
      lat.push_back(static_cast<uint32_t>(std::min<uint64_t>(base::ReadTicks(tsc) - begin, UINT32_MAX)));
      if (!status.ok()) {
        statuses[t] = status;
        return;
      }
      done_ops[t] = i + 1;
      if (t == 0 && (i & 0xffff) == 0 && Clock::now() - last_report > std::chrono::seconds(2)) {
        last_report = Clock::now();
        std::fprintf(stderr, "%s %s: %llu/%llu ops\n", engine.name().c_str(), name.c_str(),
                     static_cast<unsigned long long>(i), static_cast<unsigned long long>(per));
      }
    }
  };
  std::atomic<bool> readers_done{false};
  BackgroundWriter writer;
  std::thread writer_thread;
  if (IsReadWhileWriting(name)) {
    writer_thread = std::thread([&] { writer.Run(engine, config, random_bytes, tsc, &readers_done); });
  }
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& thread : pool) thread.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  readers_done.store(true, std::memory_order_relaxed);
  if (writer_thread.joinable()) writer_thread.join();
  calibration.Stop();
  Result result;
  result.name = name;
  result.seconds = seconds;
  std::vector<uint32_t> all;
  for (int t = 0; t < threads; ++t) {
    if (!statuses[t].ok()) return statuses[t];
    result.ops += done_ops[t];
    result.bytes += bytes[t];
    result.found += found[t];
    // LMDB's write transactions wait for each other and never abort.
    if (IsUpdate(op) && config.transactions && engine.name() == "pmstore") {
      result.aborts = result.aborts.value_or(0) + aborts[t];
    }
    all.insert(all.end(), latencies[t].begin(), latencies[t].end());
  }
  // readseq and readreverse time the whole scan and record nanoseconds per entry.
  const double ns_per_tick = op == "readseq" || op == "readreverse" ? 1.0 : calibration.NsPerTick();
  result.p50_us = PercentileUs(all, 0.50, ns_per_tick);
  result.p99_us = PercentileUs(all, 0.99, ns_per_tick);
  result.p999_us = PercentileUs(all, 0.999, ns_per_tick);
  result.max_us = PercentileUs(all, 1.0, ns_per_tick);
  std::vector<Result> results = {result};
  if (IsReadWhileWriting(name)) {
    if (!writer.status.ok()) return writer.status;
    Result w;
    w.name = name + ".writer";
    w.ops = writer.ops;
    w.seconds = seconds;
    w.bytes = writer.bytes;
    w.p50_us = PercentileUs(writer.latencies, 0.50, ns_per_tick);
    w.p99_us = PercentileUs(writer.latencies, 0.99, ns_per_tick);
    w.p999_us = PercentileUs(writer.latencies, 0.999, ns_per_tick);
    w.max_us = PercentileUs(writer.latencies, 1.0, ns_per_tick);
    results.push_back(w);
  }
  return results;
}

absl::StatusOr<std::unique_ptr<KvEngine>> OpenEngine(const std::string& kind, const BenchConfig& config, bool fresh,
                                                     bool read_only = false) {
  EngineConfig engine_config{kind == "lmdb" ? config.pool + ".lmdb" : config.pool, config.size, config.sync, fresh,
                             read_only, config.exclusive};
  return kind == "lmdb" ? OpenLmdbEngine(engine_config) : OpenPmstoreEngine(engine_config);
}

// reopenreadonly: one operation, closing the engine and opening it again
// read-only (pmstore: Options::read_only, a private mapping; LMDB:
// MDB_RDONLY), for the read benchmarks after it to read through.
absl::StatusOr<Result> ReopenReadOnly(const std::string& kind, const BenchConfig& config,
                                      std::unique_ptr<KvEngine>* engine) {
  engine->reset();
  const Clock::time_point begin = Clock::now();
  auto opened = OpenEngine(kind, config, false, true);
  if (!opened.ok()) return opened.status();
  Result result;
  result.name = "reopenreadonly";
  result.ops = 1;
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  result.p50_us = result.p99_us = result.p999_us = result.max_us = std::round(result.seconds * 1e9) / 1000.0;
  *engine = std::move(*opened);
  return result;
}

// reopen: one operation, the open of the engine just closed (for pmstore:
// mapping the pool, replaying the last two commits, finding the leaves:
// the separator image after a clean close, else a walk of the chain).
// Open returns ready to serve reads; reopen.firstread then times one Get
// of a key that is present, which shows what open left for the first
// read to wait on (the faults of the lines it touches first), and
// reopen.firstwrite one Put of the value read back under its key, which
// pays for what open left to the first write (for pmstore after an open
// from the image: building the in-memory index from it and loading the
// allocator's view).
absl::StatusOr<std::vector<Result>> TimeReopen(const std::string& kind, const BenchConfig& config,
                                               std::unique_ptr<KvEngine>* engine) {
  engine->reset();
  const Clock::time_point begin = Clock::now();
  auto opened = OpenEngine(kind, config, false);
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  if (!opened.ok()) return opened.status();
  *engine = std::move(*opened);
  std::string key, value;
  MakeKey(config.num / 2, config.key_size, &key);
  bool found = false;
  const Clock::time_point read_begin = Clock::now();
  PMSTORE_RETURN_IF_ERROR((*engine)->Get(key, &value, &found));
  const double read_seconds = std::chrono::duration<double>(Clock::now() - read_begin).count();
  const Clock::time_point write_begin = Clock::now();
  if (!found) value.assign(config.value_size, 'v');  // deleterandom took it: the write puts it back
  PMSTORE_RETURN_IF_ERROR((*engine)->Put(key, value));
  const double write_seconds = std::chrono::duration<double>(Clock::now() - write_begin).count();
  std::vector<Result> results(3);
  results[0].name = "reopen";
  results[0].seconds = seconds;
  results[1].name = "reopen.firstread";
  results[1].seconds = read_seconds;
  results[1].found = found ? 1 : 0;
  results[2].name = "reopen.firstwrite";
  results[2].seconds = write_seconds;
  for (Result& result : results) {
    result.ops = 1;
    result.p50_us = result.p99_us = result.p999_us = result.max_us = std::round(result.seconds * 1e9) / 1000.0;
  }
  return results;
}

absl::StatusOr<std::vector<Result>> RunAll(const std::string& kind, const BenchConfig& config, std::string* describe) {
  std::vector<Result> results;
  std::unique_ptr<KvEngine> engine;
  bool read_only = false;  // the engine is reopenreadonly's: its rows say so (readrandom.readonly)
  for (const std::string& name : config.benchmarks) {
    if (name == "reopen") {
      auto reopened = TimeReopen(kind, config, &engine);
      if (!reopened.ok()) return reopened.status();
      results.insert(results.end(), reopened->begin(), reopened->end());
      read_only = false;
      continue;
    }
    if (name == "reopenreadonly") {
      auto reopened = ReopenReadOnly(kind, config, &engine);
      if (!reopened.ok()) return reopened.status();
      results.push_back(*reopened);
      read_only = true;
      continue;
    }
    if (engine == nullptr || IsFill(name)) {
      engine.reset();  // close (and unlock) before recreating
      auto opened = OpenEngine(kind, config, IsFill(name));
      if (!opened.ok()) return opened.status();
      engine = std::move(*opened);
      read_only = false;
    }
    // LMDB has no batched read: its readrandom is what multiget is held against.
    auto ran = RunOne(*engine, kind == "lmdb" && name == "multiget" ? "readrandom" : name, config);
    if (!ran.ok()) return ran.status();
    for (Result& result : *ran) {
      if (read_only) result.name += ".readonly";
    }
    results.insert(results.end(), ran->begin(), ran->end());
  }
  if (engine != nullptr) *describe = engine->Describe();
  return results;
}

nlohmann::json ToJson(const std::vector<Result>& results) {
  nlohmann::json list = nlohmann::json::array();
  for (const Result& r : results) {
    list.push_back({{"name", r.name}, {"ops", r.ops}, {"seconds", r.seconds}, {"ops_per_sec", r.ops_per_sec()},
                    {"mb_per_sec", r.mb_per_sec()}, {"p50_us", r.p50_us}, {"p99_us", r.p99_us},
                    {"p999_us", r.p999_us}, {"max_us", r.max_us}, {"found", r.found}});
    if (r.aborts.has_value()) list.back()["aborts"] = *r.aborts;
  }
  return list;
}

void PrintTable(const std::string& engine, const std::vector<Result>& results, int batch) {
  int width = 13;
  for (const Result& r : results) width = std::max(width, static_cast<int>(r.name.size()));
  for (const Result& r : results) {
    std::printf("%-8s %-*s: %9.3f us/op %11.0f ops/s %8.1f MB/s  p50 %7.2f  p99 %7.2f  p99.9 %8.2f  max %9.1f us", engine.c_str(),
                width, r.name.c_str(), r.ops ? r.seconds * 1e6 / r.ops : 0.0, r.ops_per_sec(), r.mb_per_sec(), r.p50_us,
                r.p99_us, r.p999_us, r.max_us);
    if (IsRead(r.name) || IsUpdate(r.name)) {
      std::printf("  (%llu of %llu found)", static_cast<unsigned long long>(r.found),
                  static_cast<unsigned long long>(r.ops));
    }
    if (r.aborts.has_value()) {
      std::printf("  in transactions, %llu aborted", static_cast<unsigned long long>(*r.aborts));
    }
    if (r.name == "multiget") std::printf("  latencies per batch of %d", batch);
    std::printf("\n");
  }
}

// "readrandom", or "multiget/readrandom" where the peer ran another
// benchmark in its place.
std::string RatioName(const Result& ours, const Result& theirs) {
  return ours.name == theirs.name ? ours.name : ours.name + "/" + theirs.name;
}

// A readrandom that missed mixes cheap misses into the hits' figure; an
// updaterandom that missed inserted keys instead of updating them.
void NoteMisses(const std::vector<Result>& results) {
  for (const Result& r : results) {
    if (r.found == r.ops) continue;
    const double share = r.ops ? 100.0 * r.found / r.ops : 0.0;
    if (r.name == "readrandom") {
      std::printf("note: readrandom found %.1f%% of its keys (after fillrandom: db_bench's semantics), so its figure\n"
                  "      mixes in misses, which cost less than hits. For hits alone run fillseq,readrandom; for\n"
                  "      misses alone, readmissing.\n",
                  share);
    } else if (IsUpdate(r.name)) {
      std::printf("note: updaterandom found %.1f%% of its keys (after fillrandom: db_bench's semantics); the rest\n"
                  "      were inserts, not updates. For updates alone run fillseq,updaterandom.\n",
                  share);
    }
  }
}

}  // namespace

int RunBench(const BenchConfig& requested) {
  BenchConfig config = requested;
  if (!config.compare.empty() && config.compare != "lmdb") {
    std::fprintf(stderr, "pmstore: --compare takes only 'lmdb'\n");
    return 2;
  }
  if (config.size == 0) {
    config.size = PoolBytesFor(config);
    if (absl::Status room = CheckRoom(config); !room.ok()) {
      std::fprintf(stderr, "pmstore: %s\n", std::string(room.message()).c_str());
      return 2;
    }
  }
  // The order moves some figures (fillseq's most, doc/STORE.md), so it is
  // the user's to choose.
  std::string describe;
  std::string other_describe;
  std::vector<Result> results;
  std::vector<Result> other;
  // Runs `kind`'s workload into *out; false, having said why, on failure.
  auto run = [&](const std::string& kind, std::vector<Result>* out, std::string* described) {
    auto ran = RunAll(kind, config, described);
    if (!ran.ok()) {
      std::fprintf(stderr, "pmstore: %s\n", std::string(ran.status().message()).c_str());
      return false;
    }
    *out = std::move(*ran);
    return true;
  };
  const bool compare = !config.compare.empty();
  if (compare && config.compare_first && !run(config.compare, &other, &other_describe)) return 2;
  if (!run("pmstore", &results, &describe)) return 2;
  if (compare && !config.compare_first && !run(config.compare, &other, &other_describe)) return 2;
  if (config.json) {
    nlohmann::json out = {{"engine", "pmstore"},      {"pool", config.pool},           {"num", config.num},
                          {"key_size", config.key_size}, {"value_size", config.value_size}, {"threads", config.threads},
                          {"sync", config.sync},      {"transactions", config.transactions},
                          {"exclusive", config.exclusive},
                          {"batch", config.batch},    {"pool_bytes", config.size},
                          {"mapping", describe},      {"benchmarks", ToJson(results)}};
    if (!other.empty()) {
      nlohmann::json ratios = nlohmann::json::object();
      for (size_t i = 0; i < other.size(); ++i) {
        if (other[i].ops_per_sec() > 0) {
          ratios[RatioName(results[i], other[i])] = results[i].ops_per_sec() / other[i].ops_per_sec();
        }
      }
      out["compare"] = {{"engine", config.compare}, {"description", other_describe},
                        {"ran_first", config.compare_first}, {"benchmarks", ToJson(other)}, {"ratios", ratios}};
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("pmstore bench: %llu keys of %d B, values of %d B, %d thread(s), %s%s%s, %s (%s)\n  pmstore: %s\n",
              static_cast<unsigned long long>(config.num), config.key_size, config.value_size, config.threads,
              config.sync ? "durable (sync) writes" : "sync=false",
              config.transactions ? ", updates in transactions" : "", config.exclusive ? ", exclusive opens" : "",
              config.pool.c_str(), base::FormatBytes(config.size).c_str(), describe.c_str());
  PrintTable("pmstore", results, config.batch);
  if (!other.empty()) {
    std::printf("  %s%s: %s\n", config.compare.c_str(), config.compare_first ? " (ran first)" : "",
                other_describe.c_str());
    PrintTable(config.compare, other, config.batch);
    std::printf("ratio pmstore/%s (ops/s):", config.compare.c_str());
    for (size_t i = 0; i < other.size(); ++i) {
      std::printf(" %s %.2fx", RatioName(results[i], other[i]).c_str(),
                  other[i].ops_per_sec() > 0 ? results[i].ops_per_sec() / other[i].ops_per_sec() : 0.0);
    }
    std::printf("\n");
  }
  NoteMisses(results);
  return 0;
}

}  // namespace pmstore::cli
