#include "pmstore/cli/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "nlohmann/json.hpp"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/cli/mdb_text.h"
#include "pmstore/store.h"

namespace pmstore::cli {

bool IsCharacterDevice(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "pmstore: %s\n", std::string(status.message()).c_str());
  return 2;
}

namespace {

// Closes the store, so that a failure to make the command's writes durable
// is reported and turns into exit status 2, not into a line the destructor
// prints. `status`: the command's own, reported instead when not OK.
int Finish(Store& store, const absl::Status& status) {
  const absl::Status closed = store.Close();
  if (!status.ok()) return Fail(status);
  return closed.ok() ? 0 : Fail(closed);
}

// For the commands that write (put, del).
absl::StatusOr<std::unique_ptr<Store>> OpenExisting(const std::string& pool, bool exclusive) {
  return Store::Open(pool, Options{.exclusive = exclusive});
}

// For the commands that only read: read permission suffices, and any
// number of them may run at once, beside one writer unless `exclusive`. A
// pool on device DAX that a crash left to recover, which its read-only open
// cannot do, is opened for writing (recovered in place) instead.
absl::StatusOr<std::unique_ptr<Store>> OpenToRead(const std::string& pool, bool exclusive) {
  auto store = Store::Open(pool, Options{.read_only = true, .exclusive = exclusive});
  if (absl::IsFailedPrecondition(store.status()) && IsCharacterDevice(pool)) {
    return Store::Open(pool, Options{.exclusive = exclusive});
  }
  return store;
}

// Options of a pool that `create` or `load` makes.
Options NewPool(uint64_t size, uint64_t max_size, uint32_t mode) {
  Options options;
  options.create_if_missing = true;
  options.initial_size = size;
  options.max_size = max_size != 0 ? max_size : size * 16;
  options.mode = mode;
  return options;
}

// The map size a dump announces, for the LMDB environment mdb_load makes
// of it: the pool's own limit, or room for a B-tree of what it holds.
uint64_t MapSizeFor(const Stats& stats) {
  constexpr uint64_t kMiB = 1 << 20;
  const uint64_t size = std::max(stats.max_pool_bytes, 4 * stats.live_bytes);
  return (size + kMiB - 1) / kMiB * kMiB;
}

// Puts a dump's entries into a pool in durable commits of 1024 entries
// (or 4 MiB), counting what the pool holds.
class DumpLoader {
 public:
  DumpLoader(Store* store, std::string pool) : store_(store), pool_(std::move(pool)) {}

  absl::Status Add(std::string_view key, std::string_view value) {
    batch_.Put(key, value);
    return batch_.Count() >= kBatchEntries || batch_.ApproximateSize() >= kBatchBytes ? Finish() : absl::OkStatus();
  }
  // Commits what is pending.
  absl::Status Finish() {
    const absl::Status status = store_->Write(batch_);
    if (status.ok()) loaded_ += batch_.Count();
    batch_.Clear();
    return status;
  }
  uint64_t loaded() const { return loaded_; }
  // `status`, and how much of the input the pool took before it.
  absl::Status Annotate(const absl::Status& status) const {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (the first ", loaded_, " entries were loaded into ", pool_, ")"));
  }

 private:
  static constexpr size_t kBatchEntries = 1024;
  static constexpr size_t kBatchBytes = 4 << 20;
  Store* store_;
  std::string pool_;
  WriteBatch batch_;
  uint64_t loaded_ = 0;
};

// Every entry of the section whose header `reader` has just read, and of
// the sections after it.
absl::Status LoadEntries(MdbTextReader* reader, DumpLoader* loader) {
  std::string key, value;
  for (bool section = true; section;) {
    absl::StatusOr<bool> entry;
    while ((entry = reader->NextEntry(&key, &value)).ok() && *entry) {
      if (key.size() > kMaxKeySize) {
        return absl::InvalidArgumentError(absl::StrCat(reader->name(), " line ", reader->line() - 1, ": a key of ",
                                                       key.size(), " bytes (a pool's keys hold at most ", kMaxKeySize,
                                                       ")"));
      }
      PMSTORE_RETURN_IF_ERROR(loader->Add(key, value));
    }
    if (!entry.ok()) return entry.status();
    PMSTORE_ASSIGN_OR_RETURN(section, reader->NextSection());
  }
  return absl::OkStatus();
}

// A commit for the JSON of `readers`: null for none.
nlohmann::json CommitOrNull(const std::optional<uint64_t>& commit) {
  return commit.has_value() ? nlohmann::json(*commit) : nlohmann::json(nullptr);
}

}  // namespace

