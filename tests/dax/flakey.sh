#!/bin/bash
# Devices and file systems that fail under a pool, inside scripts/dax-vm
# (page granularity: ext4 without DAX on a scsi_debug disk, through
# device-mapper):
#
#   flakey.sh WRITER PMSTORE
#
# 1. The device starts failing writes (dm-flakey error_writes) while
#    WRITER (flakey_writer) puts keys: the put that needed the failed
#    writeback fails naming the pool and the call, the store is poisoned
#    (writes refused, reads go on), `pmstore put` exits 2 with one line and
#    no signal. Then: unmount (the pages whose writeback failed leave the
#    page cache), restore the linear table, mount again: every acknowledged
#    key is there with its value, the failed put whole or absent, `pmstore
#    check` clean, a new put works.
# 2. The file system goes read-only under the pool (errors=remount-ro, an
#    ext4 error raised through sysfs): the same, and after a remount the
#    same checks.
# 3. The file system fills while the pool grows: ResourceExhausted, the
#    store goes on (no poison), the pool clean.
#
# Prints "flakey-measure: ..." lines (what each failure looked like).
# Exit status: 0 passed; 1 a check failed; 77 the guest lacks the modules.
set -u
writer=$1 pm=$2
: "${DAX_VM:?run through scripts/dax-vm}"
work=$(mktemp -d)
mnt=/run/flakey
mkdir -p "$mnt"
failed=0
ok() { echo "flakey: ok: $1"; }
bad() { echo "flakey: FAIL: $1"; failed=1; }

modprobe scsi_debug dev_size_mb=256 2>/dev/null && modprobe sd_mod 2>/dev/null && modprobe dm_flakey 2>/dev/null \
  || { echo "flakey: SKIP: no scsi_debug, sd_mod or dm_flakey module for $(uname -r)"; exit 77; }
disk=""
for _ in $(seq 50); do
  disk=$(ls /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/ 2>/dev/null | head -1)
  [ -n "$disk" ] && [ -b "/dev/$disk" ] && break
  sleep 0.2
done
[ -b "/dev/$disk" ] || { echo "flakey: FAIL: the scsi_debug disk did not appear"; exit 1; }
echo "flakey: scsi_debug disk /dev/$disk, $(($(blockdev --getsz "/dev/$disk") / 2048)) MiB"

linear() { echo "0 $1 linear /dev/$disk $2"; }                      # SECTORS START
failing() { echo "0 $1 flakey /dev/$disk $2 0 3600 1 error_writes"; }  # down all the time, reads pass
retable() { dmsetup suspend --nolockfs "$1" && dmsetup load "$1" --table "$2" && dmsetup resume "$1"; }
die() { echo "flakey: FAIL: $1"; exit 1; }
# A device-mapper device with ext4 mounted at $mnt (no udev in the guest:
# dmsetup mknodes makes /dev/mapper/NAME).
make_fs() {  # NAME TABLE MOUNT_OPTIONS
  dmsetup create "$1" --table "$2" && dmsetup mknodes "$1" && [ -b "/dev/mapper/$1" ] || die "dmsetup create $1"
  mkfs.ext4 -q -F -E nodiscard "/dev/mapper/$1" || die "mkfs.ext4 on $1"
  mount -o "$3" "/dev/mapper/$1" "$mnt" || die "mount $1"
  [ "$(findmnt -n -o SOURCE "$mnt")" = "/dev/mapper/$1" ] || die "$mnt is not /dev/mapper/$1"
}
wait_for() {  # FILE SECONDS
  for _ in $(seq $(($2 * 10))); do [ -e "$1" ] && return 0; sleep 0.1; done
  return 1
}
# One line on stderr naming POOL and the call, exit 2: what the CLI owes a
# failing device.
cli_fails_cleanly() {  # WHAT POOL CALL_REGEX -- command...
  local what=$1 pool=$2 call=$3
  shift 4
  "$@" >"$work/cli.out" 2>"$work/cli.err"
  local rc=$?
  echo "flakey-measure: $what: exit $rc: $(cat "$work/cli.err")"
  if [ "$rc" = 2 ] && [ "$(wc -l <"$work/cli.err")" = 1 ] && grep -Eq "^pmstore: ($call)\($pool" "$work/cli.err"; then
    ok "$what: exit 2, one line naming the pool and the call"
  else
    bad "$what: exit $rc (over 128: a signal), stderr '$(cat "$work/cli.err")'"
  fi
}
# After the failure: unmount, mend the device, mount; the pool must hold
# every acknowledged write.
remount_and_verify() {  # NAME TABLE POOL ACKS
  local name=$1 table=$2 pool=$3 acks=$4
  umount "$mnt" || bad "$name: umount"
  retable "$name" "$table" || bad "$name: restore the table"
  if ! mount "/dev/mapper/$name" "$mnt" 2>"$work/mount.err"; then
    echo "flakey-measure: $name: mount failed ($(cat "$work/mount.err")); e2fsck -fy first"
    e2fsck -fy "/dev/mapper/$name" >/dev/null 2>&1
    mount "/dev/mapper/$name" "$mnt" || { bad "$name: mount after e2fsck"; return; }
  fi
  "$writer" verify "$pool" "$acks" >"$work/verify.out" 2>&1 && ok "$name: every acknowledged put is back" \
    || bad "$name: verify: $(cat "$work/verify.out")"
  echo "flakey-measure: $name: $(grep -h '^flakey-result:' "$work/verify.out")"
  "$pm" check "$pool" >"$work/check.out" 2>&1 && ok "$name: check clean" || bad "$name: check: $(cat "$work/check.out")"
  if "$pm" put "$pool" after-the-fix new-value && [ "$("$pm" get "$pool" after-the-fix)" = new-value ]; then
    ok "$name: a new put after the reopen"
  else
    bad "$name: a new put after the reopen"
  fi
}
# WRITER puts until READY, waits for the failure, then goes on until a put
# fails; its own checks (poison) decide its exit status.
start_writer() {  # POOL TAG
  "$writer" write "$1" "$work/$2.acks" "$work/$2.ready" "$work/$2.go" >"$work/$2.out" 2>&1 &
  writer_pid=$!
  wait_for "$work/$2.ready" 120 || die "$2: the writer never got ready: $(cat "$work/$2.out")"
}
finish_writer() {  # TAG
  touch "$work/$1.go"
  wait "$writer_pid"
  local rc=$?
  cat "$work/$1.out"
  echo "flakey-measure: $1: writer exit $rc, $(wc -l <"$work/$1.acks") puts acknowledged, $(grep -h '^flakey: failed put' "$work/$1.out")"
  [ "$rc" = 0 ] && ok "$1: the failing put named the pool and the call, and the store is poisoned" \
    || bad "$1: writer exit $rc (over 128: a signal)"
}

