#!/bin/bash
# A stand-in for scripts/dax-vm (scripts/kernel-matrix's DAX_VM) whose
# guest kernel dies in the middle of a study, as a 6.12 guest under TCG has
# died of a stray int3: the command (the study) runs here, on this
# machine, into --out; on the first DYING_BOOTS boots (counted in the file
# BOOT_COUNT) only the first backing's pmd mode is kept, the guest is said
# to be in its 64K mode, and the exit is dax-vm's 123 with an oops in
# kernel_failure and the console. Later boots exit with the study's status.
#   dying_dax_vm.sh --kernel-package PKG [FLAGS] --out DIR -- COMMAND...
# Environment: BOOT_COUNT (a file), DYING_BOOTS (default 1).
set -u
out="" cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --) shift; cmd=("$@"); break ;;
  esac
  shift
done
[ -n "$out" ] && [ ${#cmd[@]} -gt 0 ] || { echo "dying_dax_vm: no --out or no command" >&2; exit 2; }
boot=$(($(cat "${BOOT_COUNT:?}" 2>/dev/null || echo 0) + 1))
echo "$boot" > "$BOOT_COUNT"
mkdir -p "$out"
rc=0
DAX_VM_OUT=$out "${cmd[@]}" || rc=$?
[ "$boot" -le "${DYING_BOOTS:-1}" ] || exit "$rc"

first=$(find "$out" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | head -n 1)
for dir in "$out"/*/; do [ "$(basename "$dir")" = "$first" ] || rm -rf "$dir"; done
find "$out/$first" -type f ! -name 'pmd.*' ! -name doctor.txt -delete
echo "$first 64K" > "$out/current"
echo "oops: Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" > "$out/kernel_failure"
printf '[   21.0] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI (boot %s, stand-in console)\n' "$boot" > "$out/console"
echo "dax-vm: the guest's kernel died without a result (qemu exit 0): Oops: int3 (stand-in)" >&2
exit 123
