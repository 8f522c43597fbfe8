#include "faultbench/cli/command_io.h"

#include <utility>

namespace faultbench {

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