# --- 1. the device fails writes ----------------------------------------------
make_fs pmflakey "$(linear 262144 0)" errors=continue
pool=$mnt/pool
start_writer "$pool" flakey
retable pmflakey "$(failing 262144 0)" || die "switch pmflakey to error_writes"
finish_writer flakey
cli_fails_cleanly "pmstore put on the failing device" "$pool" "msync|fdatasync|fallocate|open" -- \
  "$pm" put "$pool" cli-key cli-value
echo "flakey-measure: kernel: $(dmesg | grep -E 'EXT4-fs|Buffer I/O|I/O error' | tail -3 | tr '\n' '|')"
remount_and_verify pmflakey "$(linear 262144 0)" "$pool" "$work/flakey.acks"
umount "$mnt"
dmsetup remove pmflakey && dmsetup mknodes

# --- 2. the file system goes read-only ----------------------------------------
make_fs pmro "$(linear 131072 262144)" errors=remount-ro
pool=$mnt/pool
start_writer "$pool" readonly
dm=$(dmsetup info -c --noheadings -o blkdevname pmro)
echo "pmstore test: the file system goes read-only" >"/sys/fs/ext4/$dm/trigger_fs_error" \
  || bad "trigger an ext4 error on $dm"
# ext4 turns read-only in its own way (6.1 marks the file system, /proc/mounts
# may still say rw): what counts is that it refuses writes.
if touch "$mnt/probe" 2>"$work/touch.err"; then
  bad "readonly: the file system still takes writes"
else
  ok "readonly: the file system refuses writes ($(cat "$work/touch.err"))"
fi
echo "flakey-measure: readonly: $(grep " $mnt " /proc/mounts)"
finish_writer readonly
cli_fails_cleanly "pmstore put on the read-only file system" "$pool" "msync|fdatasync|fallocate|open" -- \
  "$pm" put "$pool" cli-key cli-value
remount_and_verify pmro "$(linear 131072 262144)" "$pool" "$work/readonly.acks"
umount "$mnt"
dmsetup remove pmro && dmsetup mknodes

# --- 3. the file system fills while the pool grows ----------------------------
make_fs pmfull "$(linear 65536 393216)" defaults
"$writer" fill "$mnt/pool" >"$work/fill.out" 2>&1 && ok "full: ResourceExhausted, and the store went on" \
  || bad "full: $(cat "$work/fill.out")"
echo "flakey-measure: full: $(grep -h '^flakey: full' "$work/fill.out")"
"$pm" check "$mnt/pool" >/dev/null 2>&1 && ok "full: check clean" || bad "full: check"
umount "$mnt"
dmsetup remove pmfull && dmsetup mknodes

rm -rf "$work"
[ "$failed" = 0 ] && echo "flakey: passed" || echo "flakey: FAILED"
exit "$failed"
