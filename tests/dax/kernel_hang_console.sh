#!/bin/bash
# scripts/dax-vm reads the guest kernel's reports off the console as they
# come: a soft lockup, an RCU stall or a hung task is exit 122, an oops or a
# panic exit 123, each within seconds (not at --timeout), with the reason on
# one line of stderr and in kernel_failure, the report's stack kept in the
# console; words that only look like a report change nothing. The consoles
# come from a stand-in qemu (kernel_hang_qemu.sh), so no VM boots.
#   kernel_hang_console.sh DAX_VM STAND_IN_QEMU
set -u
dax_vm=$1 stand_in=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DAX_VM_QEMU=$stand_in DAX_VM_CACHE=$tmp/cache
failed=0
ok() { echo "ok: $scenario: $*"; }
fail() { echo "FAIL: $scenario: $*"; failed=1; }

# scenario NAME STATUS OUT MESSAGE-ERE [KERNEL_FAILURE]: one run of dax-vm
# with the stand-in printing NAME's console; OUT 1 passes --out. The stderr
# line must match MESSAGE-ERE, the kept console must hold the end of the
# report's stack (printed a second after its first line), and with --out
# kernel_failure must read KERNEL_FAILURE (none when that is empty).
scenario() {
  scenario=$1
  local want=$2 use_out=$3 re=$4 want_failure=${5:-} args=() rc t0 secs console
  rm -rf "$tmp/out" "$DAX_VM_CACHE/consoles"
  [ "$use_out" = 0 ] || args=(--out "$tmp/out")
  t0=$(date +%s)
  KERNEL_HANG_SCENARIO=$scenario "$dax_vm" --timeout 60 "${args[@]}" -- true > "$tmp/log" 2>&1
  rc=$? secs=$(($(date +%s) - t0))
  if [ "$rc" = 77 ]; then grep '^dax-vm: SKIP' "$tmp/log"; exit 77; fi
  [ "$rc" = "$want" ] && ok "exit $rc" || fail "exit $rc, expected $want"
  [ "$secs" -lt 20 ] && ok "$secs s (--timeout 60)" || fail "took $secs s: the report was not acted on"
  if grep -qE "$re" "$tmp/log"; then ok "$(grep -m1 -E "$re" "$tmp/log")"; else fail "no line matching '$re'"; fi
  [ "$want" = 0 ] && { [ ! -e "$tmp/out/kernel_failure" ] && ok "no kernel_failure" || fail "kernel_failure: $(cat "$tmp/out/kernel_failure")"; }
  [ "$want" = 0 ] && return
  if [ "$use_out" = 1 ]; then
    console=$tmp/out/console
    [ "$(cat "$tmp/out/kernel_failure" 2>/dev/null)" = "$want_failure" ] && ok "kernel_failure: $want_failure" \
      || fail "kernel_failure '$(cat "$tmp/out/kernel_failure" 2>/dev/null)', expected '$want_failure'"
  else
    console=$(sed -n 's/.*; console kept in \(.*\)$/\1/p' "$tmp/log")
    case "$console" in "$DAX_VM_CACHE"/consoles/*-*.console) ;; *) fail "console kept at '$console', not in the cache's consoles/" ;; esac
  fi
  grep -q 'end of the stack' "$console" 2>/dev/null && ok "console kept with the report's stack" \
    || fail "console '$console' lacks the stack's last line (killed before it came?)"
}

hung="^dax-vm: the guest's kernel hung: "
died="^dax-vm: the guest's kernel died without a result "
scenario softlockup 122 0 "${hung}soft lockup - CPU#1 stuck for 22s! \[faultbench:164\]; console kept in "
scenario rcu 122 1 "${hung}rcu_preempt self-detected stall on CPU; console kept in $tmp/out/console\$" \
  "hang: rcu_preempt self-detected stall on CPU"
scenario hungtask 122 0 "${hung}task touch:201 blocked for more than 2 seconds\.; console kept in "
scenario oops 123 1 "${died}\(qemu exit 137\): BUG: kernel NULL pointer dereference, address: 0000000000000008; console kept in " \
  "oops: BUG: kernel NULL pointer dereference, address: 0000000000000008"
scenario panic 123 1 "${died}\(qemu exit 0\): Kernel panic - not syncing: Fatal exception; console kept in " \
  "oops: Kernel panic - not syncing: Fatal exception"
scenario words 0 1 "^dax-vm: VM ran [0-9]+ s"
[ "$failed" = 0 ] || tail -30 "$tmp/log"
exit "$failed"
