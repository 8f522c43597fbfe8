#!/bin/bash
# A power cut while pmstore writes on fsdax (or on device DAX), and the
# boot after it:
#
#   power_cut.sh DAX_VM WRITER PMSTORE WORK_PARENT [--devdax=2M|1G]
#
# With --devdax the nvdimm's namespace is device DAX of that align and the
# pool is the device itself ($DAX_DEV); boot 2 must find the namespace kept.
# Boot 1 (scripts/dax-vm --nvdimm FILE): power_cut_writer creates a pool on
# $DAX_DIR, checks that it is mapped with MAP_SYNC at cache-line
# granularity, and puts keys with values that follow from the key, adding
# each acknowledged key to a file in the run directory (host side). After
# a random number of acknowledgements it prints "power-cut-point:" and
# goes on writing; dax-vm --power-cut-on kills qemu (SIGKILL) on that line.
# Boot 2, same FILE: the namespace and the file system must be found, not
# made again; every acknowledged key must be there with its value, nothing
# but the one in-flight put beyond them, `pmstore check` clean, a new put
# readable. FILE lives in a fresh directory under WORK_PARENT, removed at
# the end (POWER_CUT_KEEP=1 keeps it). POWER_CUT_AFTER=N fixes the cut
# point (default: random in 300..3000).
#
# A boot that times out (exit 124, the emulated guest's soft lockups, see
# boot_with_retry.sh) is booted once more: boot 1 from a fresh FILE,
# boot 2 on the same one. Exit status: 0 passed; 1 failed; 77 no VM here.
#
# Inside the VM the same script runs as `power_cut.sh --guest-write WRITER
# N` and `power_cut.sh --guest-verify WRITER PMSTORE`.
set -u

pool_dir() { echo "$DAX_DIR/power_cut"; }
# The pool: the device DAX device itself, or a file on the fsdax mount.
pool_path() { if [ -n "${DAX_DEV:-}" ]; then echo "$DAX_DEV"; else echo "$(pool_dir)/pool"; fi; }

if [ "${1:-}" = --guest-write ]; then
  writer=$2 cut_after=$3
  : "${DAX_DIR:=}" "${DAX_VM_OUT:?run through scripts/dax-vm}"
  unset PMEM2_FORCE_GRANULARITY
  if [ -z "${DAX_DEV:-}" ]; then rm -rf "$(pool_dir)" && mkdir -p "$(pool_dir)" || exit 4; fi
  exec "$writer" write "$(pool_path)" "$DAX_VM_OUT/acks" "$cut_after"
fi

if [ "${1:-}" = --guest-verify ]; then
  writer=$2 pm=$3
  : "${DAX_DIR:=}" "${DAX_VM_OUT:?run through scripts/dax-vm}"
  unset PMEM2_FORCE_GRANULARITY
  pool=$(pool_path)
  failed=0
  ls -l "$pool" || exit 1
  "$writer" verify "$pool" "$DAX_VM_OUT/acks" > "$DAX_VM_OUT/verify.out" 2>&1 || failed=1
  cat "$DAX_VM_OUT/verify.out"
  "$pm" check "$pool" > "$DAX_VM_OUT/check.out" 2>&1
  check_rc=$?
  cat "$DAX_VM_OUT/check.out"
  if [ "$check_rc" -eq 0 ]; then check=clean; else check="exit $check_rc"; failed=1; fi
  stats=$("$pm" stats "$pool" --json | jq -c '{keys, pool_bytes, dax, map_sync, granularity}')
  echo "power-cut: stats after the cut: $stats"
  if "$pm" put "$pool" after-the-cut new-value && [ "$("$pm" get "$pool" after-the-cut)" = new-value ]; then
    new_put=ok
  else
    new_put=failed; failed=1
  fi
  echo "power-cut-guest: check=$check new_put=$new_put stats=$stats" | tee "$DAX_VM_OUT/guest.result"
  exit "$failed"
fi

# --- host ------------------------------------------------------------------
dax_vm=$1 writer=$2 pm=$3 parent=$4
devdax_args=()
case "${5:-}" in
  "") ;;
  --devdax=2M|--devdax=1G) devdax_args=("$5") ;;
  *) echo "power_cut.sh: the fifth argument is --devdax=2M or --devdax=1G, not '$5'" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
