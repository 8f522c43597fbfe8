#!/bin/bash
# scripts/kernel-matrix and scripts/regress --bisect-packages end to end, in
# the qemu VM on Debian's kernel packages (label dax): the ext4 page cache
# began to map 2 MiB folios with the ext4 large folios of 6.16, so the last
# 6.12 package and the newest 6.16 package differ on pagecache-ext4.
#
#   kernel_range.sh WORKDIR
#
#  1. kernel-matrix over those two kernels (a cross-series pair) on
#     pagecache-ext4: the report marks pmd/mmap pmd_share as changed
#     between them (an improvement), in text, JSON and SVG.
#  2. --bisect-packages over the range between them (at most 5 packages),
#     with the matrix's cells as the cache and --any-change: the first
#     package with the change is the first 6.16 one, in at most
#     ceil(log2(N)) + 2 boots, the two measured by the matrix not booted
#     again.
#  3. The same bisection once more: nothing booted (every package cached);
#     without --any-change only the figures diff calls worse count (here
#     vmstat.numa_hit), and they point at the same package.
# Exit 77 (skip) when the VM cannot run or the Debian mirror cannot be
# reached; 1 when a check failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }
skip_on_77() { [ "$1" = 77 ] && { echo "kernel_range: SKIP: $2 (the VM or the mirror is not there)"; exit 77; }; }

rc=0
first=$("$ROOT/scripts/kernels" list --names 'linux-image-6.12.*' | tail -n 1) || rc=$?
skip_on_77 "$rc" "scripts/kernels list"
last=$("$ROOT/scripts/kernels" list --names 'linux-image-6.16.*' | tail -n 1) || rc=$?
first16=$("$ROOT/scripts/kernels" list --names 'linux-image-6.16.*' | head -n 1)
[ -n "$first" ] && [ -n "$last" ] || { echo "FAIL: the mirror lists no 6.12 or no 6.16 package"; exit 1; }
mapfile -t range < <("$ROOT/scripts/kernels" range "$first" "$last")
n=${#range[@]}
echo "kernel_range: $first .. $last, $n packages: ${range[*]}"
[ "$n" -le 5 ] || { echo "FAIL: $n packages from $first to $last: more than this test's 5"; exit 1; }

rm -rf "$work"
mkdir -p "$work"
# --- 1. the matrix over the pair ------------------------------------------------
rc=0
"$ROOT/scripts/kernel-matrix" --kernels "$first" "$last" --backings pagecache-ext4 --out "$work/matrix" \
  > "$work/matrix.log" 2>&1 || rc=$?
skip_on_77 "$rc" "scripts/kernel-matrix"
[ "$rc" = 0 ] && ok "kernel-matrix: exit 0" || { bad "kernel-matrix: exit $rc"; tail -n 30 "$work/matrix.log"; }
m=$work/matrix
short() { local s=${1#linux-image-}; echo "${s%-amd64}"; }
for k in "$first" "$last"; do
  [ -s "$m/cells/$k/pagecache-ext4/pmd.json" ] && ok "cell $k/pagecache-ext4 has pmd.json" \
    || bad "cell $k/pagecache-ext4 has no pmd.json ($(cat "$m/cells/$k/pagecache-ext4/status" 2>/dev/null))"
done
jq -e --arg a "$first" --arg b "$last" \
  '[.changes[] | select(.backing == "pagecache-ext4" and .variant == "pmd/mmap" and .figure == "pmd_share"
     and .from_kernel == $a and .to_kernel == $b and .verdict == "improvement")] | length == 1' "$m/matrix.json" >/dev/null \
  && ok "matrix.json: pagecache-ext4 pmd/mmap pmd_share changed from $first to $last (improvement)" \
  || bad "matrix.json lacks the pmd_share change ($(jq -c '.changes' "$m/matrix.json" 2>/dev/null | head -c 400))"
jq -e --arg a "$first" '.cells[] | select(.kernel == $a and .backing == "pagecache-ext4") | .variants["pmd/mmap"].pmd_share.median == 0' \
  "$m/matrix.json" >/dev/null && ok "6.12's ext4 page cache maps no PMD" || bad "6.12's pagecache-ext4 pmd_share is not 0"
grep -q "pmd_share: .* between $(short "$first") and $(short "$last")" "$m/matrix.txt" \
  && ok "matrix.txt names the change between the two kernels" || bad "matrix.txt names no pmd_share change"
grep -q 'stroke="#d62728' "$m/matrix.svg" 2>/dev/null && ok "matrix.svg flags a cell" || bad "matrix.svg flags no cell"

# --- 2. the bisection, with the matrix's cells as cache ----------------------------
bisect() {  # LOG [FLAGS...]
  local log=$1
  shift
  rc=0
  "$ROOT/scripts/regress" --bisect-packages "$first" "$last" --backing pagecache-ext4 --cache "$m/cells" \
    --save "$work/bisect-save" "$@" > "$log" 2>&1 || rc=$?
  skip_on_77 "$rc" "scripts/regress --bisect-packages"
}
bisect "$work/bisect1.log" --any-change
[ "$rc" = 1 ] && ok "bisection: exit 1 (change found)" || bad "bisection: exit $rc, expected 1"
want="first package with the change: $first16 (the one before: "
grep -qF "$want" "$work/bisect1.log" && ok "bisection: $want..." || { bad "bisection did not find $first16"; tail -n 20 "$work/bisect1.log"; }
boots=$(grep -c '^regress: boot [0-9]*:' "$work/bisect1.log")
max=$(awk -v n="$n" 'BEGIN { b = 0; while (2 ^ b < n) b++; print b }')   # the matrix measured FIRST and LAST
[ "$boots" -le "$max" ] && ok "bisection: $boots boots beyond the matrix's two (at most $max)" \
  || bad "bisection: $boots boots, more than ceil(log2($n)) = $max"
grep -qE "^regress: boot [0-9]+: ($first|$last) " "$work/bisect1.log" && bad "bisection booted a kernel the matrix had measured" \
  || ok "bisection reused the matrix's cells for $first and $last"
grep -qE '^regress: step [0-9]+: .*changed against .*pmd_share 0 -> ' "$work/bisect1.log" \
  && ok "a step names the figure that moved (pmd_share 0 -> ...)" || bad "no step names pmd_share moving"

# --- 3. again: all cached; without --any-change the improvement is no regression ---
bisect "$work/bisect2.log" --any-change
grep -q '^regress: boot ' "$work/bisect2.log" && bad "second bisection booted: $(grep '^regress: boot ' "$work/bisect2.log")" \
  || ok "second bisection booted nothing"
grep -qF "$want" "$work/bisect2.log" && ok "second bisection: the same answer" || bad "second bisection: another answer"
# Without --any-change only a regression counts: here diff's direction for
# vmstat.numa_hit (more local allocations are better) calls its fall with
# the 2 MiB folios one, so the same package is found, by that figure.
bisect "$work/bisect3.log"
[ "$rc" = 1 ] && grep -qF "$want" "$work/bisect3.log" \
  && ok "without --any-change: the same first package, exit 1" \
  || { bad "without --any-change: exit $rc"; tail -n 5 "$work/bisect3.log"; }
jq -e '[.jobs[].figures[] | select(.verdict == "REGRESSION") | .figure] | index("vmstat.numa_hit") != null' \
  "$work/bisect-save/step-1.json" >/dev/null && ok "without --any-change: step 1's regression is vmstat.numa_hit" \
  || bad "without --any-change: step 1 names no numa_hit regression"
exit "$failed"
