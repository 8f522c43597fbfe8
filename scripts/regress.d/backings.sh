# shellcheck shell=bash
# The backings a kernel study runs on, named once for scripts/regress,
# scripts/kernel-matrix and the guest (scripts/regress.d/guest-study).
# Sourced; defines functions only.
#
#   fsdax-ext4 fsdax-xfs   the pmem namespace as fsdax, the file system made
#                          with 2 MiB alignment and mounted -o dax
#   devdax-2M devdax-1G    the namespace as device DAX of that align
#   pagecache-ext4 pagecache-xfs
#                          the same file systems on /dev/pmem0 mounted
#                          -o dax=never: the page cache, as on any disk
#   tmpfs-huge tmpfs-within-size
#                          tmpfs mounted huge=always / huge=within_size
#   hugetlbfs-2M           hugetlbfs pagesize=2M, its pages reserved first
#   anon-private anon-shared
#                          anonymous memory, no file: MAP_PRIVATE (faultbench
#                          --anon) and shmem (--anon=shared), mapped in 4 KiB
#                          pages, 64 KiB folios (multi-size THP, where the
#                          kernel has the knob) and 2 MiB THPs
#
# Every backing but devdax-1G runs in one boot of the default VM (1 GiB of
# memmap= pmem): the file systems are made afresh for each, and devdax-2M
# turns the namespace into device DAX, so it runs after the file systems.
# devdax-1G needs the pmem laid out for 1 GiB alignment (dax-vm --devdax=1G):
# a boot of its own.

ALL_BACKINGS=(fsdax-ext4 fsdax-xfs pagecache-ext4 pagecache-xfs tmpfs-huge tmpfs-within-size hugetlbfs-2M
              anon-private anon-shared devdax-2M devdax-1G)

is_backing() {  # NAME
  local b
  for b in "${ALL_BACKINGS[@]}"; do [ "$b" = "$1" ] && return 0; done
  return 1
}

# The boot a backing needs: its scripts/dax-vm flags, one a line. Backings
# with the same flags share a boot.
backing_boot_flags() {  # NAME
  case "$1" in
    devdax-1G) echo --devdax=1G ;;
    *) echo --fs=ext4 ;;
  esac
}

# The mapping modes studied on a backing: those it can give. hugetlbfs and
# device DAX map only their own page size; anonymous memory also takes the
# multi-size THP folio sizes, of which the study takes 64K (arm64's
# contiguous-PTE size).
backing_modes() {  # NAME
  case "$1" in
    hugetlbfs-2M|devdax-2M) echo pmd ;;
    devdax-1G) echo pud ;;
    anon-*) echo pmd 64K pte ;;
    *) echo pmd pte ;;
  esac
}

# Splits a comma-separated list of backings into BACKINGS (in the order of
# ALL_BACKINGS, duplicates dropped); an unknown name is an error naming the
# known ones.
parse_backings() {  # LIST
  local want=",$1," b
  local IFS=,
  for b in $1; do
    is_backing "$b" || { echo "unknown backing '$b' (known: ${ALL_BACKINGS[*]})"; return 1; }
  done
  BACKINGS=()
  for b in "${ALL_BACKINGS[@]}"; do
    case "$want" in *",$b,"*) BACKINGS+=("$b") ;; esac
  done
}
