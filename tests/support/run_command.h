// Runs a command line through the shell and captures what a user sees:
// its exit status, its stdout and its stderr. For tests that drive the
// binaries as users call them (faultbench's cli, matrix and hugetlbfs
// tests). stderr goes through a file in a scratch directory of its own, so
// the two streams never interleave.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "support/read_text.h"
#include "support/temp_dir.h"

struct CommandResult {
  int status = -1;  // the exit status; -1 when it did not exit (a signal) or could not start
  std::string out;
  std::string err;
};

inline CommandResult RunCommand(const std::string& command_line) {
  TempDir scratch;
  const std::string err_path = scratch.File("stderr.txt");
  CommandResult r;
  FILE* pipe = popen((command_line + " 2>" + err_path).c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> chunk;
  for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) r.out.append(chunk.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.err = ReadText(err_path);
  return r;
}
