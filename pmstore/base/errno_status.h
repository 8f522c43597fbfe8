// The one place where errno becomes an absl::Status.
//
// Messages name the failing call, the file and strerror, e.g.
// "fallocate(/mnt/pool, 2097152 bytes): No space left on device", so a
// user reading one line knows what failed and on which file.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace pmstore::base {

// Builds a status whose code follows errno (ENOENT -> NotFound, ENOSPC ->
// ResourceExhausted, EEXIST -> AlreadyExists, EACCES -> PermissionDenied,
// ...) and whose message is "<call>(<subject>): <strerror>".
absl::Status ErrnoStatus(int err, std::string_view call, std::string_view subject);

}  // namespace pmstore::base
