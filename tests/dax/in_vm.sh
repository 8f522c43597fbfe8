#!/bin/bash
# Runs several checks in one VM boot: CMD ARGS... [::: CMD ARGS...]...
# Every command runs even when an earlier one failed; exits 1 when any
# failed, else 0.
status=0
run() {
  echo "=== in_vm: $*"
  "$@"
  local rc=$?
  echo "=== in_vm: exit status $rc: $1"
  [ "$rc" -eq 0 ] || status=1
}
cmd=()
for arg in "$@"; do
  if [ "$arg" = ":::" ]; then
    [ ${#cmd[@]} -gt 0 ] && run "${cmd[@]}"
    cmd=()
  else
    cmd+=("$arg")
  fi
done
[ ${#cmd[@]} -gt 0 ] && run "${cmd[@]}"
exit "$status"
