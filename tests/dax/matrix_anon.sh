#!/bin/bash
# scripts/kernel-matrix's anonymous backings end to end, in the qemu VM on
# two Debian kernel packages (label dax): the newest 6.1, which has no
# multi-size THP, and the newest 6.12, which has it for private memory and
# for shmem.
#
#   matrix_anon.sh WORKDIR
#
# On both kernels 128 MiB written through a pmd mapping is 64 PMD faults
# (private and shmem: 6.1's shmem_enabled=never is set to advise for the
# run) and 16 MiB through pte is 4096 faults. On 6.12, 128 MiB through 64K
# is 2048 faults and 2048 64 KiB folios by the kernel's own per-size
# counter; on 6.1 the cell says the 64K knob is missing instead. Two boots.
# Exit 77 (skip) when the VM cannot run or the Debian mirror cannot be
# reached; 1 when a check failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }

rc=0
old=$("$ROOT/scripts/kernels" list --names 'linux-image-6.1.0-*' | tail -n 1) || rc=$?
new=$("$ROOT/scripts/kernels" list --names 'linux-image-6.12.*' | tail -n 1) || rc=$?
[ "$rc" = 77 ] && { echo "matrix_anon: SKIP: scripts/kernels list (the mirror is not there)"; exit 77; }
[ -n "$old" ] && [ -n "$new" ] || { echo "FAIL: the mirror lists no 6.1 or no 6.12 package"; exit 1; }

rm -rf "$work"
mkdir -p "$work"
m=$work/matrix
rc=0
"$ROOT/scripts/kernel-matrix" --kernels "$old" "$new" --backings anon-private,anon-shared --out "$m" \
  > "$work/matrix.log" 2>&1 || rc=$?
[ "$rc" = 77 ] && { echo "matrix_anon: SKIP: $(tail -n 1 "$work/matrix.log")"; exit 77; }
[ "$rc" = 0 ] && ok "kernel-matrix: exit 0" || { bad "kernel-matrix: exit $rc"; tail -n 30 "$work/matrix.log"; }

# figure KERNEL BACKING VARIANT FIGURE: the cell's median, or "none".
figure() {
  jq -r --arg k "$1" --arg b "$2" --arg v "$3" --arg f "$4" \
    '.cells[] | select(.kernel == $k and .backing == $b) | .variants[$v][$f].median // "none"' "$m/matrix.json"
}
expect() {  # WHAT WANT GOT
  [ "$3" = "$2" ] && ok "$1: $3" || bad "$1: $3, expected $2"
}
# A fault count: N, or up to 2 more, for the odd fault of the process
# itself that lands in the measured window (6.1's shmem pmd run: 64 or 65).
expect_faults() {  # WHAT N GOT
  if [[ "$3" =~ ^[0-9]+$ ]] && [ "$3" -ge "$2" ] && [ "$3" -le $(($2 + 2)) ]; then
    ok "$1: $3"
  else
    bad "$1: $3, expected $2 (to $(($2 + 2)))"
  fi
}

for backing in anon-private anon-shared; do
  for k in "$old" "$new"; do
    expect_faults "$k $backing pmd faults" 64 "$(figure "$k" "$backing" pmd/mmap minf)"
    expect "$k $backing pmd share" 1 "$(figure "$k" "$backing" pmd/mmap pmd_share)"
    expect_faults "$k $backing pte faults" 4096 "$(figure "$k" "$backing" pte/mmap minf)"
  done
  expect_faults "$new $backing 64K faults" 2048 "$(figure "$new" "$backing" 64K/mmap minf)"
  expect "$old $backing has no 64K variant" none "$(figure "$old" "$backing" 64K/mmap minf)"
  status=$(cat "$m/cells/$old/$backing/status" 2>/dev/null)
  case "$status" in
    "skipped: 64K: this kernel has no /sys/kernel/mm/transparent_hugepage/hugepages-64kB/"*) ok "$old $backing: $status" ;;
    *) bad "$old $backing status does not say the 64K knob is missing: '$status'" ;;
  esac
done
expect "$new anon-private 64K folios (mthp.64K.anon_fault_alloc)" 2048 \
  "$(figure "$new" anon-private 64K/mmap mthp.64K.anon_fault_alloc)"
expect "$new anon-shared 64K folios (mthp.64K.shmem_alloc)" 2048 \
  "$(figure "$new" anon-shared 64K/mmap mthp.64K.shmem_alloc)"
grep -q "^  64K/mmap" "$m/matrix.txt" && ok "matrix.txt has a 64K/mmap table" || bad "matrix.txt has no 64K/mmap table"
exit "$failed"
