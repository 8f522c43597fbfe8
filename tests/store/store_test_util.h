// Helpers shared by the store's tests: fresh pools in a temp dir on a
// chosen file system.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "support/temp_dir.h"

namespace pmstore::testing {

inline Options SmallPool(uint64_t initial = 8ull << 20, uint64_t max = 64ull << 20) {
  Options options;
  options.create_if_missing = true;
  options.initial_size = initial;
  options.max_size = max;
  return options;
}

inline std::unique_ptr<Store> OpenOrDie(const std::string& path, const Options& options) {
  auto store = Store::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

inline std::string ValueFor(uint64_t i, size_t size) {
  std::string value(size, '\0');
  for (size_t j = 0; j < size; ++j) value[j] = static_cast<char>('a' + (i * 31 + j * 7) % 26);
  return value;
}

// A process that opens the pool at `path`, puts `count` keys
// PREFIX0, PREFIX1, ... (value "v") unsynced and exits without closing
// it: a kill in the middle of a run of unsynced writes, as the pool
// knows it. True when the child did all of it.
inline bool KillMidUnsyncedRun(const std::string& path, int count, const std::string& prefix = "unsynced") {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    auto store = Store::Open(path, Options());
    if (!store.ok()) _exit(1);
    for (int i = 0; i < count; ++i) {
      if (!(*store)->Put({.sync = false}, prefix + std::to_string(i), "v").ok()) _exit(2);
    }
    _exit(0);  // no Close
  }
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// What `run` returns when run in a child process (a pool open here is
// open in another process there); "child failed" when it did not return.
inline std::string InAChild(const std::function<std::string()>& run) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    const std::string said = run();
    const bool written = write(pipe_fds[1], said.data(), said.size()) == static_cast<ssize_t>(said.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string said;
  char buffer[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) said.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  const bool returned = waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return returned ? said : "child failed";
}

}  // namespace pmstore::testing
