#!/bin/bash
# shellcheck disable=SC2153  # the DAXVM_* variables come from config.sh
# Second stage inside the guest, chrooted into the host's root (read-only):
# makes the emulated pmem an fsdax namespace, makes and mounts the file
# system with DAX (or, with DAXVM_DEVDAX, makes it a device DAX namespace
# of that align and no file system), runs the command in the project root,
# and leaves its exit status in the run directory for scripts/dax-vm.
set -u
out=/run/dax-vm/out
# shellcheck source=/dev/null
. "$out/config.sh"   # DAXVM_FS, DAXVM_NUMA, DAXVM_ROOT, DAXVM_MKFS_OPTS, DAXVM_CMD (array)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
log() { echo "dax-vm[guest]: $*"; }
fail() { log "$*"; echo 125 > "$out/rc"; exit 125; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

log "up at $(uptime_s) s, kernel $(uname -r)"

# The booted kernel's config where faultbench looks for it, when the
# kernel is not the host's (scripts/dax-vm --config, --kernel-package).
if [ -s "$out/kernel-config" ]; then
  mount -t tmpfs -o mode=755 tmpfs /boot && cp "$out/kernel-config" "/boot/config-$(uname -r)" \
    || log "cannot show the kernel config at /boot/config-$(uname -r)"
fi

# Device DAX: the namespace becomes /dev/daxX.Y with the asked align; the
# command finds it in DAX_DEV. Nothing to make or mount.
# On an nvdimm (--nvdimm) a device DAX namespace of that align is kept, with
# what it holds, from the boot before.
setup_devdax() {
  local align_bytes=$((${DAXVM_DEVDAX%[MG]} << 20))
  [ "${DAXVM_DEVDAX: -1}" = G ] && align_bytes=$((${DAXVM_DEVDAX%G} << 30))
  if [ "${DAXVM_NVDIMM:-0}" = 1 ] && ndctl list -n namespace0.0 > "$out/ndctl.json" 2>/dev/null \
      && grep -Eq '"mode": ?"devdax"' "$out/ndctl.json" && grep -Eq "\"align\": ?$align_bytes([^0-9]|\$)" "$out/ndctl.json"; then
    log "nvdimm: namespace0.0 is devdax (align $DAXVM_DEVDAX) already"
  else
    ndctl create-namespace -f -e namespace0.0 -m devdax -M mem -a "$DAXVM_DEVDAX" > "$out/ndctl.json" 2>&1 \
      || { cat "$out/ndctl.json"; fail "ndctl create-namespace -m devdax -a $DAXVM_DEVDAX failed"; }
  fi
  local chardev sys
  chardev=$(sed -n 's/.*"chardev": *"\([^"]*\)".*/\1/p' "$out/ndctl.json" | head -1)
  [ -n "$chardev" ] || { cat "$out/ndctl.json"; fail "ndctl named no chardev"; }
  for _ in $(seq 50); do [ -c "/dev/$chardev" ] && break; sleep 0.2; done
  [ -c "/dev/$chardev" ] || fail "/dev/$chardev did not appear (is device_dax loaded?)"
  sys=/sys/bus/dax/devices/$chardev
  log "device DAX /dev/$chardev: size $(cat "$sys/size") align $(cat "$sys/align" 2>/dev/null || echo ?)" \
      "NUMA node $(cat "$sys/numa_node" 2>/dev/null || echo ?); ready at $(uptime_s) s"
  export DAX_DEV=/dev/$chardev DAX_VM_DEVDAX=$DAXVM_DEVDAX
}

# fsdax: /dev/pmem0 with the file system made (make-fs.sh) and mounted -o
# dax; DAX_VM_DEV names the device for scripts/dax-vm.d/remake-fs.
setup_fsdax() {
  local dev=/dev/pmem0 keep=0 why
  if [ "${DAXVM_NVDIMM:-0}" = 1 ] && ndctl list -n namespace0.0 2>/dev/null | grep -Eq '"mode": ?"fsdax"'; then
    log "nvdimm: namespace0.0 is fsdax already"
  else
    ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem > "$out/ndctl.json" 2>&1 \
      || { cat "$out/ndctl.json"; fail "ndctl create-namespace failed"; }
  fi
  for _ in $(seq 50); do [ -b "$dev" ] && break; sleep 0.2; done
  [ -b "$dev" ] || fail "$dev did not appear"
  if [ "${DAXVM_NVDIMM:-0}" = 1 ] && [ "$(blkid -o value -s TYPE "$dev" 2>/dev/null)" = "$DAXVM_FS" ]; then
    log "nvdimm: keeping the $DAXVM_FS file system on $dev"
    keep=1
  fi
  mnt=/run/dax
  # shellcheck source=make-fs.sh
  . "$DAXVM_ROOT/scripts/dax-vm.d/make-fs.sh"
  why=$(make_fs "$DAXVM_FS" "$dev" "$mnt" "${DAXVM_MKFS_OPTS:-}" "$keep") || fail "$why"
  [ -z "$why" ] || echo "$why"
  log "$DAXVM_FS on $dev (NUMA node $(cat /sys/block/pmem0/device/numa_node 2>/dev/null || echo ?)) mounted -o dax at $mnt; ready at $(uptime_s) s"
  export DAX_DIR=$mnt DAX_VM_FS=$DAXVM_FS DAX_VM_DEV=$dev
}

mnt=""
if [ -n "${DAXVM_DEVDAX:-}" ]; then setup_devdax; else setup_fsdax; fi
uptime_s > "$out/ready_s"
export DAX_VM=1 DAX_VM_NUMA=$DAXVM_NUMA DAX_VM_OUT=$out
cd "$DAXVM_ROOT" || fail "no project root $DAXVM_ROOT"
echo "=== dax-vm: begin: ${DAXVM_CMD[*]}"
"${DAXVM_CMD[@]}"
rc=$?
echo "=== dax-vm: end: exit status $rc"
cd /
[ -z "$mnt" ] || umount "$mnt" 2>/dev/null
echo "$rc" > "$out/rc"
exit "$rc"
