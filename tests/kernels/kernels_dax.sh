#!/usr/bin/env bash
# scripts/kernels and dax-vm --kernel-package against the real Debian
# mirror: the list holds kernels of every suite, and two of them boot to a
# DAX mount: a 7.x split package (linux-binary/-modules/-base) and a trixie
# package (modules under /usr/lib/modules, .ko.xz). Two boots; a second
# fetch of a package fetches nothing. Exit 77 when the mirror or qemu is not
# there (the reason on one line).
#
#   tests/kernels/kernels_dax.sh SCRIPTS_DIR
set -uo pipefail
SCRIPTS=${1:?usage: kernels_dax.sh SCRIPTS_DIR}
ROOT=$(cd "$SCRIPTS/.." && pwd)
CACHE=${DAX_VM_CACHE:-$ROOT/build/dax-vm}
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 not installed"; exit 77; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

json=$("$SCRIPTS/kernels" list --json); rc=$?
[ "$rc" != 77 ] || exit 77
[ "$rc" = 0 ] || { echo "FAIL: scripts/kernels list --json exited $rc"; exit 1; }
"$SCRIPTS/kernels" list
"$SCRIPTS/kernels" list --series

# Every suite holds a listed kernel, by its own name or as an "also".
suites=$(/usr/bin/python3 -c 'import json,sys
ks = json.load(sys.stdin)
print(" ".join(sorted({k["suite"] for k in ks} | {a["suite"] for k in ks for a in k["also"]})))' <<< "$json")
for s in bookworm bookworm-security bookworm-backports trixie trixie-backports sid; do
  case " $suites " in *" $s "*) ;; *) fail "no kernel of $s in the list (suites seen: $suites)" ;; esac
done

# The two to boot: the newest 7.x split package, the newest trixie one.
pick() { /usr/bin/python3 -c 'import json,sys
ks = [k for k in json.load(sys.stdin) if eval(sys.argv[1])]
print(ks[-1]["package"] if ks else "")' "$1" <<< "$json"; }
split_pkg=$(pick 'k["series"].startswith("7.") and k["size_bytes"] > 0')
trixie_pkg=$(pick 'k["suite"] == "trixie"')
[ -n "$split_pkg" ] || fail "no 7.x package in the list"
[ -n "$trixie_pkg" ] || fail "no trixie package in the list"
[ "$failures" = 0 ] || exit 1
if [ "$("$SCRIPTS/kernels" parts "$split_pkg" | grep -cE '^linux-(binary|modules|base)-')" != 3 ]; then
  fail "$split_pkg is not split into linux-binary, -modules and -base: $("$SCRIPTS/kernels" parts "$split_pkg" | tr '\n' ' ')"
fi

boot() {   # boot PACKAGE: the VM's console, checked for a DAX mount of that kernel
  local pkg=$1 out rc kver
  out=$("$ROOT/tests/dax/boot_with_retry.sh" "$SCRIPTS/dax-vm" --kernel-package "$pkg" --fs=ext4 -- \
        sh -c 'echo "kernel $(uname -r)"; grep " $DAX_DIR " /proc/mounts' 2>&1); rc=$?
  echo "$out"
  [ "$rc" != 77 ] || { echo "SKIP: $(grep -m1 'SKIP' <<< "$out")"; exit 77; }
  [ "$rc" = 0 ] || { fail "$pkg: dax-vm exited $rc"; return; }
  kver=$(sed -n 's/^kver=//p' "$CACHE/kernels/$pkg/kernel.env")
  grep -q "^kernel $kver\$" <<< "$out" || fail "$pkg: the guest did not run kernel $kver"
  grep -qE 'dax-vm\[guest\]: ext4 on /dev/pmem0 .* mounted -o dax at .*; ready at' <<< "$out" || fail "$pkg: no fsdax ready line"
  grep -qE '^/dev/pmem0 .* ext4 .*dax' <<< "$out" || fail "$pkg: $DAX_DIR is not an ext4 mount with dax"
}

boot "$split_pkg"
[ -f "$CACHE/kernels/$split_pkg/root/usr/lib/modules/$(sed -n 's/^kver=//p' "$CACHE/kernels/$split_pkg/kernel.env")/vmlinuz" ] \
  || fail "$split_pkg: no usr/lib/modules/VER/vmlinuz in its tree"
boot "$trixie_pkg"
tree=$CACHE/kernels/$trixie_pkg/root/usr/lib/modules
[ -n "$(find "$tree" -name '*.ko.xz' -print -quit 2>/dev/null)" ] || fail "$trixie_pkg: no .ko.xz modules under usr/lib/modules"
[ -f "$tree/$(sed -n 's/^kver=//p' "$CACHE/kernels/$trixie_pkg/kernel.env")/modules.dep" ] || fail "$trixie_pkg: no modules.dep (depmod -b ROOT/usr)"

# A second fetch of a cached package fetches nothing (and asks apt nothing).
again=$(ROOT=$ROOT CACHE=$CACHE APT_DIR=/nonexistent bash -c '
  skip() { echo "SKIP: $*"; exit 77; }; die() { echo "$*"; exit 125; }; config=""
  . "$ROOT/scripts/dax-vm.d/kernel-package.sh"; fetch_kernel_package "$1"' _ "$trixie_pkg" 2>&1)
[ "$again" = "dax-vm: kernel package $trixie_pkg: $(sed -n 's/^kver=//p' "$CACHE/kernels/$trixie_pkg/kernel.env")" ] \
  || fail "a second fetch of $trixie_pkg did more than read the cache: $again"

[ "$failures" = 0 ] || { echo "kernels_dax: $failures check(s) failed"; exit 1; }
echo "kernels_dax: every check passed"
