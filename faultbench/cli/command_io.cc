#include "faultbench/cli/command_io.h"

#include <cerrno>
#include <fstream>
#include <utility>

#include "pmstore/base/errno_status.h"

namespace faultbench {

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return pmstore::base::ErrnoStatus(errno, "open", path);
  out << text;
  out.close();
  if (!out) return pmstore::base::ErrnoStatus(errno, "write", path);
  return absl::OkStatus();
}

int UsageError(const absl::Status& status) {
  std::fprintf(stderr, "faultbench: %s\n", std::string(status.message()).c_str());
  return 2;
}

absl::StatusOr<OutputFile> OutputFile::Open(const std::string& path) {
  if (path.empty()) return OutputFile(stdout);
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return absl::InvalidArgumentError("--output: cannot write " + path);
  return OutputFile(file);
}

OutputFile::OutputFile(OutputFile&& other) noexcept : file_(std::exchange(other.file_, nullptr)) {}

OutputFile::~OutputFile() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
}

}  // namespace faultbench