int Create(const CreateConfig& config) {
  if (config.force) {
    const absl::Status destroyed = Store::Destroy(config.pool);
    if (!destroyed.ok() && !absl::IsNotFound(destroyed)) return Fail(destroyed);
  }
  Options options = NewPool(config.size, config.max_size, config.mode);
  options.error_if_exists = true;
  auto store = Store::Open(config.pool, options);
  if (!store.ok()) return Fail(store.status());
  const Stats stats = (*store)->GetStats();
  const int exit_status = Finish(**store, absl::OkStatus());
  if (exit_status != 0) return exit_status;
  if (stats.device_dax_align != 0) {
    std::printf("created %s: %s on device DAX (align %s), %s granularity\n", config.pool.c_str(),
                base::FormatBytes(stats.pool_bytes).c_str(), base::FormatBytes(stats.device_dax_align).c_str(),
                std::string(GranularityName(stats.granularity)).c_str());
    return 0;
  }
  std::printf("created %s: %s, may grow to %s, %s granularity\n", config.pool.c_str(),
              base::FormatBytes(stats.pool_bytes).c_str(), base::FormatBytes(stats.max_pool_bytes).c_str(),
              std::string(GranularityName(stats.granularity)).c_str());
  return 0;
}

int Destroy(const std::string& pool) {
  const absl::Status destroyed = Store::Destroy(pool);
  if (!destroyed.ok()) return Fail(destroyed);
  std::printf("destroyed %s\n", pool.c_str());
  return 0;
}

int Put(const PutConfig& config) {
  std::string value = config.value;
  if (!config.have_value) {
    if (!config.file.empty()) {
      std::ifstream in(config.file, std::ios::binary);
      if (!in) return Fail(absl::NotFoundError(config.file + ": cannot read the value file"));
      value.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      std::ostringstream in;
      in << std::cin.rdbuf();
      value = in.str();
    }
  }
  auto store = OpenExisting(config.pool, config.exclusive);
  if (!store.ok()) return Fail(store.status());
  return Finish(**store, (*store)->Put(config.key, value));
}

int Get(const std::string& pool, const std::string& key, bool exclusive) {
  auto store = OpenToRead(pool, exclusive);
  if (!store.ok()) return Fail(store.status());
  PinnedValue value;
  const absl::Status status = (*store)->Get(ReadOptions(), key, &value);
  if (absl::IsNotFound(status)) {
    std::fprintf(stderr, "pmstore: %s: key not found\n", pool.c_str());
    return 1;
  }
  if (!status.ok()) return Fail(status);
  std::fwrite(value.value().data(), 1, value.value().size(), stdout);
  return 0;
}

int Del(const std::string& pool, const std::string& key, bool exclusive) {
  auto store = OpenExisting(pool, exclusive);
  if (!store.ok()) return Fail(store.status());
  return Finish(**store, (*store)->Delete(key));
}

int List(const ListConfig& config) {
  auto store = OpenToRead(config.pool, config.exclusive);
  if (!store.ok()) return Fail(store.status());
  auto it = (*store)->NewIterator(ReadOptions(), {.prefix = config.prefix});
  uint64_t n = 0;
  for (config.reverse ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && (config.limit == 0 || n < config.limit);
       config.reverse ? it->Prev() : it->Next(), ++n) {
    std::fwrite(it->key().data(), 1, it->key().size(), stdout);
    std::fputc('\n', stdout);
  }
  return it->status().ok() ? 0 : Fail(it->status());
}

