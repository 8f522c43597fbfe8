# shellcheck shell=bash
# Sourced by scripts/dax-vm for --kernel-package NAME: fetches a Debian
# kernel package without installing it, and sets `kernel`, `moddir` and
# `config` to its vmlinuz, its modules root and its config.
#
# NAME is any package `scripts/kernels list` shows (its "also" names too),
# or a glob ('linux-image-6.12.*+deb12-amd64': the newest match). It comes
# from whichever suite has it, the newest preferred, through the private apt
# state of scripts/kernels.d/apt.sh (the system's apt state is not touched).
# Three layouts are unpacked alike (dpkg -x of every part into one tree):
#   bookworm's: /boot/vmlinuz-KVER, /boot/config-KVER, /lib/modules/KVER;
#   trixie's: /boot/vmlinuz-KVER and config-KVER, /usr/lib/modules/KVER with
#     .ko.xz modules (dax-vm's initramfs builder decompresses them);
#   7.x's split: linux-image-VER is empty and depends on linux-binary-VER
#     (/usr/lib/modules/VER/vmlinuz), linux-modules-VER and linux-base-VER
#     (/usr/lib/modules/VER/config).
# depmod -b then runs on the root that holds lib/modules (ROOT or ROOT/usr),
# which becomes `moddir`. Cached: $CACHE/kernels/debs/ keeps the .debs,
# $CACHE/kernels/NAME/ the unpacked tree, so a second boot fetches nothing.
#
# A kernel that lacks what the guest needs (kernel_lacks below) is skipped
# with its reason. Needs skip() and die() from scripts/dax-vm. Exits 77 when
# the mirror cannot be reached, lacks a part of the package, or the kernel
# lacks an option; 2 when no suite has such a package.

# shellcheck source=../kernels.d/apt.sh
. "$ROOT/scripts/kernels.d/apt.sh"

# What the guest needs of a kernel: CONFIG option, the module it builds
# (- for a bool), and what it is for. Each must be =y, or =m with the module
# in the package.
KERNEL_NEEDS=(
  "VIRTIO_PCI virtio_pci the virtio PCI transport of the 9p share"
  "NET_9P_VIRTIO 9pnet_virtio 9p over virtio"
  "9P_FS 9p the host root shared over 9p"
  "LIBNVDIMM libnvdimm NVDIMM namespaces (ndctl)"
  "BLK_DEV_PMEM nd_pmem the /dev/pmem block device"
  "X86_PMEM_LEGACY nd_e820 the memmap= pmem"
  "ZONE_DEVICE - struct pages for pmem"
  "FS_DAX - mount -o dax"
  "DEV_DAX device_dax device DAX"
  "DEV_DAX_PMEM dax_pmem device DAX on pmem"
  "EXT4_FS ext4 --fs=ext4"
  "XFS_FS xfs --fs=xfs"
)

# The needs CONFIG (a kernel .config) does not meet, "CONFIG_X (why)" with
# ", " between; nothing when it meets them all. A module counts when
# MODBASE/lib/modules/KVER/modules.dep lists it (compressed or not).
kernel_lacks() {
  local config=$1 dep=$2/lib/modules/$3/modules.dep opt mod why value out="" needs=("${KERNEL_NEEDS[@]}")
  [ -z "${nvdimm:-}" ] || needs+=("ACPI_NFIT nfit the qemu nvdimm of --nvdimm")
  for need in "${needs[@]}"; do
    read -r opt mod why <<< "$need"
    [ "$mod" = - ] || why="$mod, $why"
    value=$(sed -n "s/^CONFIG_$opt=//p" "$config" | tail -n 1)
    case "$value" in
      y) continue ;;
      m) if [ "$mod" != - ] && grep -qE "(^|/)$mod\.ko(\.xz|\.zst|\.gz)?:" "$dep" 2>/dev/null; then continue; fi
         why="$why: =m but $mod.ko is not among its modules" ;;
      "") why="$why: not set" ;;
      *) why="$why: =$value" ;;
    esac
    out+="${out:+, }CONFIG_$opt ($why)"
  done
  echo "$out"
}

