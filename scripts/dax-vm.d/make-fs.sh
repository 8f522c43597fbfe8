# shellcheck shell=bash
# Sourced inside the guest (guest.sh, remake-fs): makes the file system on
# the pmem with 2 MiB alignment (or the options given) and mounts it -o dax.
#
#   make_fs FS DEV MNT OPTS KEEP [dax|nodax]
#
# FS is ext4 or xfs; OPTS replaces the alignment options when non-empty;
# KEEP=1 mounts the file system already on DEV (an nvdimm's, kept across
# boots) instead of making one; nodax mounts it -o dax=never, so its files
# live in the page cache as on any disk (scripts/regress.d/backings.sh). Logs the mkfs options it used; returns
# non-zero with a message when mkfs, mount or xfs_io fails.

default_mkfs_opts() {
  case "$1" in
    ext4) echo "-b 4096 -O bigalloc -C 2M -E nodiscard" ;;  # 2 MiB clusters: every allocation aligned
    xfs) echo "-d su=2m,sw=1 -m reflink=0" ;;               # 2 MiB stripe unit; reflink off for DAX
  esac
}

make_fs() {
  local fs=$1 dev=$2 mnt=$3 opts=${4:-} keep=${5:-0} dax=-odax
  [ "${6:-dax}" = dax ] || dax=-odax=never
  [ -n "$opts" ] || opts=$(default_mkfs_opts "$fs")
  case "$fs" in
    ext4)
      if [ "$keep" != 1 ]; then
        # shellcheck disable=SC2086  # the options are words
        mkfs.ext4 -q -F $opts "$dev" || { echo "mkfs.ext4 $opts failed"; return 1; }
      fi
      mount -t ext4 "$dax" "$dev" "$mnt" || { echo "mount $dax failed"; return 1; }
      ;;
    xfs)
      if [ "$keep" != 1 ]; then
        # shellcheck disable=SC2086
        mkfs.xfs -q -f -K $opts "$dev" || { echo "mkfs.xfs $opts failed"; return 1; }
      fi
      mount -t xfs "$dax" "$dev" "$mnt" || { echo "mount $dax failed"; return 1; }
      # New files inherit it; their extents are 2 MiB aligned only with su=2m (measured).
      xfs_io -c 'extsize 2m' "$mnt" || { echo "xfs_io extsize failed"; return 1; }
      ;;
    *) echo "unknown file system $fs"; return 1 ;;
  esac
  chmod 1777 "$mnt"
  [ "$keep" = 1 ] || echo "dax-vm[guest]: mkfs.$fs options: $opts (mounted $dax)"
}
