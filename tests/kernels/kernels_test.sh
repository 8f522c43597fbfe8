#!/usr/bin/env bash
# scripts/kernels on canned Packages stanzas (tests/kernels/data/, one file
# per suite), no network: the order across suites, the dedup of twins
# (+deb12/+deb13 builds, -unsigned) preferring the newer suite, the sizes of
# 7.x split packages, --series, --newest-per-series, range and its refusals,
# and dax-vm's check of a kernel's config (kernel_lacks).
#
# Then each check is shown to bite: broken copies of scripts/kernels.d/
# table.awk (KERNELS_TABLE_AWK), one break each, must each fail a check.
#
#   tests/kernels/kernels_test.sh [--no-mutants]
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KERNELS=$ROOT/scripts/kernels
DATA=$HERE/data
export KERNELS_PACKAGES_FILES=""
for s in bookworm bookworm-security bookworm-backports trixie trixie-backports sid; do
  KERNELS_PACKAGES_FILES+="$s=$DATA/$s.Packages "
done
export DAX_VM_CACHE=/nonexistent/kernels-test   # the canned lists alone: nothing may reach for apt

failures=0
fail() {   # under a mutant (FIRST_FAIL_EXITS=1) the first failure ends the run
  echo "FAIL: $*"; failures=$((failures + 1))
  [ "${FIRST_FAIL_EXITS:-0}" = 0 ] || exit 1
}
expect_eq() {   # expect_eq WHAT EXPECTED ACTUAL
  [ "$2" = "$3" ] || { fail "$1"; diff <(echo "$2") <(echo "$3") | sed 's/^/    /'; }
}
expect_match() {   # expect_match WHAT ERE TEXT
  grep -qE -- "$2" <<< "$3" || { fail "$1: no line matches /$2/ in:"; sed 's/^/    /' <<< "$3"; }
}

