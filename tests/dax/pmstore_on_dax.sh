#!/bin/bash
# pmstore on a real fsdax mount, inside scripts/dax-vm:
#   pmstore_on_dax.sh PMSTORE [STORE_TEST...]
# A pool on $DAX_DIR maps with MAP_SYNC at cache_line granularity without
# PMEM2_FORCE_GRANULARITY; put/get/del/list/check work; a pool on the VM's
# 9p mount (a network file system) is refused. Each STORE_TEST
# gtest binary then runs with /dev/shm (its scratch parent) bind-mounted
# from a directory on the DAX mount (the guest's mounts are its own).
set -u
pm=$1; shift
: "${DAX_DIR:?run through scripts/dax-vm}"
unset PMEM2_FORCE_GRANULARITY
dir=$DAX_DIR/pmstore
mkdir -p "$dir"
pool=$dir/pool
failed=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; failed=1; }

"$pm" create "$pool" --size=16M || bad "create"
for i in 1 2 3; do "$pm" put "$pool" "key$i" "value$i" || bad "put key$i"; done
[ "$("$pm" get "$pool" key2)" = value2 ] && ok "get" || bad "get key2"
"$pm" del "$pool" key3 || bad "del"
[ "$("$pm" list "$pool" | tr '\n' ' ')" = "key1 key2 " ] && ok "list" || bad "list: $("$pm" list "$pool" | tr '\n' ' ')"
"$pm" check "$pool" && ok "check" || bad "check"
stats=$("$pm" stats "$pool" --json) || bad "stats"
echo "dax-measure: fs=${DAX_VM_FS:-} pmstore stats $(echo "$stats" | jq -c .)"
echo "$stats" | jq -e '.dax == true and .map_sync == true and .granularity == "cache_line"' >/dev/null \
  && ok "DAX, MAP_SYNC, cache_line granularity" || bad "stats: want dax, map_sync, cache_line"

# A real network file system: the VM's writable 9p mount (its run
# directory). A pool there is refused, naming 9p, and nothing is left.
net_dir=$(awk '$3 == "9p" && $4 ~ /(^|,)rw(,|$)/ { print $2; exit }' /proc/mounts)
if [ -n "$net_dir" ]; then
  err=$("$pm" create "$net_dir/net.pool" --size=16M 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [[ $err == *"9p, a network file system"* ]] && ! ls "$net_dir" | grep -q '^net\.pool'; then
    ok "a pool on 9p ($net_dir) refused: $err"
  else
    bad "create on 9p ($net_dir): rc=$rc: $err; left: $(ls "$net_dir" | grep '^net\.pool')"
  fi
else
  bad "no writable 9p mount in the VM to refuse a pool on"
fi

if [ $# -gt 0 ]; then
  mkdir -p "$dir/shm" /dev/shm
  if mount --bind "$dir/shm" /dev/shm; then
    for t in "$@"; do
      "$t" && ok "$(basename "$t") on DAX" || bad "$(basename "$t") on DAX"
    done
    umount /dev/shm
  else
    bad "bind-mount $dir/shm on /dev/shm"
  fi
fi
rm -rf "$dir"
exit "$failed"
