// The store's half of the failing-device test (tests/dax/flakey.sh), run
// inside scripts/dax-vm on ext4 over a device that starts failing writes:
//
//   flakey_writer write POOL ACKS READY GO
//     Creates POOL (page granularity: the file system has no DAX) and puts
//     fl-0000000, fl-0000001, ... durably, each with a value that follows
//     from the key, appending each key to ACKS once its Put returned OK.
//     After 200 acknowledgements it creates READY and waits for GO (the
//     script makes the device fail meanwhile), then puts on until a Put
//     fails (within 1800 more). That failure must name POOL and the call; then the store must
//     be poisoned: Put, Delete, Write and Sync refused with the same code
//     and the first message, reads of acknowledged keys still right, and
//     Close returning the failure. Prints "flakey: failed put KEY: MESSAGE"
//     and the key on the last line of ACKS.failed.
//
//   flakey_writer verify POOL ACKS
//     Opens POOL again: every key in ACKS there with its value, and beyond
//     them at most the failed put (ACKS.failed), whole. Prints
//     "flakey-result: acknowledged=N found=N lost=N wrong=N extra=N".
//
//   flakey_writer fill POOL
//     A pool that grows until the file system is full: the write that finds
//     it full fails with ResourceExhausted, and the store goes on (a
//     delete and a smaller put succeed, Close is OK).
//
// Exit status: 0 ok; 1 a check failed; 2 usage; 4 a store error.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "pmstore/store.h"

namespace {

std::string KeyName(int i) { return absl::StrFormat("fl-%07d", i); }

std::string ValueOf(const std::string& key) {
  std::string value = "value-of:" + key + ";";
  while (value.size() < 300) value += key;
  return value;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

void Append(const std::string& path, const std::string& line) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const std::string text = line + "\n";
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    std::perror(path.c_str());
    std::exit(4);
  }
  close(fd);
}

int failures = 0;
void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("flakey: FAIL: %s\n", what.c_str());
    ++failures;
  }
}

// A new pool at `pool`, or null (the reason printed).
std::unique_ptr<pmstore::Store> Create(const std::string& pool, uint64_t initial_size, uint64_t max_size) {
  pmstore::Options options;
  options.create_if_missing = true;
  options.initial_size = initial_size;
  options.max_size = max_size;
  auto opened = pmstore::Store::Open(pool, options);
  if (!opened.ok()) {
    std::printf("flakey: open: %s\n", std::string(opened.status().message()).c_str());
    return nullptr;
  }
  return std::move(*opened);
}

