#!/bin/bash
# Runs scripts/dax-vm ARGS...; when the VM times out (exit 124), its kernel
# hangs (exit 122) or dies (exit 123), boots it once more. Under software
# emulation on a loaded 2-core host the 6.1 guest has been seen to hang in
# a soft lockup during 4 KiB DAX faults (dax-vm now ends such a run within
# seconds of the report, 122, where it used to run into the timeout), and
# the 6.12 guest to oops on a stray int3 while patching its text
# (doc/DAX-VM.md, "Timeouts in the dax tests", "A guest kernel that
# hangs"): artefacts of the emulator, not of the code under test, which a
# second boot tells apart. Any other failure counts at once, and a second
# one fails the test.
dax_vm=$1
shift
"$dax_vm" "$@"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 122 ] || [ "$rc" -eq 123 ]; then
  echo "dax-vm: the VM timed out or its kernel hung or died (exit $rc); booting it once more" >&2
  "$dax_vm" "$@"
  rc=$?
fi
exit "$rc"