boot_timeout=${POWER_CUT_BOOT_TIMEOUT:-200}
mkdir -p "$parent"
work=$(mktemp -d "$parent/power_cut.XXXXXX") || exit 1
# shellcheck disable=SC2317  # called by the trap
cleanup() { if [ "${POWER_CUT_KEEP:-0}" = 1 ]; then echo "power-cut: kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
nvdimm=$work/pmem.img
cut_after=${POWER_CUT_AFTER:-$((300 + RANDOM % 2701))}
t_start=$(date +%s)

# boot OUT_DIR LOG [dax-vm args...]: one boot, console to LOG and stdout.
boot() {
  local out=$1 log=$2
  shift 2
  mkdir -p "$out"
  "$dax_vm" --nvdimm "$nvdimm" "${devdax_args[@]}" --out "$out" --timeout "$boot_timeout" "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

# --- boot 1: write until the power cut --------------------------------------
for attempt in 1 2; do
  rm -rf "$work/boot1" "$nvdimm"
  echo "power-cut: boot 1 (attempt $attempt): write, cut after $cut_after acknowledged puts"
  t0=$(date +%s)
  boot "$work/boot1" "$work/boot1.log" --power-cut-on 'power-cut-point: [0-9]+ puts acknowledged' -- \
    "$self" --guest-write "$writer" "$cut_after"
  rc1=$?
  boot1_s=$(($(date +%s) - t0))
  [ "$rc1" -eq 124 ] && [ "$attempt" = 1 ] && { echo "power-cut: boot 1 timed out; booting again" >&2; continue; }
  break
done
case "$rc1" in
  77) exit 77 ;;
  137) grep -q '^dax-vm: power cut: ' "$work/boot1.log" \
         || { echo "power-cut: FAIL: qemu was killed, but not by the power cut" >&2; exit 1; } ;;
  *) echo "power-cut: FAIL: boot 1 ended with exit $rc1 before the power cut" >&2; exit 1 ;;
esac
# The DAX check is the writer's first line; it exits 3 without it, which
# would have ended boot 1 before the cut.
grep -q 'power-cut: pool .* dax=1 map_sync=1 granularity=cache_line' "$work/boot1.log" \
  || { echo "power-cut: FAIL: the writer did not report MAP_SYNC at cache_line granularity" >&2; exit 1; }

# Only whole lines are acknowledgements the host holds.
acks=$work/boot1/acks
[ -s "$acks" ] || { echo "power-cut: FAIL: no acknowledgements reached the host" >&2; exit 1; }
mkdir -p "$work/boot2"
if [ "$(tail -c 1 "$acks" | od -An -c | tr -d ' ')" = '\n' ]; then
  cp "$acks" "$work/boot2/acks"
else
  sed '$d' "$acks" > "$work/boot2/acks"
fi
acked=$(wc -l < "$work/boot2/acks")
echo "power-cut: qemu killed; $acked puts acknowledged (the cut was asked for at $cut_after)"
[ "$acked" -ge "$cut_after" ] || { echo "power-cut: FAIL: fewer acknowledgements than the cut point" >&2; exit 1; }

# --- boot 2: the same nvdimm --------------------------------------------------
for attempt in 1 2; do
  rm -f "$work/boot2/guest.result" "$work/boot2/verify.out"
  echo "power-cut: boot 2 (attempt $attempt): reopen and verify"
  t0=$(date +%s)
  boot "$work/boot2" "$work/boot2.log" -- "$self" --guest-verify "$writer" "$pm"
  rc2=$?
  boot2_s=$(($(date +%s) - t0))
  [ "$rc2" -eq 124 ] && [ "$attempt" = 1 ] && { echo "power-cut: boot 2 timed out; booting again" >&2; continue; }
  break
done
[ "$rc2" -eq 77 ] && exit 77
failed=0
kept=('nvdimm: namespace0.0 is fsdax already' 'nvdimm: keeping the ext4 file system')
[ ${#devdax_args[@]} -eq 0 ] || kept=("nvdimm: namespace0.0 is devdax (align ${devdax_args[0]#--devdax=}) already")
for want in "${kept[@]}"; do
  grep -q "$want" "$work/boot2.log" || { echo "power-cut: FAIL: boot 2 did not say '$want'" >&2; failed=1; }
done
result=$(grep -h '^power-cut-result: ' "$work/boot2/verify.out" 2>/dev/null | tail -1)
guest=$(cat "$work/boot2/guest.result" 2>/dev/null)
figure() { echo "$result" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
printf 'power-cut: figures: acknowledged=%s (cut asked at %s) found=%s lost=%s wrong=%s unacknowledged_present=%s %s boot1=%ss boot2=%ss total=%ss\n' \
  "$acked" "$cut_after" "$(figure found)" "$(figure lost)" "$(figure wrong)" "$(figure unacknowledged_present)" \
  "${guest#power-cut-guest: }" "$boot1_s" "$boot2_s" "$(($(date +%s) - t_start))"
# The guest's verdict, and the figures once more on the host.
[ "$(echo "$result" | sed -n 's/.*acknowledged=\([0-9]*\).*/\1/p')" = "$acked" ] \
  || { echo "power-cut: FAIL: boot 2 did not check the $acked acknowledged keys" >&2; failed=1; }
if [ "$(figure found)" != "$acked" ] || [ "$(figure lost)" != 0 ] || [ "$(figure wrong)" != 0 ]; then
  echo "power-cut: FAIL: acknowledged puts lost or changed by the power cut" >&2; failed=1
fi
case "$guest" in *check=clean\ new_put=ok*) ;; *) echo "power-cut: FAIL: check or the new put" >&2; failed=1 ;; esac
[ "$rc2" -eq 0 ] || { echo "power-cut: FAIL: boot 2 exit $rc2" >&2; failed=1; }
[ "$failed" = 0 ] && echo "power-cut: passed" || echo "power-cut: FAILED" >&2
exit "$failed"