int Write(const std::string& pool, const std::string& acks, const std::string& ready, const std::string& go) {
  auto created = Create(pool, 16ull << 20, 64ull << 20);
  if (created == nullptr) return 4;
  pmstore::Store& store = *created;
  std::printf("flakey: pool %s granularity=%s\n", pool.c_str(),
              std::string(pmstore::GranularityName(store.GetStats().granularity)).c_str());
  absl::Status failed;
  std::string failed_key;
  for (int i = 0; i < 2000; ++i) {  // the failure comes at once; 1800 more puts would be a bug
    if (i == 200) {
      Append(ready, "ready");
      while (!Exists(go)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string key = KeyName(i);
    failed = store.Put(key, ValueOf(key));
    if (!failed.ok()) {
      failed_key = key;
      break;
    }
    Append(acks, key);
  }
  if (failed.ok()) {
    std::printf("flakey: FAIL: no put failed\n");
    return 1;
  }
  Append(acks + ".failed", failed_key);
  const std::string message(failed.message());
  std::printf("flakey: failed put %s: %s\n", failed_key.c_str(), message.c_str());
  Expect(message.find(pool) != std::string::npos, "the error names the pool");
  Expect(message.find("msync(") != std::string::npos || message.find("fdatasync(") != std::string::npos ||
             message.find("fallocate") != std::string::npos,
         "the error names the call");
  // Poisoned: every write refused with that error, reads go on.
  pmstore::WriteBatch batch;
  batch.Put("batched", "value");
  for (const absl::Status& refused :
       {store.Put("after", "value"), store.Delete(KeyName(0)), store.Write(batch), store.Sync()}) {
    Expect(refused.code() == failed.code() && refused.message().find(message) != std::string::npos,
           "a write after the failure is refused with it: " + std::string(refused.message()));
  }
  std::string value;
  Expect(store.Get(KeyName(7), &value).ok() && value == ValueOf(KeyName(7)), "an acknowledged key reads back");
  Expect(absl::IsNotFound(store.Get(failed_key, &value)), "the failed put is not visible");
  Expect(store.Close() == failed, "Close returns the failure");
  std::printf("flakey: poisoned as it should be: %s\n", failures == 0 ? "yes" : "NO");
  return failures == 0 ? 0 : 1;
}

int Verify(const std::string& pool, const std::string& acks) {
  auto opened = pmstore::Store::Open(pool, pmstore::Options());
  if (!opened.ok()) {
    std::printf("flakey: reopen: %s\n", std::string(opened.status().message()).c_str());
    return 4;
  }
  pmstore::Store& store = **opened;
  std::set<std::string> acknowledged;
  std::ifstream in(acks);
  for (std::string line; std::getline(in, line);) acknowledged.insert(line);
  std::string failed_key;
  std::ifstream failed(acks + ".failed");
  std::getline(failed, failed_key);
  int found = 0, lost = 0, wrong = 0, extra = 0;
  for (const std::string& key : acknowledged) {
    std::string value;
    if (!store.Get(key, &value).ok()) {
      ++lost;
    } else if (value != ValueOf(key)) {
      ++wrong;
    } else {
      ++found;
    }
  }
  auto it = store.NewIterator({}, {.prefix = "fl-"});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key(it->key());
    if (acknowledged.count(key) != 0) continue;
    if (key == failed_key && it->value() == ValueOf(key)) continue;  // in flight at the failure: whole
    ++extra;
  }
  std::printf("flakey-result: acknowledged=%zu found=%d lost=%d wrong=%d extra=%d failed_put_present=%d\n",
              acknowledged.size(), found, lost, wrong, extra, store.Contains(failed_key).value_or(false) ? 1 : 0);
  const bool ok = lost == 0 && wrong == 0 && extra == 0 && !acknowledged.empty() && store.Close().ok();
  return ok ? 0 : 1;
}

int Fill(const std::string& pool) {
  auto created = Create(pool, 4ull << 20, 1ull << 30);
  if (created == nullptr) return 4;
  pmstore::Store& store = *created;
  const std::string value(60000, 'v');
  int stored = 0;
  absl::Status status;
  while ((status = store.Put(KeyName(stored), value)).ok()) ++stored;
  std::printf("flakey: full after %d puts of 60000 bytes, pool %llu bytes: %s\n", stored,
              static_cast<unsigned long long>(store.GetStats().pool_bytes), std::string(status.message()).c_str());
  Expect(absl::IsResourceExhausted(status), "a full file system is ResourceExhausted");
  Expect(status.message().find(pool) != std::string::npos, "naming the pool");
  Expect(stored > 10, "the pool grew before the file system filled");
  Expect(store.Delete(KeyName(0)).ok(), "a delete after it succeeds (not poisoned)");
  Expect(store.Put("small", "value").ok(), "a smaller put after it succeeds");
  Expect(store.CheckNow().clean(), "the pool is clean");
  Expect(store.Close().ok(), "Close is OK");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && argc == 6) return Write(argv[2], argv[3], argv[4], argv[5]);
  if (mode == "verify" && argc == 4) return Verify(argv[2], argv[3]);
  if (mode == "fill" && argc == 3) return Fill(argv[2]);
  std::fprintf(stderr,
               "usage: flakey_writer write POOL ACKS READY GO | verify POOL ACKS | fill POOL\n");
  return 2;
}
