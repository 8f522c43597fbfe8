#!/bin/bash
# pmstore on a real device DAX device, inside scripts/dax-vm --devdax=2M|1G:
#   pmstore_on_devdax.sh PMSTORE STORE_MODEL_TEST KILL_TEST STORE_DESTROY_TEST
# The device is the pool: create formats it (no --size), refuses a device
# that holds a pool without --force, and maps it at the device's align
# (stats: device_dax_align, cache_line granularity, every resident page on
# a huge entry); put/get/list/del/dump/check work; destroy erases it. Then
# the model test, the kill tests and the full-device test (ResourceExhausted,
# nothing lost) run on the device (PMSTORE_TEST_DEVICE).
set -u
pm=$1 model_test=$2 kill_test=$3 device_test=$4
: "${DAX_DEV:?run through scripts/dax-vm --devdax=2M|1G}"
unset PMEM2_FORCE_GRANULARITY
dev=$DAX_DEV
out=$(mktemp -d)
failed=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; failed=1; }
align=$(cat "/sys/dev/char/$((16#$(stat -c %t "$dev"))):$((16#$(stat -c %T "$dev")))/align")

# A fresh device holds no pool: reads say so.
"$pm" destroy "$dev" >/dev/null 2>&1
"$pm" get "$dev" k 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "holds no pool" "$out/err" && ok "get on an empty device: $(cat "$out/err")" \
  || bad "get on an empty device: exit $rc, $(cat "$out/err")"
"$pm" create "$dev" --size=64M 2>"$out/err"; rc=$?
[ "$rc" != 0 ] && grep -q "drop --size" "$out/err" && ok "create --size on a device refused" || bad "create --size: exit $rc"

"$pm" create "$dev" >"$out/create" 2>&1 && ok "create: $(cat "$out/create")" || bad "create: $(cat "$out/create")"
"$pm" create "$dev" 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "already holds a pool" "$out/err" && ok "second create refused" \
  || bad "second create: exit $rc, $(cat "$out/err")"
for i in 1 2 3; do "$pm" put "$dev" "key$i" "value$i" || bad "put key$i"; done
[ "$("$pm" get "$dev" key2)" = value2 ] && ok "get" || bad "get key2"
"$pm" del "$dev" key3 || bad "del"
[ "$("$pm" list "$dev" | tr '\n' ' ')" = "key1 key2 " ] && ok "list" || bad "list: $("$pm" list "$dev" | tr '\n' ' ')"
[ "$("$pm" list --reverse "$dev" | tr '\n' ' ')" = "key2 key1 " ] && ok "list --reverse" || bad "list --reverse"
"$pm" check "$dev" && ok "check" || bad "check"
"$pm" dump "$dev" | grep -q "^ 6b657931$" && ok "dump" || bad "dump"
stats=$("$pm" stats "$dev" --json) || bad "stats"
echo "dax-measure: devdax align=$align pmstore stats $(echo "$stats" | jq -c .)"
echo "$stats" | jq -e --argjson align "$align" '.device_dax_align == $align and .dax == true and
    .granularity == "cache_line" and .keys == 2 and .pmd_mapped_share == 1' >/dev/null \
  && ok "stats: device_dax_align $align, DAX, cache_line, huge entries only" || bad "stats: $stats"

"$pm" create --force "$dev" >/dev/null && [ "$("$pm" list "$dev" | wc -l)" = 0 ] && ok "create --force: an empty pool" \
  || bad "create --force"
"$pm" destroy "$dev" >/dev/null && ok "destroy" || bad "destroy"
"$pm" get "$dev" key1 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "holds no pool" "$out/err" && ok "destroyed: no pool" || bad "after destroy: exit $rc"

export PMSTORE_TEST_DEVICE=$dev
"$model_test" --gtest_filter='*DeviceDax*' && ok "model test on $dev" || bad "model test on $dev"
PMSTORE_KILL_CYCLES=${PMSTORE_KILL_CYCLES:-60} "$kill_test" --gtest_filter='*DeviceDax*' \
  && ok "kill tests on $dev" || bad "kill tests on $dev"
"$device_test" --gtest_filter='*DeviceDax*' && ok "a full device on $dev" || bad "full device test on $dev"
rm -rf "$out"
exit "$failed"
