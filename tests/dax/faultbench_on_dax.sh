#!/bin/bash
# faultbench on a real fsdax mount, inside scripts/dax-vm:
#   faultbench_on_dax.sh FAULTBENCH [--numa-only | --carryover] [--fio-jobs]
#  - --mapping=pmd on a fresh file verifies as PMD by the fs_dax tracepoints
#    (dax_trace), about one fault per 2 MiB, no FALLBACK;
#  - --mapping=pte verifies 0 PMD bytes;
#  - with --carryover: compare --reuse-file on 4 MiB, after a PTE pass the
#    PMD run of the same file falls back (DAX carryover) and the causes name
#    it. The ext4 ctest boot runs it; the file is small because long runs
#    of 4 KiB DAX faults have hung the 6.1 guest under TCG on a busy host
#    (doc/DAX-VM.md);
#  - with DAX_VM_NUMA=1, --cpunodebind=block:pmem0 runs on node 1's CPUs,
#    and compare --numa-matrix is CPU node x pmem0, its pages on pmem0's
#    node (sysfs) in every cell, exact;
#  - with --fio-jobs: fio's examples/libpmem.fio (tests/faultbench/fio_jobs)
#    run by fio's own libpmem engine and by faultbench on the DAX mount have
#    the same jobs and groups (fio_structure.sh), and faultbench's libpmem
#    writes reached pmem at cache-line granularity (MAP_SYNC). fio's
#    examples/dev-dax.fio needs a device DAX node: faultbench_on_devdax.sh
#    runs it, in the --devdax boots;
#  - the signature counts pgfault around the workload (the process's own
#    start-up is left out) and reads PageTables while the mapping is live;
#  - doctor reads the PAT memtype of the pmem as root (debugfs on demand).
# Prints `dax-measure:` lines with the counts (doc/DAX-VM.md).
set -u
fb=$1
: "${DAX_DIR:?run through scripts/dax-vm}"
dir=$DAX_DIR/faultbench
mkdir -p "$dir"
out=$(mktemp -d)
failed=0
check() {  # DESCRIPTION FILE JQ-EXPRESSION
  if jq -e "$3" "$2" >/dev/null; then echo "ok: $1"; else echo "FAIL: $1 ($3)"; failed=1; fi
}
measure() {  # LABEL FILE
  jq -r --arg l "$1" --arg fs "${DAX_VM_FS:-}" '.jobs[0] as $j | $j.faultbench.mapping as $m |
    "dax-measure: fs=\($fs) faultbench \($l) range=\($j.faultbench.range_bytes/1048576)MiB faults=\($j.minf + $j.majf) (major \($j.majf)) verify=\($m.verify_method) pmd_bytes=\($m.pmd_bytes) pte_bytes=\($m.pte_bytes) dax_trace=\($m.dax_trace|tojson) cpus=\($j.faultbench.numa.cpus|tojson)"' "$2"
}
fbrun() {  # OUT-FILE ARGS...
  local f=$1; shift
  if ! "$fb" run --directory="$dir" --output-format=json --output="$f" "$@"; then
    echo "FAIL: faultbench run $*"; failed=1; echo '{}' >"$f"; return 1
  fi
}
m='.jobs[0].faultbench.mapping'
# shellcheck source=tests/dax/numa_matrix.sh
. "$(dirname "$0")/numa_matrix.sh"
numa_only=0
carryover=0
fio_jobs=0
for arg in "${@:2}"; do
  case "$arg" in
    --numa-only) numa_only=1 ;;
    --carryover) carryover=1 ;;
    --fio-jobs) fio_jobs=1 ;;
    *) echo "FAIL: faultbench_on_dax.sh: unknown argument $arg"; exit 1 ;;
  esac
done

if [ "$numa_only" = 0 ]; then

# PMD: 64 MiB = 32 PMDs, written once. The machine's pgfault is also read
# around the whole process, to show what the signature leaves out.
outer_before=$(awk '$1 == "pgfault" { print $2 }' /proc/vmstat)
fbrun "$out/pmd.json" --name=pmd --size=64M --rw=write --mapping=pmd --fresh-file
outer_after=$(awk '$1 == "pgfault" { print $2 }' /proc/vmstat)
measure "mapping=pmd rw=write" "$out/pmd.json"
jq -r --argjson outer "$((outer_after - outer_before))" '"dax-measure: signature pgfault: around the process +\($outer), around the workload +\(.signature.vmstat.pgfault), the worker'"'"'s own faults \(.jobs[0].minf + .jobs[0].majf)"' "$out/pmd.json"
check "signature: pgfault counted around the workload, not the process start-up" "$out/pmd.json" \
  "(.jobs[0].minf + .jobs[0].majf) as \$f | .signature.vmstat.pgfault >= \$f and .signature.vmstat.pgfault < \$f + 256 and $((outer_after - outer_before)) > .signature.vmstat.pgfault + 512"
