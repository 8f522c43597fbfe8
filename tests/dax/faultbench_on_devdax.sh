#!/bin/bash
# faultbench on a real device DAX device, inside scripts/dax-vm --devdax=2M|1G:
#   faultbench_on_devdax.sh FAULTBENCH
#  - doctor on $DAX_DEV names device DAX, its align, namespace mode and
#    NUMA node as sysfs has them, the PAT memtype of its range (root,
#    debugfs on demand), and says what does not apply;
#  - a run with the mapping of the device's align (pmd for 2M, pud for 1G)
#    verifies at that page size, one fault per page; every other --mapping
#    is a one-line error, exit 2, before anything is mapped;
#  - fio's ioengine=dev-dax in a job file runs on the device, and fio's
#    examples/dev-dax.fio (tests/faultbench/fio_jobs) runs under fio's own
#    dev-dax engine and under faultbench: the same jobs and groups, fio's
#    and faultbench's faults side by side, faultbench's one per page of the
#    align each worker touched (fio without a dev-dax engine: faultbench's
#    side alone, said so);
#  - compare --modes=pte,pmd,pud --repeat=auto runs the align's mode and
#    names the others, stops at 3 rounds (no pte/pmd pair to judge), and
#    warms up on the device itself;
#  - the pages are put on the device's node (sysfs), not "absent";
#  - with DAX_VM_NUMA=1: compare --numa-matrix is CPU node x the device,
#    placement exact in every cell; with --devdax=2M also a 2 x 2 matrix of
#    CPU node x memory node on a tmpfs file, exact in every cell.
# Prints `dax-measure:` lines with the counts (doc/DAX-VM.md).
# shellcheck disable=SC2015  # ok() never fails, so A && ok || bad is if-then-else
set -u
fb=$1
: "${DAX_DEV:?run through scripts/dax-vm --devdax=2M|1G}"
out=$(mktemp -d)
failed=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; failed=1; }
check() {  # DESCRIPTION FILE JQ-EXPRESSION
  if jq -e "$3" "$2" >/dev/null; then ok "$1"; else bad "$1 ($3)"; fi
}
# NUMA balancing's hinting faults are the worker's faults too: they would
# blur the one-fault-per-page check. The guest is the test's own.
echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null

name=$(basename "$DAX_DEV")
sys=/sys/bus/dax/devices/$name
align=$(cat "$sys/align")
node=$(cat "$sys/numa_node")
[ "$node" -ge 0 ] 2>/dev/null || node=0
case "$align" in
  2097152) mapping=pmd others="pte pud" census=pmd_bytes ;;
  1073741824) mapping=pud others="pte pmd" census=pud_bytes ;;
  *) echo "FAIL: align $align is neither 2M nor 1G"; exit 1 ;;
esac
m='.jobs[0].faultbench.mapping'
# shellcheck source=tests/dax/numa_matrix.sh
. "$(dirname "$0")/numa_matrix.sh"

# doctor
"$fb" doctor "$DAX_DEV" >"$out/doctor.txt" || bad "doctor $DAX_DEV exit $?"
cat "$out/doctor.txt"
for want in "device DAX $name" "mode devdax" "NUMA node +$node \\(target_node" \
            "the page cache and file-system extent alignment do not apply" "One page size here: " \
            "PAT memtype +write-back"; do
  grep -qE "$want" "$out/doctor.txt" && ok "doctor says '$want'" || bad "doctor does not say '$want'"
done
"$fb" doctor --json "$DAX_DEV" >"$out/doctor.json" || bad "doctor --json"
check "doctor JSON: align, mode, node as sysfs has them" "$out/doctor.json" \
  ".device_dax.align == $align and .page_size == $align and .device_dax.mode == \"devdax\" and .device_dax.numa_node == $node"
check "doctor JSON: PMD possible only with align 2M" "$out/doctor.json" ".pmd_possible == ($align == 2097152)"