run_checks() {
  local out rc

  # Kernel version order, across suites: 6.12.9 before 6.12.43 (numbers,
  # not strings), 6.1.192-1/-2/-3 apart (three ABIs of one upstream version),
  # sid's 7.2.13 before trixie-backports' 7.3.4, 7.10 after 7.3; twins once.
  out=$("$KERNELS" list --names 2>/dev/null)
  expect_eq "list --names: kernel order, one name per kernel" \
"linux-image-6.1.0-47-amd64
linux-image-6.1.0-50-amd64
linux-image-6.1.0-55-amd64
linux-image-6.1.0-56-amd64
linux-image-6.1.0-57-amd64
linux-image-6.12.9+deb12-amd64
linux-image-6.12.43+deb13-amd64
linux-image-6.12.90+deb12-amd64
linux-image-6.12.90+deb12.1-amd64
linux-image-6.12.117+deb13-amd64
linux-image-6.16.3+deb13-amd64
linux-image-6.18.15+deb13-amd64
linux-image-7.2.13+deb14-amd64
linux-image-7.3.4+deb13-amd64
linux-image-7.10.1+deb14-amd64" "$out"

  # The newer suite's build is the one named; the others are "also".
  out=$("$KERNELS" list 2>/dev/null)
  expect_match "6.12.43: trixie's +deb13 build, bookworm-backports' +deb12 also" \
    '^linux-image-6\.12\.43\+deb13-amd64 +6\.12\.43-1 +trixie +103\.0 MiB +also in bookworm-backports as linux-image-6\.12\.43\+deb12-amd64$' "$out"
  expect_match "6.12.117: trixie's, with bookworm-security's +deb12 and two -unsigned twins" \
    '^linux-image-6\.12\.117\+deb13-amd64 +6\.12\.117-1 +trixie .*also in bookworm-security as linux-image-6\.12\.117\+deb12-amd64; 2 -unsigned twins$' "$out"
  expect_match "6.1.0-50: in bookworm and bookworm-security, the newer suite named" \
    '^linux-image-6\.1\.0-50-amd64 +6\.1\.176-1 +bookworm-security .*also in bookworm as linux-image-6\.1\.0-50-amd64$' "$out"
  expect_match "6.1.0-57: the signed package, its -unsigned twin also" \
    '^linux-image-6\.1\.0-57-amd64 +6\.1\.192-3 +bookworm-security .*also 1 -unsigned twin$' "$out"
  expect_match "a whole image: its own size (6.18's linux-base-VER is documentation only)" \
    '^linux-image-6\.18\.15\+deb13-amd64 +6\.18\.15-1~bpo13\+1 +trixie-backports +159\.3 MiB$' "$out"

  # A 7.x split package's size is the sum of its image, binary, modules
  # and base parts (not the unsigned binary, not the -rt parts).
  out=$("$KERNELS" list --json 2>/dev/null)
  expect_eq "--json: 7.3.4's size_bytes, the four parts summed" "121001900" \
    "$(/usr/bin/python3 -c 'import json,sys; print([k["size_bytes"] for k in json.load(sys.stdin) if k["package"] == "linux-image-7.3.4+deb13-amd64"][0])' <<< "$out" 2>&1)"
  expect_eq "--json: 6.12.117's also, best first" \
    "trixie:linux-image-6.12.117+deb13-amd64-unsigned bookworm-security:linux-image-6.12.117+deb12-amd64 bookworm-security:linux-image-6.12.117+deb12-amd64-unsigned" \
    "$(/usr/bin/python3 -c 'import json,sys; print(" ".join(a["suite"] + ":" + a["package"] for k in json.load(sys.stdin) if k["version"] == "6.12.117-1" for a in k["also"]))' <<< "$out" 2>&1)"

  # What cannot be booted (7.0.4: its modules and base are not on the
  # mirror) is left out, and counted; --all shows it and why.
  out=$("$KERNELS" list 2>&1 >/dev/null)
  expect_match "an incomplete package is counted on stderr" '^kernels: left out 1 package\(s\) .*linux-image-7\.0\.4\+deb13-amd64' "$out"
  out=$("$KERNELS" list --all 2>/dev/null)
  expect_match "--all: the incomplete package, with what it lacks" \
    '^linux-image-7\.0\.4\+deb13-amd64 .*cannot be booted: the mirror lacks linux-base-7\.0\.4\+deb13-amd64, linux-modules-7\.0\.4\+deb13-amd64$' "$out"

  out=$("$KERNELS" list --series 2>/dev/null)
  expect_eq "--series" \
"6.1      5 kernels  6.1.170-3 .. 6.1.192-3
6.12     5 kernels  6.12.9-1~bpo12+1 .. 6.12.117-1
6.16     1 kernel   6.16.3-1~bpo13+1
6.18     1 kernel   6.18.15-1~bpo13+1
7.2      1 kernel   7.2.13-1
7.3      1 kernel   7.3.4-1~bpo13+1
7.10     1 kernel   7.10.1-1" "$out"

  out=$("$KERNELS" list --newest-per-series --names 2>/dev/null)
  expect_eq "--newest-per-series --names" \
"linux-image-6.1.0-57-amd64
linux-image-6.12.117+deb13-amd64
linux-image-6.16.3+deb13-amd64
linux-image-6.18.15+deb13-amd64
linux-image-7.2.13+deb14-amd64
linux-image-7.3.4+deb13-amd64
linux-image-7.10.1+deb14-amd64" "$out"

  # A glob matches a line by its name or an "also" name: the +deb12 glob
  # keeps 6.12.43, listed by its +deb13 name.
  out=$("$KERNELS" list --names 'linux-image-6.12.*+deb12-amd64' 2>/dev/null)
  expect_eq "list GLOB (also names count)" \
"linux-image-6.12.9+deb12-amd64
linux-image-6.12.43+deb13-amd64
linux-image-6.12.90+deb12-amd64
linux-image-6.12.117+deb13-amd64" "$out"

  out=$("$KERNELS" range linux-image-6.12.90+deb12.1-amd64 linux-image-7.2.13+deb14-amd64 2>&1)
  expect_eq "range FIRST LAST, inclusive" \
"linux-image-6.12.90+deb12.1-amd64
linux-image-6.12.117+deb13-amd64
linux-image-6.16.3+deb13-amd64
linux-image-6.18.15+deb13-amd64
linux-image-7.2.13+deb14-amd64" "$out"
  out=$("$KERNELS" range linux-image-6.12.43+deb12-amd64 linux-image-6.12.90+deb12-amd64 2>&1)
  expect_eq "range: an also name stands for its line" \
"linux-image-6.12.43+deb13-amd64
linux-image-6.12.90+deb12-amd64" "$out"
  out=$("$KERNELS" range linux-image-6.12.44+deb13-amd64 linux-image-7.3.4+deb13-amd64 2>&1); rc=$?
  expect_eq "range: an unknown FIRST is refused (exit 2)" 2 "$rc"
  expect_match "range: the refusal names it and hints" "^kernels: first: 'linux-image-6\.12\.44\+deb13-amd64' is not in the list \(names as .scripts/kernels list --names. prints" "$out"
  out=$("$KERNELS" range linux-image-7.3.4+deb13-amd64 linux-image-6.16.3+deb13-amd64 2>&1); rc=$?
  expect_eq "range: LAST before FIRST is refused (exit 2)" 2 "$rc"
  expect_match "range: ... with the swapped command" 'range linux-image-6\.16\.3\+deb13-amd64 linux-image-7\.3\.4\+deb13-amd64$' "$out"
  out=$("$KERNELS" range linux-image-6.16.3+deb13-amd64 linux-image-7.0.4+deb13-amd64 2>&1); rc=$?
  expect_eq "range: an incomplete LAST is refused (exit 2)" 2 "$rc"
  expect_match "range: ... saying why" 'cannot be booted' "$out"

  # parts: what dax-vm downloads.
  out=$("$KERNELS" parts linux-image-7.3.4+deb13-amd64 2>&1)
  expect_eq "parts of a 7.x split package, the image first" \
"linux-image-7.3.4+deb13-amd64 7.3.4-1~bpo13+1 trixie-backports 1900
linux-base-7.3.4+deb13-amd64 7.3.4-1~bpo13+1 trixie-backports 1000000
linux-binary-7.3.4+deb13-amd64 7.3.4-1~bpo13+1 trixie-backports 14000000
linux-modules-7.3.4+deb13-amd64 7.3.4-1~bpo13+1 trixie-backports 106000000" "$out"
  out=$("$KERNELS" parts 'linux-image-6.12.*+deb12-amd64' 2>&1)
  expect_eq "parts GLOB: the newest match, also names included" \
    "linux-image-6.12.117+deb12-amd64 6.12.117-1~deb12u1 bookworm-security 107000117" "$out"
  out=$("$KERNELS" parts linux-image-6.1.0-50-amd64 2>&1)
  expect_eq "parts: a name in two suites comes from the newer" \
    "linux-image-6.1.0-50-amd64 6.1.176-1 bookworm-security 70000050" "$out"
  "$KERNELS" parts linux-image-7.0.4+deb13-amd64 >/dev/null 2>&1; rc=$?
  expect_eq "parts of an incomplete package: exit 3" 3 "$rc"
  "$KERNELS" parts linux-image-6.1.0-50-rt-amd64 >/dev/null 2>&1; rc=$?
  expect_eq "parts of an -rt flavour: not a package here (exit 2)" 2 "$rc"
  "$KERNELS" parts linux-image-6.12-amd64 >/dev/null 2>&1; rc=$?
  expect_eq "parts of a metapackage: not a package here (exit 2)" 2 "$rc"
}

