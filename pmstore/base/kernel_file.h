// How the store, the mapping layer and faultbench read the kernel's text
// files (procfs, sysfs, debugfs): one way, so a missing or unreadable file
// means the same thing everywhere: an empty string, which each reader
// reports as "unknown".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pmstore::base {

// The first line of `path`, without its newline; "" when it cannot be read.
std::string ReadFirstLine(const std::string& path);

// The whole of `path`; "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

// The unsigned number on the first line of `path` ("0x..." or bare hex
// digits when `hex`, e.g. sysfs `resource`); nullopt when the file cannot
// be read or holds no such number.
std::optional<uint64_t> ReadNumber(const std::string& path, bool hex = false);

}  // namespace pmstore::base
