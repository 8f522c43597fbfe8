#!/bin/bash
# pmstore on a real device DAX device, inside scripts/dax-vm --devdax=2M|1G:
#   pmstore_on_devdax.sh PMSTORE STORE_MODEL_TEST KILL_TEST STORE_DESTROY_TEST
# The device is the pool: create formats it (no --size), refuses a device
# that holds a pool without --force, and maps it at the device's align
# (stats: device_dax_align, cache_line granularity, every resident page on
# a huge entry); put/get/list/del/dump/check work, read-only too (as a
# user who may only read the device); readers lists a holder;
# destroy erases it; copy
# fills it from a file pool, and a copy killed midway leaves no pool. Then
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

# A user who may only read the device reads the pool (a read-only open,
# mapped without write permission) and may not write it.
chmod 0644 "$dev"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
[ "$(nobody "$pm" get "$dev" key2 2>"$out/err")" = value2 ] && ok "get as a user who may only read the device" \
  || bad "get as nobody: $(cat "$out/err")"
nobody "$pm" check "$dev" >/dev/null 2>"$out/err" && ok "check as nobody" || bad "check as nobody: $(cat "$out/err")"
nobody "$pm" put "$dev" key9 value9 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "no permission to write" "$out/err" && ok "put as nobody refused: $(cat "$out/err")" \
  || bad "put as nobody: exit $rc, $(cat "$out/err")"
chmod 0600 "$dev"

# The reader table of a pool on the device: named for the device's number,
# it lists a process holding the pool (a load waiting on a FIFO) and is
# removed when that process closes it.
region=/dev/shm/pmstore-dev-$((16#$(stat -c %t "$dev"))).$((16#$(stat -c %T "$dev"))).lock
mkfifo "$out/fifo"
"$pm" load "$dev" --file "$out/fifo" >/dev/null 2>"$out/load-err" &
loader=$!
exec 3>"$out/fifo"
printf 'VERSION=3\nformat=print\ntype=btree\nHEADER=END\n' >&3
for _ in $(seq 300); do
  "$pm" readers "$dev" --json >"$out/readers" 2>&1 && jq -e '.readers | length == 1' "$out/readers" >/dev/null && break
  sleep 0.1
done
jq -e --argjson pid "$loader" '.readers[0] | .pid == $pid and .writable == true and .stale == false' \
    "$out/readers" >/dev/null && [ -e "$region" ] && ok "readers lists the device's holder, table $region" \
  || bad "readers beside a load: $(cat "$out/readers" "$out/load-err"), $(ls /dev/shm)"
printf ' key9\n value9\nDATA=END\n' >&3
exec 3>&-
wait "$loader" || bad "the held load: $(cat "$out/load-err")"
"$pm" readers "$dev" | grep -q "no process has the pool open" && [ ! -e "$region" ] \
  && ok "readers after the holder closed: none, the table removed" || bad "readers after the load: $(ls /dev/shm)"

"$pm" create --force "$dev" >/dev/null && [ "$("$pm" list "$dev" | wc -l)" = 0 ] && ok "create --force: an empty pool" \
  || bad "create --force"
"$pm" destroy "$dev" >/dev/null && ok "destroy" || bad "destroy"
"$pm" get "$dev" key1 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "holds no pool" "$out/err" && ok "destroyed: no pool" || bad "after destroy: exit $rc"

# copy onto the device: the copy equals its source, a device that holds a
# pool is refused, and a copy killed midway leaves no pool (the device's
# magic is written once the copy is durable), never part of one.
source_pool() {  # source_pool PATH KEYS: a file pool of KEYS keys with 900 B values
  { printf 'VERSION=3\nformat=print\ntype=btree\nHEADER=END\n'
    awk -v n="$2" 'BEGIN { v = sprintf("%0900d", 0); for (i = 1; i <= n; i++) printf " key%06d\n %s\n", i, v }'
    printf 'DATA=END\n'; } >"$out/in.txt"
  "$pm" load "$1" --file "$out/in.txt" --size=16M >/dev/null
}
source_pool "$out/small" 2000 || bad "load the small source"
"$pm" copy "$out/small" "$dev" >"$out/copy" 2>&1 && grep -q "on device DAX" "$out/copy" \
  && ok "copy onto the device: $(cat "$out/copy")" || bad "copy onto the device: $(cat "$out/copy")"
"$pm" dump "$out/small" | sed '1,/^HEADER=END$/d' >"$out/small.dump"  # the data lines
"$pm" dump "$dev" | sed '1,/^HEADER=END$/d' >"$out/dev.dump"
[ "$(grep -c '^ ' "$out/dev.dump")" = 4000 ] && cmp -s "$out/small.dump" "$out/dev.dump" \
  && ok "the device holds its source's 2000 entries" || bad "the device's entries differ from its source's"
"$pm" copy "$out/small" "$dev" 2>"$out/err"; rc=$?
[ "$rc" = 2 ] && grep -q "already holds a pool" "$out/err" && ok "copy onto a device that holds a pool refused" \
  || bad "copy onto a device holding a pool: exit $rc, $(cat "$out/err")"
"$pm" destroy "$dev" >/dev/null || bad "destroy before the killed copy"
source_pool "$out/big" 150000 || bad "load the big source"
"$pm" copy "$out/big" "$dev" 2>"$out/progress" >/dev/null &
copier=$!
for _ in $(seq 600); do grep -q "copied" "$out/progress" && break; sleep 0.1; done
if grep -q "copied" "$out/progress" && kill -9 "$copier" 2>/dev/null; then
  wait "$copier" 2>/dev/null
  at=$(tr '\r\n' '  ' <"$out/progress")
  if "$pm" get "$dev" key000001 >/dev/null 2>"$out/err"; then
    # The copy may have ended between the progress line and the kill: then
    # the pool must be whole.
    keys=$("$pm" stats "$dev" --json | jq .keys)
    [ "$keys" = 150000 ] && "$pm" check "$dev" >/dev/null && ok "a copy killed after it ended ($at) left it whole" \
      || bad "a copy killed at '$at' left a pool of $keys keys"
  else
    grep -q "holds no pool" "$out/err" && ok "a copy killed at '$at' left no pool" \
      || bad "after a copy killed at '$at': $(head -c 200 "$out/err")"
  fi
else
  wait "$copier"
  bad "the copy ended before it could be killed: make the source bigger"
fi
rm -f "$out/small" "$out/big" "$out/in.txt"
"$pm" destroy "$dev" >/dev/null 2>&1  # the tests below begin on a device that holds no pool

export PMSTORE_TEST_DEVICE=$dev
"$model_test" --gtest_filter='*DeviceDax*' && ok "model test on $dev" || bad "model test on $dev"
PMSTORE_KILL_CYCLES=${PMSTORE_KILL_CYCLES:-60} "$kill_test" --gtest_filter='*DeviceDax*' \
  && ok "kill tests on $dev" || bad "kill tests on $dev"
"$device_test" --gtest_filter='*DeviceDax*' && ok "a full device on $dev" || bad "full device test on $dev"
rm -rf "$out"
exit "$failed"
