#!/bin/bash
# The full kernel matrix (label matrix, outside .ci/run): the newest Debian
# kernel package of every series from 6.1 on, every backing. Passes when
# every cell holds the study's results or says why it has none, and the
# report was made.
#   kernel_matrix_full.sh OUTDIR     (a rerun resumes where the last stopped)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
rc=0
"$ROOT/scripts/kernel-matrix" --newest-per-series --out "$out" || rc=$?
[ "$rc" = 77 ] && { echo "kernel_matrix_full: SKIP: the VM or the mirror is not there"; exit 77; }
[ "$rc" = 0 ] || { echo "FAIL: kernel-matrix exit $rc"; exit 1; }
failed=0
while read -r k; do
  while read -r b; do
    cell=$out/cells/$k/$b
    if [ -n "$(find "$cell" -maxdepth 1 -name '*.json' -print -quit 2>/dev/null)" ] || [ -s "$cell/status" ]; then :; else
      echo "FAIL: $k $b: neither results nor a status"; failed=1
    fi
  done < "$out/backings.txt"
done < "$out/kernels.txt"
first=$(head -n 1 "$out/kernels.txt")
case "$first" in linux-image-6.1.*) echo "ok: the matrix starts at 6.1 ($first)" ;; *) echo "FAIL: the first kernel is $first, not a 6.1"; failed=1 ;; esac
for f in matrix.txt matrix.json matrix.svg; do [ -s "$out/$f" ] || { echo "FAIL: no $f"; failed=1; }; done
[ "$failed" = 0 ] && echo "ok: every cell of $(wc -l < "$out/kernels.txt") kernels x $(wc -l < "$out/backings.txt") backings has results or a status"
exit "$failed"