check "signature: thp_fault_fallback 0, fs_dax tallies or PAGEMAP_SCAN PMDs" "$out/pmd.json" \
  '.signature.vmstat.thp_fault_fallback == 0 and .signature.pmd_share == 1'
if "$fb" doctor "$DAX_DIR" > "$out/doctor.txt"; then
  grep "PAT memtype" "$out/doctor.txt" | sed 's/^ */dax-measure: doctor: /'
  if grep -q "PAT memtype *write-back" "$out/doctor.txt"; then echo "ok: doctor reads the PAT memtype as root (debugfs mounted on demand)"
  else echo "FAIL: doctor's PAT memtype: $(grep 'PAT memtype' "$out/doctor.txt")"; failed=1; fi
else
  echo "FAIL: faultbench doctor $DAX_DIR"; failed=1
fi
check "pmd: verified by dax_trace" "$out/pmd.json" "$m.verify_method == \"dax_trace\""
check "pmd: all 64 MiB PMD" "$out/pmd.json" "$m.pmd_bytes == 67108864 and $m.differs_from_request == false"
check "pmd: no FALLBACK, nothing lost" "$out/pmd.json" "$m.dax_trace.fallback == 0 and $m.dax_trace.lost == 0"
check "pmd: 32-36 PMD faults installed" "$out/pmd.json" "($m.dax_trace.nopage + $m.dax_trace.needdsync) as \$n | \$n >= 32 and \$n <= 36"
check "pmd: about one fault per 2 MiB" "$out/pmd.json" '.jobs[0] | (.minf + .majf) as $f | $f >= 32 and $f <= 48'

# PMD with MAP_SYNC: NEEDDSYNC instead of NOPAGE.
fbrun "$out/pmd_sync.json" --name=pmdsync --size=32M --rw=randwrite --mapping=pmd --map-sync --fresh-file
measure "mapping=pmd rw=randwrite map_sync" "$out/pmd_sync.json"
check "pmd map_sync: 16 NEEDDSYNC, no FALLBACK" "$out/pmd_sync.json" "$m.dax_trace.needdsync >= 16 and $m.dax_trace.fallback == 0 and $m.pmd_bytes == 33554432"

# PTE: 16 MiB = 4096 pages. PageTables is read in the signature while the
# mapping is live; after the process it is gone again. The figure is the
# whole guest's, so it is read after with the shell's own `read`: a
# program started to read it (awk) has page tables of its own, as many as
# the mapping's 32 kB, and once made the two readings equal. The kernel
# keeps the figure per CPU and folds it in now and then, so it is folded
# first (stat_refresh, as faultbench does for its own readings). Unfolded,
# it may still count the page tables just freed (a failing boot read
# 248 kB after against 256 kB while mapped; folded, four boots of the xfs
# check read 148-156 kB after against 256-268 kB).
fbrun "$out/pte.json" --name=pte --size=16M --rw=write --mapping=pte --fresh-file
{ echo 1 >/proc/sys/vm/stat_refresh; } 2>/dev/null || true
after_kb=
while read -r field kb _; do
  if [ "$field" = "PageTables:" ]; then after_kb=$kb; fi
done < /proc/meminfo
measure "mapping=pte rw=write" "$out/pte.json"
jq -r --argjson after "$after_kb" '"dax-measure: signature PageTables: \(.signature.page_tables_kb) kB while mapped (+\(.signature.page_tables_delta_kb) kB over the workload), \($after) kB after the process"' "$out/pte.json"
check "signature: PageTables read while the 4 KiB mapping was live" "$out/pte.json" \
  ".signature.page_tables_delta_kb >= 32 and .signature.page_tables_kb > $after_kb"
check "pte: verified by dax_trace" "$out/pte.json" "$m.verify_method == \"dax_trace\""
check "pte: 0 PMD bytes" "$out/pte.json" "$m.pmd_bytes == 0 and $m.dax_trace.nopage == 0 and $m.dax_trace.needdsync == 0"
check "pte: >= 95% of the pages by PTE faults" "$out/pte.json" "$m.dax_trace.pte >= 3891"

# Carryover: a PTE pass, then a PMD run of the same file.
if [ "$carryover" = 0 ]; then
  :