run_usage_checks() {
  local out rc
  "$KERNELS" --help | grep -q '^  scripts/kernels range FIRST LAST$' || fail "--help shows the synopsis"
  out=$("$KERNELS" lst 2>&1); rc=$?
  expect_eq "an unknown command: exit 2" 2 "$rc"
  expect_match "... naming the commands" "unknown command 'lst': list, range or parts" "$out"
  out=$("$KERNELS" list --packages-file stretch="$DATA/sid.Packages" 2>&1); rc=$?
  expect_eq "a suite that is none of ours: exit 2" 2 "$rc"
  out=$("$KERNELS" list --names 'linux-image-5.*' 2>&1); rc=$?
  expect_eq "a glob that matches nothing: exit 2" 2 "$rc"
}

# dax-vm's check of a package's kernel (scripts/dax-vm.d/kernel-package.sh).
run_config_checks() {
  local t out
  t=$(mktemp -d)
  mkdir -p "$t/lib/modules/9.9.9"
  cat > "$t/config" <<'EOF'
CONFIG_VIRTIO_PCI=y
CONFIG_NET_9P_VIRTIO=m
CONFIG_9P_FS=m
CONFIG_LIBNVDIMM=m
CONFIG_BLK_DEV_PMEM=m
CONFIG_X86_PMEM_LEGACY=m
CONFIG_ZONE_DEVICE=y
CONFIG_FS_DAX=y
CONFIG_DEV_DAX=m
CONFIG_DEV_DAX_PMEM=m
CONFIG_EXT4_FS=y
CONFIG_XFS_FS=m
EOF
  printf '%s\n' kernel/net/9p/9pnet_virtio.ko.xz: kernel/fs/9p/9p.ko.xz: kernel/drivers/nvdimm/libnvdimm.ko.xz: \
    kernel/drivers/nvdimm/nd_pmem.ko.xz: kernel/drivers/nvdimm/nd_e820.ko.zst: kernel/drivers/dax/device_dax.ko: \
    kernel/drivers/dax/dax_pmem.ko: kernel/fs/xfs/xfs.ko.xz: > "$t/lib/modules/9.9.9/modules.dep"
  out=$(ROOT=$ROOT bash -c '. "$ROOT/scripts/dax-vm.d/kernel-package.sh"; kernel_lacks "$1" "$2" 9.9.9' _ "$t/config" "$t" 2>&1)
  expect_eq "kernel_lacks: a kernel with all it needs" "" "$out"
  sed -i 's/^CONFIG_X86_PMEM_LEGACY=m$/# CONFIG_X86_PMEM_LEGACY is not set/' "$t/config"
  sed -i '/xfs.ko/d' "$t/lib/modules/9.9.9/modules.dep"
  out=$(ROOT=$ROOT bash -c '. "$ROOT/scripts/dax-vm.d/kernel-package.sh"; kernel_lacks "$1" "$2" 9.9.9' _ "$t/config" "$t" 2>&1)
  expect_eq "kernel_lacks: an option not set, a module missing" \
    "CONFIG_X86_PMEM_LEGACY (nd_e820, the memmap= pmem: not set), CONFIG_XFS_FS (xfs, --fs=xfs: =m but xfs.ko is not among its modules)" "$out"
  rm -rf "$t"
}

