#include "pmstore/base/errno_status.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace pmstore::base {

absl::Status ErrnoStatus(int err, std::string_view call, std::string_view subject) {
  const std::string message = absl::StrCat(std::string(call), "(", std::string(subject),
                                           "): ", std::strerror(err));
  return absl::Status(absl::ErrnoToStatusCode(err), message);
}

}  // namespace pmstore::base
