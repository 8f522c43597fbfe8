#!/bin/bash
# Runs scripts/dax-vm ARGS...; when the VM times out (exit 124), boots it
# once more. Under software emulation on a loaded 2-core host the 6.1
# guest has been seen to hang in a soft lockup during 4 KiB DAX faults
# (doc/DAX-VM.md, "Limits"): an artefact of the emulator, not of the code
# under test, which a second boot tells apart. Any other failure counts at
# once, and a second timeout fails the test.
dax_vm=$1
shift
"$dax_vm" "$@"
rc=$?
if [ "$rc" -eq 124 ]; then
  echo "dax-vm: the VM timed out (exit 124); booting it once more" >&2
  "$dax_vm" "$@"
  rc=$?
fi
exit "$rc"
