# shellcheck shell=bash
# A cell: the results of one kernel on one backing, PACKAGE/BACKING/ under
# a kernel matrix's DIR/cells or a bisection's cache. It holds the study's
# compare JSONs (pmd.json, pte.json, pud.json) and doctor.txt, and/or a
# `status` line saying why it has no or partial results ("skipped: ...",
# "failed: ...", "hang: ...", "oops: ..."). Sourced by scripts/regress,
# scripts/regress.d/bisect-packages.sh and scripts/kernel-matrix; defines
# functions only.

has_results() { [ -n "$(find "$1" -maxdepth 1 -name '*.json' -print -quit 2>/dev/null)" ]; }

# Measured, or known why not: not to be run again.
cell_done() { has_results "$1" || [ -s "$1/status" ]; }

# "failed" when the study ran and its workload failed (a SIGBUS), else "".
study_failed() { case "$(cat "$1/status" 2>/dev/null)" in failed:*) echo failed ;; esac; }

# The status line of a kernel that hung (dax-vm exit 122), died (123) or
# ran out of time (124): dax-vm's kernel_failure ("hang: ..." or "oops:
# ...") and the study the guest was in (its $DAX_VM_OUT/current).
kernel_failure_line() {  # RC VMDIR
  local what where=""
  what=$(head -n 1 "$2/kernel_failure" 2>/dev/null || true)
  [ ! -s "$2/current" ] || where=" (in the $(cat "$2/current") study)"
  # (No apostrophe inside ${what:-...}: within double quotes bash would
  # take it for the start of a quoted word.)
  case "$1" in
    122) [ -n "$what" ] || what="hang: the guest kernel hung" ;;
    123) [ -n "$what" ] || what="oops: the guest kernel died" ;;
    *) what="hang: no result within the VM timeout" ;;
  esac
  echo "$what$where"
}
