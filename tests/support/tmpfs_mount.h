// A real tmpfs mount for a test, unmounted and removed at scope exit
// (scratch_mount.h); ok() is false where mounting is refused.
#pragma once

#include <string>

#include "support/scratch_mount.h"

class TmpfsMount : public ScratchMount {
 public:
  // options: e.g. "size=256m,huge=always".
  explicit TmpfsMount(const std::string& options) : ScratchMount("tmpfs", options) {}
};
