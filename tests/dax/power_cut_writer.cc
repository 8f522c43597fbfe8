// The two halves of the power-cut test (tests/dax/power_cut.sh), run
// inside scripts/dax-vm on a pool on $DAX_DIR:
//
//   power_cut_writer write POOL ACKS CUT_AFTER
//     Creates POOL, refuses to go on unless it is mapped the real DAX way
//     (MAP_SYNC, cache-line granularity), then puts pc-0000000,
//     pc-0000001, ... with sync=true, each with a value that depends on
//     the key alone, and appends each key to the file ACKS once its Put
//     returned OK (one write(2) per line, so the host holds every
//     acknowledgement the moment it is made). After CUT_AFTER
//     acknowledgements it prints "power-cut-point: ..." on stdout for the
//     host to kill the VM on, and keeps writing until it is killed.
//
//   power_cut_writer verify POOL ACKS
//     Opens POOL again (the same DAX requirements) and requires every key
//     in ACKS to be there with its value, and the pool to hold nothing
//     else but, at most, the one put that was in flight at the cut (also
//     with its value). Prints "power-cut-result: ..." key=value figures.
//
// Keys that are not the writer's (no "pc-" prefix) are left alone.
//
// Exit status: 0 ok; 1 verification failed; 2 usage; 3 the pool is not on
// the real DAX path; 4 a store error; 5 the writer ran out of keys before
// the cut.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "pmstore/store.h"

namespace {

constexpr int kMaxKeys = 1000000;

std::string KeyName(int i) { return absl::StrFormat("pc-%07d", i); }

// 40 - 6000 bytes, repeatable from the key alone, with a readable head so
// that a mismatch shows which key's value was found.
std::string ValueOf(const std::string& key) {
  uint64_t x = 0xcbf29ce484222325ull;
  for (unsigned char c : key) x = (x ^ c) * 0x100000001b3ull;
  std::string value = "value-of:" + key + ";";
  const size_t size = 40 + x % 6000;
  while (value.size() < size) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    value.push_back(static_cast<char>('a' + x % 26));
  }
  return value;
}

pmstore::Options PoolOptions(bool create) {
  pmstore::Options o;
  o.create_if_missing = create;
  o.error_if_exists = create;
  // Small at first, so that the pool grows (2 MiB at a time) while the
  // cut may come: growth is part of writing too.
  o.initial_size = 4ull << 20;
  o.max_size = 512ull << 20;
  // Open fails unless the mapping gives cache-line flushes: DAX, or a
  // forced granularity, which main() rules out.
  o.required_granularity = pmstore::Granularity::kCacheLine;
  return o;
}

// The real DAX path: MAP_SYNC and cache-line granularity, as the store
// itself reports it.
bool OnRealDax(pmstore::Store& store) {
  const pmstore::Stats s = store.GetStats();
  std::printf("power-cut: pool %s: dax=%d map_sync=%d granularity=%s keys=%llu\n", s.path.c_str(), s.dax,
              s.map_sync, std::string(pmstore::GranularityName(s.granularity)).c_str(),
              static_cast<unsigned long long>(s.keys));
  std::fflush(stdout);
  return s.dax && s.map_sync && s.granularity == pmstore::Granularity::kCacheLine;
}

std::unique_ptr<pmstore::Store> OpenOnDax(const std::string& pool, bool create) {
  auto store = pmstore::Store::Open(pool, PoolOptions(create));
  if (!store.ok()) {
    std::fprintf(stderr, "power-cut: open %s: %s\n", pool.c_str(), store.status().ToString().c_str());
    std::exit(store.status().code() == absl::StatusCode::kFailedPrecondition ? 3 : 4);
  }
  if (!OnRealDax(**store)) {
    std::fprintf(stderr, "power-cut: %s is not mapped with MAP_SYNC at cache-line granularity\n", pool.c_str());
    std::exit(3);
  }
  return std::move(*store);
}