# The align's mapping: 64 MiB written once.
if "$fb" run --filename="$DAX_DEV" --size=64M --rw=write --mapping=$mapping --output-format=json >"$out/run.json"; then
  jq -r --arg a "$align" '.jobs[0] as $j | $j.faultbench.mapping as $m |
    "dax-measure: devdax align=\($a) faultbench mapping=\($m.requested) size=64MiB faults=\($j.minf + $j.majf) verify=\($m.verify_method) pud_bytes=\($m.pud_bytes) pmd_bytes=\($m.pmd_bytes) pte_bytes=\($m.pte_bytes) evidence=\($m.page_size_evidence|tojson) page_nodes=\($j.faultbench.numa.page_nodes|tojson)"' "$out/run.json"
  check "$mapping: verified by page size, all 64 MiB $census" "$out/run.json" \
    "$m.verify_method == \"page_size\" and $m.$census == 67108864 and ($m.pud_bytes + $m.pmd_bytes + $m.pte_bytes) == 67108864 and $m.differs_from_request == false"
  check "$mapping: the evidence is the align and one fault per page" "$out/run.json" \
    "$m.page_size_evidence.page_size == $align and $m.page_size_evidence.presence == \"touched\" and $m.page_size_evidence.faults_agree and $m.page_size_evidence.expected_faults == ((67108864 + $align - 1) / $align | floor)"
  check "$mapping: faults (minor + major) are about one per page" "$out/run.json" \
    ".jobs[0] | (.minf + .majf) as \$f | \$f >= ((67108864 + $align - 1) / $align | floor) and \$f <= ((67108864 + $align - 1) / $align | floor) + 4"
  check "$mapping: pages on the device's node $node (sysfs), not absent" "$out/run.json" \
    ".jobs[0].faultbench.numa | (.page_nodes | keys) == [\"$node\"] and (.page_nodes_source | startswith(\"device $name\"))"
else
  bad "faultbench run --mapping=$mapping on $DAX_DEV"
fi

# Every other mapping: one line, exit 2, before anything is mapped.
for other in $others; do
  "$fb" run --filename="$DAX_DEV" --size=16M --mapping="$other" >"$out/other.out" 2>"$out/other.err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$out/other.err")" = 1 ] && grep -q "maps every page at" "$out/other.err" && [ ! -s "$out/other.out" ]; then
    ok "--mapping=$other: one-line error, exit 2: $(cat "$out/other.err")"
  else
    bad "--mapping=$other: exit $rc, stderr: $(cat "$out/other.err")"
  fi
done
"$fb" run --filename="$DAX_DEV" --size=64G 2>"$out/big.err"
[ $? = 2 ] && grep -q "the device holds" "$out/big.err" && ok "--size beyond the device: $(cat "$out/big.err")" \
  || bad "--size=64G: $(cat "$out/big.err")"

# fio's dev-dax engine in a job file (its example's options that apply).
cat >"$out/dev-dax.fio" <<JOB
[global]
bs=2m
ioengine=dev-dax
thread
filename=$DAX_DEV
size=32M
[dev-dax-write]
rw=write
JOB
if "$fb" run --output-format=json "$out/dev-dax.fio" >"$out/fio.json"; then
  check "ioengine=dev-dax: libpmem2 copies at cache-line granularity, $census verified" "$out/fio.json" \
    ".jobs[0].jobname == \"dev-dax-write\" and $m.engine == \"pmem2\" and $m.granularity == \"cache_line\" and $m.$census == 33554432"
else
  bad "job file with ioengine=dev-dax"
fi

# fio's examples/dev-dax.fio (tests/faultbench/fio_jobs/dev-dax.fio: 16
# threads on the device, a randwrite stage then a randread stage, bs=2m),
# run by fio's own dev-dax engine and by faultbench on the device.
fio_jobs=$(cd "$(dirname "$0")/../faultbench" && pwd)
mkdir -p "$out/fio-jobs" "$out/kept"
if fio --enghelp 2>/dev/null | grep -qx $'\tdev-dax'; then
  if FB_DIR=$out/fio-jobs FB_DAX_DEV=$DAX_DEV FB_KEEP_DIR=$out/kept "$fio_jobs/fio_structure.sh" "$fb" \
       "$fio_jobs/fio_jobs" dev-dax.fio >"$out/dev-dax-fio.txt" 2>&1; then
    ok "dev-dax.fio: fio's dev-dax engine and faultbench have the same jobs and groups on $DAX_DEV"
  else
    bad "dev-dax.fio: fio and faultbench differ, or one failed"
  fi
  sed 's/^/  /' "$out/dev-dax-fio.txt"
  fioj=$out/kept/dev-dax.fio.fio.json
  check "dev-dax.fio: fio ran its own dev-dax engine, I/O in both stages" "$fioj" \
    '(.jobs | length) == 2 and (.["global options"].ioengine == "dev-dax") and .jobs[0].write.total_ios > 0 and .jobs[1].read.total_ios > 0'
  # fio's faults at the align's page size: each of the 16 threads maps the
  # device and takes at most one fault per page its 2 MiB I/Os touch (at
  # 4 KiB it would be 512 an I/O). The read stage adds each thread's first
  # touch of its fresh 2 MiB read buffer (512 pages; fio fills write
  # buffers before it starts counting).
  pages=$(( $(cat "$sys/size") / align ))
  jq -r --arg a "$align" '.jobs[] | "dax-measure: devdax align=\($a) dev-dax.fio \(.jobname) g=\(.groupid) fio faults=\(.minf + .majf) ios=\(.read.total_ios + .write.total_ios)"' "$fioj"
  check "dev-dax.fio under fio: faults at most one per align page an I/O touches (+ read buffers)" "$fioj" \
    "[.jobs[] | (.read.total_ios + .write.total_ios) as \$io | ([\$io, 16 * $pages] | min) as \$pages |
      (if .read.total_ios > 0 then 16 * 512 else 0 end) as \$buffers | (.minf + .majf) as \$f |
      \$f >= 16 and \$f <= \$buffers + \$pages + 16] | all"
