#include "pmstore/cli/commands.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "nlohmann/json.hpp"
#include "pmstore/base/units.h"
#include "pmstore/store.h"

namespace pmstore::cli {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "pmstore: %s\n", std::string(status.message()).c_str());
  return 2;
}

// Closes the store, so that a failure to make the command's writes durable
// is reported and turns into exit status 2, not into a line the destructor
// prints. `status`: the command's own, reported instead when not OK.
int Finish(Store& store, const absl::Status& status) {
  const absl::Status closed = store.Close();
  if (!status.ok()) return Fail(status);
  return closed.ok() ? 0 : Fail(closed);
}

absl::StatusOr<std::unique_ptr<Store>> OpenExisting(const std::string& pool) { return Store::Open(pool, Options()); }

}  // namespace

int Create(const CreateConfig& config) {
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.initial_size = config.size;
  options.max_size = config.max_size != 0 ? config.max_size : config.size * 16;
  auto store = Store::Open(config.pool, options);
  if (!store.ok()) return Fail(store.status());
  const Stats stats = (*store)->GetStats();
  const int exit_status = Finish(**store, absl::OkStatus());
  if (exit_status != 0) return exit_status;
  std::printf("created %s: %s, may grow to %s, %s granularity\n", config.pool.c_str(),
              base::FormatBytes(stats.pool_bytes).c_str(), base::FormatBytes(stats.max_pool_bytes).c_str(),
              std::string(GranularityName(stats.granularity)).c_str());
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
  auto store = OpenExisting(config.pool);
  if (!store.ok()) return Fail(store.status());
  return Finish(**store, (*store)->Put(config.key, value));
}

int Get(const std::string& pool, const std::string& key) {
  auto store = OpenExisting(pool);
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

int Del(const std::string& pool, const std::string& key) {
  auto store = OpenExisting(pool);
  if (!store.ok()) return Fail(store.status());
  return Finish(**store, (*store)->Delete(key));
}

int List(const ListConfig& config) {
  auto store = OpenExisting(config.pool);
  if (!store.ok()) return Fail(store.status());
  auto it = (*store)->NewIterator(ReadOptions(), {.prefix = config.prefix});
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid() && (config.limit == 0 || n < config.limit); it->Next(), ++n) {
    std::fwrite(it->key().data(), 1, it->key().size(), stdout);
    std::fputc('\n', stdout);
  }
  return it->status().ok() ? 0 : Fail(it->status());
}

int PrintStats(const std::string& pool, bool json) {
  auto store = OpenExisting(pool);
  if (!store.ok()) return Fail(store.status());
  const Stats s = (*store)->GetStats();
  if (json) {
    nlohmann::json out = {{"path", s.path},
                          {"keys", s.keys},
                          {"pool_bytes", s.pool_bytes},
                          {"max_pool_bytes", s.max_pool_bytes},
                          {"live_bytes", s.live_bytes},
                          {"free_bytes", s.free_bytes},
                          {"fragmentation", s.fragmentation},
                          {"granularity", std::string(GranularityName(s.granularity))},
                          {"dax", s.dax},
                          {"map_sync", s.map_sync},
                          {"pmd_mapped_share", s.pmd_mapped_share},
                          {"pmd_verify_method", s.pmd_verify_method}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("pool            %s\n", s.path.c_str());
  std::printf("keys            %llu\n", static_cast<unsigned long long>(s.keys));
  std::printf("size            %s (may grow to %s)\n", base::FormatBytes(s.pool_bytes).c_str(),
              base::FormatBytes(s.max_pool_bytes).c_str());
  std::printf("live            %s\n", base::FormatBytes(s.live_bytes).c_str());
  std::printf("free            %s (fragmentation %.2f)\n", base::FormatBytes(s.free_bytes).c_str(), s.fragmentation);
  std::printf("granularity     %s\n", std::string(GranularityName(s.granularity)).c_str());
  std::printf("dax             %s\n", s.dax ? "yes" : "no");
  std::printf("map_sync        %s\n", s.map_sync ? "yes" : "no");
  if (s.pmd_mapped_share >= 0) {
    std::printf("pmd mapped      %.1f%% of resident pages (%s)\n", s.pmd_mapped_share * 100, s.pmd_verify_method.c_str());
  } else {
    std::printf("pmd mapped      unknown (%s)\n", s.pmd_verify_method.c_str());
  }
  return 0;
}

int Check(const std::string& pool) {
  auto report = Store::Check(pool);
  if (!report.ok()) return Fail(report.status());
  std::printf("%s: %llu keys, %llu leaves, %llu records (%s) verified\n", pool.c_str(),
              static_cast<unsigned long long>(report->keys), static_cast<unsigned long long>(report->leaves),
              static_cast<unsigned long long>(report->records_verified),
              base::FormatBytes(report->bytes_verified).c_str());
  for (const std::string& problem : report->problems) std::printf("problem: %s\n", problem.c_str());
  std::printf("%s\n", report->clean() ? "clean" : "DAMAGED");
  return report->clean() ? 0 : 1;
}

}  // namespace pmstore::cli
