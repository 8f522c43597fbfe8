#!/bin/bash
# A guest kernel that dies (here on purpose: sysrq's crash) is told apart
# from a failing command: scripts/dax-vm exits 123 and names the panic, and
# tests/dax/boot_with_retry.sh boots once more and then gives up with 123.
#   kernel_death.sh BOOT_WITH_RETRY DAX_VM
set -u
retry=$1 dax_vm=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$retry" "$dax_vm" --fs=ext4 -- sh -c 'echo c > /proc/sysrq-trigger' > "$log" 2>&1
rc=$?
grep -E "^dax-vm: (SKIP|the guest's kernel|the VM timed out)" "$log"
[ "$rc" = 77 ] && exit 77
failed=0
[ "$rc" = 123 ] && echo "ok: exit 123" || { echo "FAIL: exit $rc, expected 123"; failed=1; }
died=$(grep -c "^dax-vm: the guest's kernel died without a result (qemu exit [0-9]*): Kernel panic - not syncing: sysrq triggered crash" "$log")
[ "$died" = 2 ] && echo "ok: two boots, each died of the sysrq crash" || { echo "FAIL: $died deaths named, expected 2"; failed=1; }
grep -q "booting it once more" "$log" && echo "ok: booted once more" || { echo "FAIL: no second boot announced"; failed=1; }
[ "$failed" = 0 ] || tail -30 "$log"
exit "$failed"
