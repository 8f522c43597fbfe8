# shellcheck shell=bash
# Sourced by scripts/dax-vm for --kernel-package NAME: fetches a Debian
# kernel package without installing it, and sets `kernel`, `moddir` and
# `config` to its vmlinuz, its modules tree and its config.
#
# The package comes from the Debian mirror the system's apt sources name,
# through a private sources list and lists directory under $CACHE/apt (the
# system's apt state is never touched): the release's own suite and its
# -backports suite, from backports when the name is there. NAME may be a
# glob ('linux-image-6.12.*+deb12-amd64'): the newest match is taken.
# Cached: $CACHE/kernels/debs/ keeps the .deb, $CACHE/kernels/NAME/ the
# unpacked tree (dpkg -x, then depmod -b), so a second boot fetches nothing.
#
# Needs skip() and die() from scripts/dax-vm. Exits 77 when the mirror
# cannot be reached (the tests skip), 2 when the mirror has no such package.

# The URI of the release's main archive in the system's apt sources
# ("http://deb.debian.org/debian"), as apt itself reads them (one-line and
# deb822 formats alike).
debian_mirror() {
  local codename=$1
  apt-cache policy 2>/dev/null | awk -v suite="$codename/main" '$3 == suite && $2 ~ /^[a-z+]+:/ { print $2; exit }'
}

# The private apt configuration: the mirror's suite and its backports.
private_apt_setup() {
  local codename mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "--kernel-package: /etc/os-release names no release codename"
  mirror=$(debian_mirror "$codename")
  [ -n "$mirror" ] || skip "--kernel-package: the system's apt sources name no Debian mirror for $codename"
  [ -r "$keyring" ] && signed="[signed-by=$keyring] "
  APT_DIR=$CACHE/apt
  mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
  printf 'deb %s%s %s main\ndeb %s%s %s-backports main\n' "$signed" "$mirror" "$codename" "$signed" "$mirror" "$codename" \
    > "$APT_DIR/sources.list.new"
  cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list" || rm -f "$APT_DIR/lists/"*Packages* "$APT_DIR/lists/"*Release*
  mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
  APT_OPTS=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$APT_DIR/lists"
            -o "Dir::Cache=$APT_DIR/cache" -o APT::Sandbox::User=root -o Acquire::Retries=2)
  APT_CODENAME=$codename APT_MIRROR=$mirror
  # The lists are refreshed once a day.
  if [ -z "$(find "$APT_DIR/lists" -maxdepth 1 -name '*backports*Packages*' -mmin -1440 2>/dev/null)" ]; then
    apt-get "${APT_OPTS[@]}" -qq update >"$APT_DIR/update.log" 2>&1 \
      || skip "--kernel-package: the Debian mirror $mirror cannot be reached (apt-get update failed; $APT_DIR/update.log)"
  fi
}

# The package NAME stands for: itself, or the newest package a glob matches.
resolve_package_name() {
  local name=$1 found
  case "$name" in
    *[\*\?\[]*)
      found=$(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- 2>/dev/null | while read -r p; do
                # shellcheck disable=SC2254  # the glob is the point
                case "$p" in $name) echo "$p" ;; esac
              done | sort -V | tail -n 1)
      [ -n "$found" ] || { echo "dax-vm: --kernel-package: no package at $APT_MIRROR matches '$name'" >&2; exit 2; }
      echo "$found" ;;
    *) echo "$name" ;;
  esac
}

fetch_kernel_package() {
  local name=$1 tree debs deb kver target
  tree=$CACHE/kernels/$name
  if [ ! -f "$tree/.ready" ]; then
    private_apt_setup
    name=$(resolve_package_name "$name") || exit 2
    tree=$CACHE/kernels/$name
  fi
  if [ ! -f "$tree/.ready" ]; then
    apt-cache "${APT_OPTS[@]}" show "$name" >/dev/null 2>&1 || {
      echo "dax-vm: --kernel-package: $APT_MIRROR has no package '$name' in $APT_CODENAME or $APT_CODENAME-backports" \
           "(list them: apt-cache search --names-only '^linux-image-')" >&2
      exit 2
    }
    target=$name
    if apt-cache "${APT_OPTS[@]}" madison "$name" 2>/dev/null | grep -q -- "$APT_CODENAME-backports/"; then
      target=$name/$APT_CODENAME-backports
    fi
    debs=$CACHE/kernels/debs
    mkdir -p "$debs"
    deb=$(ls -1 "$debs/${name}_"*.deb 2>/dev/null | tail -n 1 || true)
    if [ -z "$deb" ]; then
      local t0=$SECONDS
      (cd "$debs" && apt-get "${APT_OPTS[@]}" -qq download "$target" >"$APT_DIR/download.log" 2>&1) \
        || skip "--kernel-package: downloading $target from $APT_MIRROR failed ($APT_DIR/download.log)"
      deb=$(ls -1 "$debs/${name}_"*.deb | tail -n 1)
      echo "dax-vm: fetched $(basename "$deb") ($(du -h "$deb" | cut -f1)) from $APT_MIRROR ($target) in $((SECONDS - t0)) s"
    fi
    rm -rf "$tree.new"
    mkdir -p "$tree.new"
    dpkg -x "$deb" "$tree.new/root" || die "--kernel-package: dpkg -x $deb failed"
    kver=$(ls -1 "$tree.new/root/lib/modules" 2>/dev/null | head -n 1)
    [ -n "$kver" ] && [ -f "$tree.new/root/boot/vmlinuz-$kver" ] \
      || die "--kernel-package: $name holds no /boot/vmlinuz-KVER with /lib/modules/KVER (not a kernel image package?)"
    depmod -b "$tree.new/root" "$kver" || die "--kernel-package: depmod -b $tree.new/root $kver failed"
    echo "$kver" > "$tree.new/kver"
    touch "$tree.new/.ready"
    rm -rf "$tree"
    mv "$tree.new" "$tree"
  fi
  kver=$(cat "$tree/kver")
  kernel=$tree/root/boot/vmlinuz-$kver
  moddir=$tree/root
  [ -n "$config" ] || config=$tree/root/boot/config-$kver
  echo "dax-vm: kernel package $name: $kver"
}
