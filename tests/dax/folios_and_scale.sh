#!/usr/bin/env bash
# Inside the VM (scripts/dax-vm --cpus 4): anonymous folio sizes on this
# guest kernel, and faultbench scale's counts with 4 vCPUs.
#
#   folios_and_scale.sh FAULTBENCH [folios-only]
#
# - A kernel without multi-size THP (6.1: no hugepages-64kB under
#   /sys/kernel/mm/transparent_hugepage) refuses --anon --mapping=64K in
#   one line that says why (exit 2); one that has it (6.12 and later) maps
#   the memory in 64 KiB folios, as the histogram and the per-size counters
#   agree, and puts the knob back.
# - scale --tasks=1,2,4 in threads and processes: every task of every
#   point takes one fault per 4 KiB page it writes (counts are exact under
#   TCG; the rates are not figures). `folios-only` leaves it out.
set -uo pipefail
fb=${1:?usage: folios_and_scale.sh FAULTBENCH [folios-only]}
folios_only=${2:-}
out=${DAX_VM_OUT:-/tmp}/folios
mkdir -p "$out"
status=0
bad() { echo "FAIL: $*"; status=1; }
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo "kernel: $(uname -r), $(nproc) vCPUs"
knob=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
if [ ! -e "$knob" ]; then
  if "$fb" run --anon --size=8M --rw=write --mapping=64K >"$out/refused.txt" 2>&1; then
    bad "--anon --mapping=64K ran on a kernel without multi-size THP"
  elif ! grep -q "multi-size THP came in Linux 6.8" "$out/refused.txt"; then
    bad "the refusal does not say why:"; cat "$out/refused.txt"
  else
    echo "ok: $(uname -r) refuses an anonymous 64K mapping: $(cat "$out/refused.txt")"
  fi
else
  before=$(cat "$knob")
  if ! "$fb" run --anon --size=8M --rw=write --mapping=64K --output-format=json >"$out/64k.json" 2>"$out/64k.err"; then
    bad "--anon --mapping=64K failed:"; cat "$out/64k.err"
  else
    folios=$(json "$out/64k.json" "d['jobs'][0]['faultbench']['folio_sizes']")
    agree=$(json "$out/64k.json" "[c['agree'] for c in d['signature']['folio_checks']]")
    echo "64K: folio_sizes $folios, checks $agree"
    [ "$folios" = "{'64K': 128}" ] || bad "8 MiB in 64K folios should be 128 of them, got $folios"
    [ "$agree" = "[True]" ] || bad "the histogram and the per-size counters disagree: $agree"
  fi
  [ "$(cat "$knob")" = "$before" ] || bad "$knob was not put back: $(cat "$knob") (was $before)"
fi

if [ "$folios_only" = folios-only ]; then
  exit $status
fi
if ! "$fb" scale --anon --size=8M --rw=write --mapping=pte --tasks=1,2,4 --repeat=1 --output-format=json \
    --plot="$out/scale.svg" >"$out/scale.json" 2>"$out/scale.err"; then
  bad "scale failed:"; cat "$out/scale.err"
else
  # 8 MiB a task, written once: 2048 faults a task (a few more for the process).
  json "$out/scale.json" "'\n'.join('%s x%d: task faults %s, run faults %d' % (p['mode'], p['tasks'], [t['faults'] for t in p['runs'][0]['tasks']], p['runs'][0]['signature']['faults']) for p in d['points'])"
  wrong=$(json "$out/scale.json" "[(p['mode'], p['tasks']) for p in d['points'] if len(p['runs'][0]['tasks']) != p['tasks'] or any(not 2048 <= t['faults'] <= 2048 + 64 for t in p['runs'][0]['tasks'])]")
  [ "$wrong" = "[]" ] || bad "points whose tasks did not take one fault a page: $wrong"
  "$fb" scale --anon --size=4M --rw=write --tasks=1 --mode=threads --repeat=1 >"$out/scale.txt" 2>&1
  grep -q "Under emulation (qemu TCG): faults per second are the emulator's" "$out/scale.txt" ||
    { bad "scale does not say that the rates under emulation are not figures:"; cat "$out/scale.txt"; }
fi
exit $status
