// Which boot of the kernel this process runs in: what tells recovery
// whether an unsynced run was cut short by a killed process (the same
// boot: memory still holds every store the run made) or by a power
// failure or kernel crash (doc/FORMAT.md, "Unsynced runs").
//
// The kernel's /proc/sys/kernel/random/boot_id, a random UUID chosen at
// each boot, read once per process. It is the kernel's, not a namespace's:
// every container of a machine sees the same one, a virtual machine its
// own. Depends on nothing of the store.
//
// Thread-safe.
#pragma once

#include <cstdint>

namespace pmstore::internal {

struct BootId {
  uint64_t words[2] = {0, 0};
  // All zeros: unknown (no /proc, or an unreadable value). An unknown boot
  // is never the same as any other, so recovery then always rolls back.
  bool known() const { return words[0] != 0 || words[1] != 0; }
  bool operator==(const BootId&) const = default;
};

// This boot's id (read once; unknown when it cannot be read).
BootId CurrentBootId();

// Tests only (the crash simulator's power failures, the boot switch test):
// from now on CurrentBootId returns `id`. Not reachable from the public
// API or the environment, so no user can make a reboot look like a kill.
void SetBootIdForTesting(const BootId& id);

// The 16 bytes of a boot_id text ("4f0e75b3-e8de-45f4-a91a-822a4e68cb91",
// with or without the dashes and a trailing newline); unknown if it is not
// 32 hex digits.
BootId ParseBootId(const char* text);

}  // namespace pmstore::internal
