#!/bin/bash
# scripts/kernel-matrix when a guest kernel dies inside a cell's study,
# with a stand-in for scripts/dax-vm that runs the study on this machine on
# anon-private (dying_dax_vm.sh): no VM boots, about 10 s.
#  - It dies once, after the pmd mode: the next boot studies the cell again
#    in full (pmd, 64K and pte), and the first boot's console is kept. (A
#    cell that kept its pmd results counted as done, so the second boot
#    skipped it and the cell lacked the modes it never reached, saying
#    nothing.)
#  - It dies on both boots: the cell's status is the oops and where it
#    happened, with the console beside it.
#   kernel_matrix_retry.sh WORKDIR   (FAULTBENCH in the environment)
# Exit 77 (skip) when the Debian mirror cannot be reached (the package name
# comes from its lists) or this kernel has no 64 KiB folios for anonymous
# memory; 1 when a check failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }

[ -e /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled ] \
  || { echo "kernel_matrix_retry: SKIP: this kernel has no 64 KiB anonymous folios (Linux 6.8)"; exit 77; }
rc=0
pkg=$("$ROOT/scripts/kernels" list --names 'linux-image-6.12.*' | tail -n 1) || rc=$?
[ "$rc" = 77 ] && { echo "kernel_matrix_retry: SKIP: scripts/kernels list (the mirror is not there)"; exit 77; }
[ -n "$pkg" ] || { echo "FAIL: the mirror lists no 6.12 package"; exit 1; }

# run NAME DYING_BOOTS: kernel-matrix on $pkg x anon-private into $work/NAME.
run() {
  local m=$work/$1
  export BOOT_COUNT=$work/$1.boots DYING_BOOTS=$2
  DAX_VM=$ROOT/tests/dax/dying_dax_vm.sh "$ROOT/scripts/kernel-matrix" --kernels "$pkg" \
    --backings anon-private --out "$m" > "$work/$1.log" 2>&1 \
    && ok "$1: kernel-matrix exit 0" || { bad "$1: kernel-matrix exit $?"; tail -n 20 "$work/$1.log"; }
  [ "$(cat "$BOOT_COUNT")" = 2 ] && ok "$1: two boots" || bad "$1: $(cat "$BOOT_COUNT") boots, expected 2"
  grep -q "anon-private: oops: Oops: int3.*(in the anon-private 64K study); booting once more" "$work/$1.log" \
    && ok "$1: the first death is told, with the study it was in" || bad "$1: no 'booting once more' line in $1.log"
  grep -q 'stand-in console' "$m/vm/$pkg"*.first-boot.console 2>/dev/null \
    && ok "$1: the first boot's console is kept" || bad "$1: no first-boot console in $m/vm"
}

rm -rf "$work"
mkdir -p "$work"

run once 1
cell=$work/once/cells/$pkg/anon-private
for mode in pmd 64K pte; do
  [ -s "$cell/$mode.json" ] && ok "once: $mode measured" || bad "once: no $mode.json in the cell: its study did not run again"
done
[ ! -e "$cell/status" ] && ok "once: no status" || bad "once: status '$(cat "$cell/status")'"
# (Its fault count is faultbench's to get right, and a sanitizer's shadow
# memory can add to it: only the runs are checked here.)
runs=$(jq -r '[.runs[] | select(.mode == "pte")] | length' "$cell/pte.json" 2>/dev/null)
[ "$runs" = 3 ] && ok "once: 3 pte runs" || bad "once: '$runs' pte runs in pte.json, expected 3"

run twice 2
cell=$work/twice/cells/$pkg/anon-private
status=$(cat "$cell/status" 2>/dev/null)
[ "$status" = "oops: Oops: int3: 0000 [#1] PREEMPT SMP NOPTI (in the anon-private 64K study)" ] \
  && ok "twice: status '$status'" || bad "twice: status '$status'"
grep -q 'boot 2, stand-in console' "$cell/console" 2>/dev/null \
  && ok "twice: the second boot's console is in the cell" || bad "twice: no console in the cell"
[ -s "$cell/pmd.json" ] && [ ! -e "$cell/pte.json" ] \
  && ok "twice: the cell keeps what was measured before the death" || bad "twice: cell holds $(ls "$cell" | tr '\n' ' ')"
exit "$failed"