int Write(const std::string& pool, const std::string& acks, long cut_after) {
  auto store = OpenOnDax(pool, /*create=*/true);
  const int fd = open(acks.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("power-cut: open " + acks).c_str());
    return 4;
  }
  std::printf("power-cut: writing; the cut is asked for after %ld acknowledged puts\n", cut_after);
  std::fflush(stdout);
  for (int i = 0; i < kMaxKeys; ++i) {
    const std::string key = KeyName(i);
    const absl::Status s = store->Put(key, ValueOf(key));
    if (!s.ok()) {
      std::fprintf(stderr, "power-cut: put %s: %s\n", key.c_str(), s.ToString().c_str());
      return 4;
    }
    const std::string line = key + "\n";
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      std::perror("power-cut: write the acknowledgement");
      return 4;
    }
    if (i + 1 == cut_after) {
      std::printf("power-cut-point: %d puts acknowledged, still writing\n", i + 1);
      std::fflush(stdout);
    }
  }
  std::fprintf(stderr, "power-cut: wrote all %d keys and was not cut\n", kMaxKeys);
  return 5;
}

int Verify(const std::string& pool, const std::string& acks) {
  std::vector<std::string> acked;
  std::ifstream in(acks);
  for (std::string line; std::getline(in, line);) acked.push_back(line);
  // A line without its newline is an acknowledgement the cut interrupted:
  // power_cut.sh keeps whole lines only, so there is none here.
  auto store = OpenOnDax(pool, /*create=*/false);

  size_t found = 0, wrong = 0, out_of_order = 0, missing = 0;
  for (size_t i = 0; i < acked.size(); ++i) {
    if (acked[i] != KeyName(static_cast<int>(i))) ++out_of_order;
    std::string value;
    const absl::Status s = store->Get(acked[i], &value);
    if (s.ok() && value == ValueOf(acked[i])) {
      ++found;
    } else if (s.ok()) {
      ++wrong;
      std::printf("power-cut: %s: wrong value (%zu bytes, starts '%s')\n", acked[i].c_str(), value.size(),
                  value.substr(0, 24).c_str());
    } else if (!absl::IsNotFound(s)) {
      ++wrong;
      std::printf("power-cut: %s: %s\n", acked[i].c_str(), s.ToString().c_str());
    } else if (++missing <= 20) {
      std::printf("power-cut: %s: acknowledged, missing\n", acked[i].c_str());
    }
  }
  // Anything beyond the acknowledged keys: only the next key may be there
  // (its put finished, or committed, but its acknowledgement did not reach
  // the host), and only whole. Keys without the prefix are not the
  // writer's: the new put of an earlier verifying boot that timed out.
  uint64_t beyond = 0;
  bool beyond_ok = true;
  const std::string next = KeyName(static_cast<int>(acked.size()));
  auto it = store->NewIterator(pmstore::ReadOptions(), {.prefix = "pc-", .lower_bound = next});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++beyond;
    const bool whole = beyond == 1 && it->key() == next && it->value() == ValueOf(next);
    beyond_ok = beyond_ok && whole;
    std::printf("power-cut: unacknowledged %s is there, %s\n", std::string(it->key()).c_str(),
                whole ? "whole (the put in flight at the cut)" : "NOT the next key with its value");
  }
  if (!it->status().ok()) {
    std::printf("power-cut: iteration: %s\n", it->status().ToString().c_str());
    beyond_ok = false;
  }
  it.reset();
  const size_t lost = acked.size() - found - wrong;
  std::printf("power-cut-result: acknowledged=%zu found=%zu lost=%zu wrong=%zu unacknowledged_present=%llu\n",
              acked.size(), found, lost, wrong, static_cast<unsigned long long>(beyond));
  std::fflush(stdout);
  const bool ok = lost == 0 && wrong == 0 && out_of_order == 0 && beyond_ok && !acked.empty();
  if (acked.empty()) std::printf("power-cut: no acknowledgements to check (the cut came too early)\n");
  if (out_of_order) std::printf("power-cut: %zu acknowledgement lines out of sequence\n", out_of_order);
  return ok ? 0 : 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: power_cut_writer write POOL ACKS CUT_AFTER\n"
               "       power_cut_writer verify POOL ACKS\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  // A forced granularity would give cache-line flushes without DAX; the
  // point here is the real path.
  unsetenv("PMEM2_FORCE_GRANULARITY");
  const std::string mode = argv[1];
  if (mode == "write" && argc == 5) {
    char* end = nullptr;
    const long cut_after = std::strtol(argv[4], &end, 10);
    if (*end != '\0' || cut_after < 1) return Usage();
    return Write(argv[2], argv[3], cut_after);
  }
  if (mode == "verify" && argc == 4) return Verify(argv[2], argv[3]);
  return Usage();
}