elif "$fb" compare --directory="$dir" --name=carry --size=4M --rw=write --modes=pte,pmd --reuse-file --repeat=1 \
     --save-json="$out/carry.json" >"$out/carry.txt"; then
  cat "$out/carry.txt"
  jq -r --arg fs "${DAX_VM_FS:-}" '.runs[] | .result.jobs[0] as $j | $j.faultbench.mapping as $m |
    "dax-measure: fs=\($fs) compare --reuse-file \(.mode) faults=\($j.minf + $j.majf) verify=\($m.verify_method) pmd_bytes=\($m.pmd_bytes) pte_bytes=\($m.pte_bytes) dax_trace=\($m.dax_trace|tojson)"' "$out/carry.json"
  check "carryover: the pmd run of the reused file is < 95% PMD" "$out/carry.json" \
    '[.runs[] | select(.mode == "pmd") | .result.jobs[0].faultbench.mapping] | length == 1 and .[0].verify_method == "dax_trace" and .[0].pmd_share < 0.95'
  check "carryover: FALLBACK in the pmd run" "$out/carry.json" \
    '[.runs[] | select(.mode == "pmd") | .result.jobs[0].faultbench.mapping.dax_trace.fallback] | .[0] > 0'
  if grep -q "cause: .*carryover" "$out/carry.txt"; then echo "ok: carryover named in the causes"
  else echo "FAIL: no cause names carryover"; failed=1; fi
else
  echo "FAIL: faultbench compare --reuse-file"; cat "$out/carry.txt"; failed=1
fi
fi  # numa_only

if [ "${DAX_VM_NUMA:-0}" = 1 ]; then
  [ -r /sys/devices/system/node/node1/cpulist ] || { echo "FAIL: no NUMA node 1"; failed=1; }
  # node 1's CPUs as a JSON array, from its cpulist ("1" or "2-3,6")
  node1=$(awk -F, '{for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= (n > 1 ? r[2] : r[1]); c++) printf "%s%d", (s++ ? "," : ""), c }}' \
    /sys/devices/system/node/node1/cpulist)
  fbrun "$out/numa.json" --name=numa --size=8M --rw=write --mapping=pmd --fresh-file --cpunodebind=block:pmem0
  measure "cpunodebind=block:pmem0" "$out/numa.json"
  check "numa: workers on node 1's CPUs [$node1]" "$out/numa.json" ".jobs[0].faultbench.numa.cpus == [$node1]"
  # DAX pages are pmem0's wherever the policy points: CPU node x the device.
  numa_matrix fsdax "numa-matrix on fsdax: CPU node x pmem0 (node 1), exact in every cell" \
    '.numa_matrix.dax_device == "pmem0" and .numa_matrix.mem_nodes == [1] and .numa_matrix.marks["1"] == "block:pmem0" and (.numa_matrix.matrices[0].cells | length) == 2 and .numa_matrix.matrices[0].all_exact and ([.numa_matrix.matrices[0].cells[].page_nodes_source | startswith("device pmem0")] | all)' \
    --directory="$dir" --name=matrix --size=4M --rw=write --modes=pmd --unlink
fi

if [ "$fio_jobs" = 1 ]; then
  here=$(cd "$(dirname "$0")/../faultbench" && pwd)
  mkdir -p "$dir/fio-jobs"
  if FB_DIR=$dir/fio-jobs "$here/fio_structure.sh" "$fb" "$here/fio_jobs" libpmem.fio \
       >"$out/fio-jobs.txt" 2>&1; then
    echo "ok: fio's libpmem.fio: fio and faultbench have the same jobs and groups"
  else
    echo "FAIL: fio's job files in the VM"; failed=1
  fi
  sed 's/^/  /' "$out/fio-jobs.txt"
  if grep -q "^measure: libpmem.fio libpmem-seqwrite .*granularity=cache_line" "$out/fio-jobs.txt"; then
    echo "ok: libpmem.fio: faultbench's libpmem writes mapped at cache-line granularity (DAX, MAP_SYNC)"
  else
    echo "FAIL: libpmem.fio: faultbench's libpmem mapping is not cache-line granular on DAX"; failed=1
  fi
  # One job per stonewall stage: each stage's DAX faults are traced apart.
  verified=$(grep -cE "^measure: libpmem.fio .* verify=(dax_trace|pagemap_scan)" "$out/fio-jobs.txt")
  if [ "$verified" = 2 ]; then
    echo "ok: libpmem.fio: both stages' mappings verified on DAX (dax_trace per stage, or pagemap_scan)"
  else
    echo "FAIL: libpmem.fio: a stage's DAX mapping was not verified"; failed=1
  fi
fi

rm -rf "$out" "$dir"
exit "$failed"
