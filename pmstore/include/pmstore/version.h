// pmstore's version, for applications that log what they link.
// Thread-safe.
#pragma once

#include <string_view>

namespace pmstore {

// "MAJOR.MINOR.PATCH" of the library linked at run time.
std::string_view Version();

}  // namespace pmstore
