// The smallest program linked against an installed pmstore: open (or
// create) a pool, write, read back, iterate.
#include <cstdio>
#include <string>

#include <pmstore/store.h>
#include <pmstore/version.h>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/dev/shm/quickstart.pool";
  pmstore::Options options;
  options.create_if_missing = true;
  auto store = pmstore::Store::Open(path, options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 2;
  }
  if (absl::Status s = (*store)->Put("greeting", "hello, pmem"); !s.ok()) return 2;
  std::string value;
  if (!(*store)->Get("greeting", &value).ok()) return 1;
  std::printf("pmstore %s: greeting = %s\n", std::string(pmstore::Version()).c_str(), value.c_str());
  auto it = (*store)->NewIterator(pmstore::ReadOptions(), {.prefix = "g"});
  for (it->SeekToFirst(); it->Valid(); it->Next()) std::printf("  %.*s\n", static_cast<int>(it->key().size()), it->key().data());
  return 0;
}
