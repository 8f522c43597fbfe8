// How every fact reader reads the kernel's text files (procfs, sysfs,
// debugfs): the readers the mapping layer uses too (pmstore/base), so a
// missing or unreadable file means the same thing everywhere: an empty
// string, which each reader reports as "unknown".
#pragma once

#include <string>

#include "pmstore/base/kernel_file.h"

namespace faultbench {

using pmstore::base::ReadFirstLine;
using pmstore::base::ReadNumber;
using pmstore::base::ReadWholeFile;

// The bracketed word of a sysfs choice line: "always [madvise] never" -> "madvise".
std::string SelectedChoice(const std::string& line);

}  // namespace faultbench
