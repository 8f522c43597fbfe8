#include "pmstore/base/kernel_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"

namespace pmstore::base {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<uint64_t> ReadNumber(const std::string& path, bool hex) {
  const std::string text = ReadFirstLine(path);
  uint64_t value = 0;
  const bool ok = hex ? absl::SimpleHexAtoi(text, &value) : absl::SimpleAtoi(text, &value);
  return ok ? std::optional<uint64_t>(value) : std::nullopt;
}

}  // namespace pmstore::base
