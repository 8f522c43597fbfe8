#include "pmstore/version.h"

namespace pmstore {

std::string_view Version() { return PMSTORE_VERSION_STRING; }

}  // namespace pmstore