run_checks
run_usage_checks
run_config_checks
[ "$failures" = 0 ] || { echo "kernels_test: $failures check(s) failed"; exit 1; }
echo "kernels_test: every check passed"

# --- mutants: each break of table.awk must fail a check ------------------------
[ "${1:-}" != --no-mutants ] || exit 0
awk_src=$ROOT/scripts/kernels.d/table.awk
src=$(cat "$awk_src")
# Each mutant: what it breaks, then a literal piece of table.awk and its
# replacement. (vercmp's '~' rule has none: every '~' of these suites is in a
# backport's or an update's suffix, which the twin key drops before comparing.)
mutants=(
  "the newer suite not preferred"
  'if (C_RANK[a] != C_RANK[b]) return C_RANK[a] < C_RANK[b]' 'if (C_RANK[a] != C_RANK[b]) return C_RANK[a] > C_RANK[b]'
  "the -unsigned twin not second to the signed package"
  'return C_PKG[a] ~ /-unsigned$/' 'return C_PKG[b] ~ /-unsigned$/'
  "the split parts not summed"
  'C_SIZE[c] += SIZE[name, v, s]' 'C_SIZE[c] += 0'
  "+deb12 and +deb13 builds not twins"
  'sub(/(~bpo[0-9]+\+[0-9]+|[~+]deb[0-9]+u[0-9]+)$/, "", v)' 'v = v'
  "twins by upstream version alone (6.1.192-1, -2 and -3 merged)"
  'function kernel(v) {' 'function kernel(v) { return upstream(v)'
  "versions compared as strings"
  'if (length(da) != length(db)) return length(da) - length(db)' 'if (0) return 0'
  "missing parts not noticed"
  'if (s == "") { C_MISSING' 'if (0) { C_MISSING'
  "a whole image held to its documentation package"
  'if (name ~ /^linux-base-/ && !split_image) continue' 'if (0) continue'
  "metapackages counted"
  '(-[0-9]+|\+[a-z0-9.]+)-amd64(-unsigned)?$/' '(-[0-9]+|\+[a-z0-9.]+|)-amd64(-unsigned)?$/'
  "-rt flavours counted"
  'if (pkg !~ /^linux-(image|binary|modules|base)-/ || arch != "amd64") next' 'if (pkg !~ /^linux-(image|binary|modules|base)-/ || arch != "amd64") next; if (pkg ~ /-rt-amd64$/) { n++; C_PKG[n] = pkg; C_VER[n] = ver; C_SUITE[n] = suite; C_RANK[n] = rank; C_DEPS[n] = deps; next }'
)
survived=0
for ((i = 0; i < ${#mutants[@]}; i += 3)); do
  what=${mutants[$i]} from=${mutants[$((i + 1))]} to=${mutants[$((i + 2))]}
  if [[ "$src" != *"$from"* ]]; then
    echo "FAIL: mutant '$what': table.awk has no '$from' any more (update the mutant)"; survived=$((survived + 1)); continue
  fi
  mutant=$(mktemp --suffix=.awk)
  printf '%s\n' "${src/"$from"/"$to"}" > "$mutant"
  caught=$(export KERNELS_TABLE_AWK=$mutant FIRST_FAIL_EXITS=1; run_checks | grep -m1 '^FAIL' | sed 's/^FAIL: //; s/: no line matches.*//')
  if [ -z "$caught" ]; then echo "FAIL: mutant '$what' passed every check"; survived=$((survived + 1))
  else echo "ok: mutant '$what' caught by: $caught"; fi
  rm -f "$mutant"
done
[ "$survived" = 0 ] || { echo "kernels_test: $survived mutant(s) not caught"; exit 1; }
echo "kernels_test: every mutant caught"