int PrintStats(const std::string& pool, bool json, bool exclusive) {
  // Writable, as a store opens it, so that granularity and MAP_SYNC are
  // what writes get; a user who may only read the file, or a pool that
  // another process holds (for writing, or exclusively), gets the rest (and
  // a hold that shuts out readers too is refused again, naming the holder).
  auto store = OpenExisting(pool, exclusive);
  if (absl::IsPermissionDenied(store.status()) || absl::IsFailedPrecondition(store.status())) {
    store = OpenToRead(pool, exclusive);
  }
  if (!store.ok()) return Fail(store.status());
  const Stats s = (*store)->GetStats();
  if (json) {
    nlohmann::json out = {{"path", s.path},
                          {"format_version", s.format_version},
                          {"keys", s.keys},
                          {"pool_bytes", s.pool_bytes},
                          {"max_pool_bytes", s.max_pool_bytes},
                          {"live_bytes", s.live_bytes},
                          {"free_bytes", s.free_bytes},
                          {"fragmentation", s.fragmentation},
                          {"granularity", std::string(GranularityName(s.granularity))},
                          {"dax", s.dax},
                          {"map_sync", s.map_sync},
                          {"read_only", s.read_only},
                          {"device_dax_align", s.device_dax_align},
                          {"pmd_mapped_share", s.pmd_mapped_share},
                          {"pmd_verify_method", s.pmd_verify_method}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("pool            %s\n", s.path.c_str());
  std::printf("format version  %u\n", s.format_version);
  std::printf("keys            %llu\n", static_cast<unsigned long long>(s.keys));
  std::printf("size            %s (may grow to %s)\n", base::FormatBytes(s.pool_bytes).c_str(),
              base::FormatBytes(s.max_pool_bytes).c_str());
  std::printf("live            %s\n", base::FormatBytes(s.live_bytes).c_str());
  std::printf("free            %s (fragmentation %.2f)\n", base::FormatBytes(s.free_bytes).c_str(), s.fragmentation);
  std::printf("granularity     %s\n", std::string(GranularityName(s.granularity)).c_str());
  std::printf("dax             %s\n", s.dax ? "yes" : "no");
  if (s.device_dax_align != 0) {
    std::printf("device dax      yes, align %s (the page size of every mapping of it)\n",
                base::FormatBytes(s.device_dax_align).c_str());
  }
  std::printf("map_sync        %s\n", s.map_sync ? "yes" : "no");
  if (s.read_only) {
    std::printf("read-only       yes (no write permission: granularity, dax and map_sync are those of a private "
                "mapping)\n");
  }
  if (s.pmd_mapped_share >= 0) {
    std::printf("pmd mapped      %.1f%% of resident pages (%s)\n", s.pmd_mapped_share * 100, s.pmd_verify_method.c_str());
  } else {
    std::printf("pmd mapped      unknown (%s)\n", s.pmd_verify_method.c_str());
  }
  return 0;
}

int Readers(const std::string& pool, bool clear_stale, bool json) {
  int cleared = 0;
  if (clear_stale) {
    auto count = Store::ClearStaleReaders(pool);
    if (!count.ok()) return Fail(count.status());
    cleared = *count;
  }
  auto readers = Store::Readers(pool);
  if (!readers.ok()) return Fail(readers.status());
  if (json) {
    nlohmann::json out = {{"path", pool}, {"readers", nlohmann::json::array()}};
    if (clear_stale) out["cleared"] = cleared;
    for (const ReaderInfo& r : *readers) {
      out["readers"].push_back({{"slot", r.slot},
                                {"pid", r.pid},
                                {"writable", r.writable},
                                {"stale", r.stale},
                                {"opened_unix_ns", r.opened_unix_ns},
                                {"pinned_commit", CommitOrNull(r.pinned_commit)},
                                {"last_commit", CommitOrNull(r.last_commit)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  if (clear_stale) std::printf("cleared %d stale slot%s\n", cleared, cleared == 1 ? "" : "s");
  if (readers->empty()) {
    std::printf("%s: no process has the pool open\n", pool.c_str());
    return 0;
  }
  std::printf("%5s  %8s  %-9s  %-20s  %-13s  %s\n", "slot", "pid", "mode", "opened (UTC)", "last commit",
              "pinned commit");
  for (const ReaderInfo& r : *readers) {
    const time_t seconds = static_cast<time_t>(r.opened_unix_ns / 1000000000);
    struct tm utc;
    gmtime_r(&seconds, &utc);
    char opened[32];
    std::strftime(opened, sizeof(opened), "%Y-%m-%dT%H:%M:%SZ", &utc);
    const std::string last = r.last_commit.has_value() ? std::to_string(*r.last_commit) : "-";
    const std::string pinned = r.pinned_commit.has_value() ? std::to_string(*r.pinned_commit) : "-";
    std::printf("%5u  %8lld  %-9s  %-20s  %-13s  %-13s%s\n", r.slot, static_cast<long long>(r.pid),
                r.writable ? "writable" : "read-only", opened, last.c_str(), pinned.c_str(),
                r.stale ? "  stale: the process died with the pool open (--clear-stale frees it)" : "");
  }
  return 0;
}

int Check(const std::string& pool, bool json) {
  auto report = Store::Check(pool);
  if (!report.ok()) return Fail(report.status());
  if (json) {
    const nlohmann::json out = {{"path", pool},
                                {"clean", report->clean()},
                                {"keys", report->keys},
                                {"leaves", report->leaves},
                                {"records_verified", report->records_verified},
                                {"bytes_verified", report->bytes_verified},
                                {"problems", report->problems}};
    std::printf("%s\n", out.dump(2).c_str());
    return report->clean() ? 0 : 1;
  }
  std::printf("%s: %llu keys, %llu leaves, %llu records (%s) verified\n", pool.c_str(),
              static_cast<unsigned long long>(report->keys), static_cast<unsigned long long>(report->leaves),
              static_cast<unsigned long long>(report->records_verified),
              base::FormatBytes(report->bytes_verified).c_str());
  for (const std::string& problem : report->problems) std::printf("problem: %s\n", problem.c_str());
  std::printf("%s\n", report->clean() ? "clean" : "DAMAGED");
  return report->clean() ? 0 : 1;
}

int Dump(const DumpConfig& config) {
  auto store = OpenToRead(config.pool, config.exclusive);
  if (!store.ok()) return Fail(store.status());
  std::FILE* out = config.file.empty() ? stdout : std::fopen(config.file.c_str(), "w");
  if (out == nullptr) return Fail(base::ErrnoStatus(errno, "fopen", config.file));
  MdbTextWriter writer(out, config.print ? MdbTextFormat::kPrint : MdbTextFormat::kByteValue);
  writer.WriteHeader(MapSizeFor((*store)->GetStats()));
  auto it = (*store)->NewIterator(ReadOptions(), {});
  for (it->SeekToFirst(); it->Valid() && writer.ok(); it->Next()) writer.WriteEntry(it->key(), it->value());
  if (!it->status().ok()) return Fail(it->status());
  writer.WriteFooter();
  const std::string where = config.file.empty() ? "stdout" : config.file;
  if (std::fflush(out) != 0 || !writer.ok()) return Fail(base::ErrnoStatus(errno, "write", where));
  if (out != stdout && std::fclose(out) != 0) return Fail(base::ErrnoStatus(errno, "close", where));
  return 0;
}

int Load(const LoadConfig& config) {
  std::FILE* in = config.file.empty() ? stdin : std::fopen(config.file.c_str(), "r");
  if (in == nullptr) return Fail(base::ErrnoStatus(errno, "fopen", config.file));
  const std::string source = config.file.empty() ? "stdin" : config.file;
  MdbTextReader reader(in, source);
  // The first header is read before the pool is touched: input a pool
  // cannot hold is refused without creating or changing anything.
  absl::StatusOr<bool> section = reader.NextSection();
  if (!section.ok()) return Fail(section.status());
  if (!*section) return Fail(absl::InvalidArgumentError(source + ": empty input, not a dump in mdb_dump's format"));
  Options options = NewPool(config.size != 0 ? config.size : Options().initial_size, config.max_size, config.mode);
  options.exclusive = config.exclusive;
  auto store = Store::Open(config.pool, options);
  if (!store.ok()) return Fail(store.status());

  DumpLoader loader(store->get(), config.pool);
  absl::Status status = LoadEntries(&reader, &loader);
  // What came before a bad line goes in too, so the message can say
  // exactly what the pool now holds.
  const absl::Status finished = loader.Finish();
  if (status.ok()) status = finished;
  if (!status.ok()) return Fail(loader.Annotate(status));
  for (const std::string& note : reader.notes()) std::fprintf(stderr, "pmstore: note: %s\n", note.c_str());
  std::printf("loaded %llu entries from %s into %s\n", static_cast<unsigned long long>(loader.loaded()),
              source.c_str(), config.pool.c_str());
  return 0;
}

}  // namespace pmstore::cli
