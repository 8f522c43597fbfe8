# shellcheck shell=bash
# Sourced by scripts/kernels and scripts/dax-vm.d/kernel-package.sh: a
# private apt state over every Debian suite that ships a kernel this
# project boots, so that a package can be listed and downloaded without
# installing it and without touching the system's apt state (its sources,
# lists and caches stay as they are).
#
# The suites, oldest first (the order "newer suite" means everywhere):
KERNEL_SUITES=(bookworm bookworm-security bookworm-backports trixie trixie-backports sid)
# They come from the mirrors the system's apt sources name: the main
# archive for all but bookworm-security, which comes from debian-security.
# Only amd64 is fetched. The state lives under $APT_DIR (default
# $CACHE/apt); its lists are refreshed once a day (APT_LISTS_MAX_AGE_MIN).
#
# The caller defines skip() (exit 77: the mirror cannot be reached, the
# tests skip) and die() (anything else).

# The URI that serves SUITE/main in the system's apt sources, as apt itself
# reads them (one-line and deb822 formats alike): "http://deb.debian.org/debian".
debian_mirror() {
  local suite=$1
  apt-cache policy 2>/dev/null | awk -v suite="$suite/main" '$3 == suite && $2 ~ /^[a-z+]+:/ { print $2; exit }'
}

# The suite's rank in KERNEL_SUITES (0 = oldest); 99 when it is not one.
suite_rank() {
  local i
  for i in "${!KERNEL_SUITES[@]}"; do [ "${KERNEL_SUITES[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo 99
}

# Sets APT_DIR, APT_OPTS (the options every apt-get call here takes),
# APT_MIRROR and APT_SECURITY_MIRROR, and refreshes the lists when one is
# missing or more than a day old. Exits through skip() when the mirror
# cannot be reached.
private_apt_setup() {
  APT_DIR=${APT_DIR:-$CACHE/apt}
  mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/sources.list.d"
  APT_DIR=$(cd "$APT_DIR" && pwd)   # apt reads a relative Dir:: under /etc/apt
  APT_OPTS=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o "Dir::Etc::sourceparts=$APT_DIR/sources.list.d"
            -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "Dir::State::status=/dev/null"
            -o APT::Sandbox::User=root -o Acquire::Retries=2 -o Acquire::Languages=none -o Acquire::GzipIndexes=false
            -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
            -o Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false)
  # Fresh lists of every suite: nothing to do (the system's sources are read
  # again, at 2 s an apt-cache policy, when the lists are refreshed).
  if [ -f "$APT_DIR/sources.list" ] && [ "$(apt_packages_files | wc -l)" -eq "${#KERNEL_SUITES[@]}" ] &&
     [ -z "$(find "$APT_DIR/lists" -maxdepth 1 -name '*_Packages' -mmin "+${APT_LISTS_MAX_AGE_MIN:-1440}" 2>/dev/null)" ]; then
    APT_MIRROR=$(awk '$4 == "bookworm" { print $3 }' "$APT_DIR/sources.list")
    APT_SECURITY_MIRROR=$(awk '$4 == "bookworm-security" { print $3 }' "$APT_DIR/sources.list")
    return 0
  fi
  local codename mirror security keyring=/usr/share/keyrings/debian-archive-keyring.gpg opts="arch=amd64" s
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  # The main archive: the system's own release names it (any suite of it would do).
  mirror=""
  for s in "$codename" "${KERNEL_SUITES[@]}"; do
    [ -n "$s" ] && [ "$s" != bookworm-security ] || continue
    mirror=$(debian_mirror "$s"); [ -z "$mirror" ] || break
  done
  [ -n "$mirror" ] || skip "the system's apt sources name no Debian mirror (apt-cache policy shows no */main of $codename)"
  # debian-security: named by the system's sources for its own -security
  # suite; else the archive's sibling (http://deb.debian.org/debian-security).
  security=$(debian_mirror bookworm-security)
  [ -n "$security" ] || security=$(debian_mirror "$codename-security")
  [ -n "$security" ] || security=${mirror%/debian}/debian-security
  [ -r "$keyring" ] && opts="$opts signed-by=$keyring"
  for s in "${KERNEL_SUITES[@]}"; do
    case "$s" in *-security) echo "deb [$opts] $security $s main" ;; *) echo "deb [$opts] $mirror $s main" ;; esac
  done > "$APT_DIR/sources.list.new"
  # Other sources, other lists: drop the old ones rather than mix them.
  cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list" || rm -f "$APT_DIR/lists/"*_dists_*
  mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
  APT_MIRROR=$mirror APT_SECURITY_MIRROR=$security
  # One update at a time (two scripts may ask together).
  (
    flock 8
    t0=$SECONDS
    apt-get "${APT_OPTS[@]}" -qq update >"$APT_DIR/update.log" 2>&1 \
      || skip "the Debian mirror $mirror (or $security) cannot be reached: apt-get update failed ($APT_DIR/update.log)"
    [ "$(apt_packages_files | wc -l)" -eq "${#KERNEL_SUITES[@]}" ] \
      || skip "apt-get update did not bring the Packages lists of every suite (${KERNEL_SUITES[*]}): see $APT_DIR/update.log"
    touch "$APT_DIR/lists/"*_Packages   # apt keeps a list's date when it has not changed
    echo "kernels: refreshed the package lists of ${KERNEL_SUITES[*]} in $((SECONDS - t0)) s" >&2
  ) 8>"$APT_DIR/.update.lock" || exit $?
}

# "SUITE=FILE" for each suite's Packages list in the private state.
apt_packages_files() {
  local f s
  for f in "$APT_DIR/lists/"*_dists_*_main_binary-amd64_Packages*; do
    [ -f "$f" ] || continue
    s=${f##*_dists_}; s=${s%%_main_binary-amd64_Packages*}
    [ "$(suite_rank "$s")" != 99 ] && echo "$s=$f"
  done
}