else
  echo "note: this fio has no dev-dax engine (fio --enghelp): dev-dax.fio runs under faultbench alone," \
       "checked against the faults the align explains"
  FB_DAX_DEV=$DAX_DEV "$fb" run --output-format=json --output="$out/kept/dev-dax.fio.faultbench.json" \
    "$fio_jobs/fio_jobs/dev-dax.fio" || bad "faultbench run dev-dax.fio"
fi
# faultbench's side, fio's engine or not: every worker (one mapping each, as
# fio's threads have) took one fault per align-sized page it touched.
fbj=$out/kept/dev-dax.fio.faultbench.json
if [ -s "$fbj" ]; then
  jq -r --arg a "$align" '.jobs[] | .faultbench as $f |
    "dax-measure: devdax align=\($a) dev-dax.fio \(.jobname) g=\(.groupid) members=\($f.members) faultbench faults=\(.minf + .majf) expected=\([$f.workers[].mapping.page_size_evidence.expected_faults] | add) page_size=\([$f.workers[].mapping.page_size_evidence.page_size] | unique) \($a|tonumber|./1048576)MiB-pages verify=\([$f.workers[].mapping.verify_method] | unique)"' "$fbj"
  check "dev-dax.fio under faultbench: 2 groups of 16, every worker verified at the align, faults agree" "$fbj" \
    "(.jobs | length) == 2 and ([.jobs[].faultbench | .members == 16 and ([.workers[].mapping | .verify_method == \"page_size\" and .page_size_evidence.page_size == $align and .page_size_evidence.faults_agree] | all)] | all)"
  check "dev-dax.fio under faultbench: each stage's faults are its workers' touched pages of the align" "$fbj" \
    "[.jobs[] | ([.faultbench.workers[].mapping.page_size_evidence.expected_faults] | add) as \$e | (.minf + .majf) >= \$e and (.minf + .majf) <= \$e + 2 * .faultbench.members] | all"
fi

# compare --modes=pte,pmd,pud: the align's mode runs, the others are named;
# with one mode --repeat=auto has no pair to judge and stops at 3 rounds,
# and the warm-up ran on the device itself (no file made beside it).
if "$fb" compare --filename="$DAX_DEV" --size=8M --rw=randread --modes=pte,pmd,pud --repeat=auto >"$out/cmp.txt" 2>&1; then
  cat "$out/cmp.txt"
  grep -q "^$mapping/mmap " "$out/cmp.txt" && ok "compare ran $mapping" || bad "compare did not run $mapping"
  for other in $others; do
    grep -q "^not run: $other: " "$out/cmp.txt" && ok "compare names $other as not run" || bad "compare says nothing of $other"
  done
  grep -q "^--repeat=auto: no pte/pmd pair to judge, so the 3 rounds a spread needs" "$out/cmp.txt" \
    && ok "compare --repeat=auto with one mode: 3 rounds" || bad "compare --repeat=auto with one mode did not stop at 3 rounds"
  [ ! -e "$DAX_DEV.warmup" ] && ok "the warm-up made no file beside $DAX_DEV" || bad "the warm-up made $DAX_DEV.warmup"
else
  bad "compare --modes=pte,pmd,pud"; cat "$out/cmp.txt"
fi

if [ "${DAX_VM_NUMA:-0}" = 1 ]; then
  numa_matrix devdax "numa-matrix on device DAX: CPU node x the device, exact in every cell" \
    ".numa_matrix.dax_device == \"$name\" and .numa_matrix.mem_nodes == [$node] and .numa_matrix.marks[\"$node\"] == \"$name\" and (.numa_matrix.matrices[0].cells | length) == (.numa_matrix.cpu_nodes | length) and .numa_matrix.matrices[0].all_exact" \
    --filename="$DAX_DEV" --size=8M --rw=randread --modes=$mapping
  if [ "$align" = 2097152 ]; then
    # A tmpfs file: pages from the page allocator, where --membind puts them.
    mkdir -p "$out/tmpfs"
    numa_matrix tmpfs "numa-matrix on tmpfs: 2 x 2, exact in every cell" \
      ".numa_matrix.cpu_nodes == [0,1] and .numa_matrix.mem_nodes == [0,1] and (.numa_matrix.matrices[0].cells | length) == 4 and .numa_matrix.matrices[0].all_exact" \
      --directory="$out/tmpfs" --size=8M --rw=randread --modes=pte --unlink
  fi
fi

rm -rf "$out"
exit "$failed"