fetch_kernel_package() {
  local name=$1 tree debs parts rc=0 err pkg ver suite deb kver modbase vmlinuz cfg lacks t0
  tree=$CACHE/kernels/$name
  if [ ! -f "$tree/kernel.env" ]; then
    private_apt_setup
    err=$(mktemp)
    parts=$(DAX_VM_CACHE=$CACHE APT_DIR=$APT_DIR "$ROOT/scripts/kernels" parts "$name" 2>"$err") || rc=$?
    case "$rc" in
      0) rm -f "$err" ;;
      2) echo "dax-vm: --kernel-package: $(sed 's/^kernels: //' "$err")" >&2; rm -f "$err"; exit 2 ;;
      3) local why; why=$(sed 's/^kernels: //' "$err"); rm -f "$err"; skip "$why" ;;
      77) local why; why=$(sed 's/^kernels: SKIP: //' "$err"); rm -f "$err"; skip "--kernel-package: $why" ;;
      *) local why; why=$(cat "$err"); rm -f "$err"; die "--kernel-package: scripts/kernels parts $name failed ($rc): $why" ;;
    esac
    name=$(head -n 1 <<< "$parts" | cut -d' ' -f1)
    tree=$CACHE/kernels/$name
  fi
  if [ ! -f "$tree/kernel.env" ]; then
    debs=$CACHE/kernels/debs
    mkdir -p "$debs"
    rm -rf "$tree.new"
    mkdir -p "$tree.new/root"
    # One apt-get for all the missing parts (each call reads every suite's lists: 5 s).
    local want=() debfiles=()
    while read -r pkg ver suite _; do
      deb=$debs/${pkg}_${ver//:/%3a}_amd64.deb
      debfiles+=("$deb")
      [ -s "$deb" ] || want+=("$pkg=$ver")
    done <<< "$parts"
    if [ ${#want[@]} -gt 0 ]; then
      t0=$SECONDS
      (cd "$debs" && apt-get "${APT_OPTS[@]}" -qq download "${want[@]}" >"$APT_DIR/download.log" 2>&1) \
        || skip "--kernel-package: downloading ${want[*]} from $APT_MIRROR failed ($APT_DIR/download.log)"
      echo "dax-vm: fetched ${want[*]} ($(cd "$debs" && du -ch "${debfiles[@]##*/}" | tail -n 1 | cut -f1)," \
           "$(cut -d' ' -f3 <<< "$parts" | sort -u | paste -sd,)) in $((SECONDS - t0)) s"
    fi
    for deb in "${debfiles[@]}"; do
      [ -s "$deb" ] || die "--kernel-package: apt-get download left no $deb"
      dpkg -x "$deb" "$tree.new/root" || die "--kernel-package: dpkg -x $deb failed"
    done
    # The layout: modules under lib/modules (bookworm) or usr/lib/modules.
    kver="" modbase=""
    for d in "$tree.new/root/lib/modules/"*/kernel "$tree.new/root/usr/lib/modules/"*/kernel; do
      [ -d "$d" ] || continue
      kver=$(basename "$(dirname "$d")") modbase=${d%/lib/modules/*}
      break
    done
    [ -n "$kver" ] || die "--kernel-package: $name holds no lib/modules/KVER/kernel nor usr/lib/modules/KVER/kernel (not a kernel image package?)"
    vmlinuz="" cfg=""
    for f in "$tree.new/root/boot/vmlinuz-$kver" "$modbase/lib/modules/$kver/vmlinuz"; do [ -f "$f" ] && { vmlinuz=$f; break; }; done
    for f in "$tree.new/root/boot/config-$kver" "$modbase/lib/modules/$kver/config"; do [ -f "$f" ] && { cfg=$f; break; }; done
    [ -n "$vmlinuz" ] || die "--kernel-package: $name holds no boot/vmlinuz-$kver nor lib/modules/$kver/vmlinuz"
    [ -n "$cfg" ] || die "--kernel-package: $name holds no boot/config-$kver nor lib/modules/$kver/config"
    depmod -b "$modbase" "$kver" || die "--kernel-package: depmod -b $modbase $kver failed"
    # Paths relative to the tree, which is renamed next.
    printf 'kver=%s\nvmlinuz=%s\ncfg=%s\nmodbase=%s\n' "$kver" "${vmlinuz#"$tree.new"/}" "${cfg#"$tree.new"/}" \
      "${modbase#"$tree.new"/}" > "$tree.new/kernel.env"
    rm -rf "$tree"
    mv "$tree.new" "$tree"
  fi
  # shellcheck disable=SC1091  # written above
  . "$tree/kernel.env"
  lacks=$(kernel_lacks "$tree/$cfg" "$tree/$modbase" "$kver")
  [ -z "$lacks" ] || skip "$name: its kernel lacks $lacks"
  kernel=$tree/$vmlinuz
  moddir=$tree/$modbase
  [ -n "$config" ] || config=$tree/$cfg
  echo "dax-vm: kernel package $name: $kver"
}
