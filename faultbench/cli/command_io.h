// What every faultbench subcommand does the same way at its edges: a usage
// error is one line on stderr and exit status 2, --output is opened before
// any work, so a bad path costs no run, and files (plots, saved JSON) are
// written here, not by the libraries that render them.
#pragma once

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"

namespace faultbench {

// Prints "faultbench: MESSAGE" on stderr; returns 2, the exit status of bad usage.
int UsageError(const absl::Status& status);

// Writes `text` to `path`, replacing it; errors name the call and the path.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

// Where a report goes: stdout, or the file --output names (closed on
// destruction). InvalidArgument "--output: cannot write PATH" when it
// cannot be opened for writing.
class OutputFile {
 public:
  static absl::StatusOr<OutputFile> Open(const std::string& path);  // "" = stdout
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  std::FILE* get() const { return file_; }

 private:
  explicit OutputFile(std::FILE* file) : file_(file) {}
  std::FILE* file_;
};

}  // namespace faultbench
