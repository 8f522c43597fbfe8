#!/bin/bash
# fio's example job files and this project's mmap job files, run by fio
# itself and by faultbench: both JSON documents must have the same jobs,
# with the same jobname and groupid, in the same order; faultbench's has its
# signature (counting every stonewall stage's workers) and system beside them.
#
#   fio_structure.sh FAULTBENCH JOBS_DIR [--fio-mmap] [JOB.fio...]
#
# FB_DIR (default: a tmpfs mounted here, else a temp dir under $TMPDIR)
# holds both tools' files; FB_DAX_DEV is the file dev-dax.fio maps (default:
# a 16 MiB file in FB_DIR; inside the DAX VM a device DAX node). With
# FB_KEEP_DIR set, both JSON documents of each job file are kept there
# (NAME.fio.json, NAME.faultbench.json) for the caller's own checks.
# --fio-mmap: fio runs libpmem.fio and dev-dax.fio with ioengine=mmap
# instead, where its own engines cannot run (fio's libpmem refuses files
# that are not pmem, its dev-dax anything but a device DAX node). The
# jobname/groupid layout does not depend on the engine; faultbench always
# runs the job file as it is.
#
# Exit status: 0 every file agrees, 1 a file differs or a run failed,
# 77 when fio is not installed (skipped).
set -u
fb=$1 jobs=$2
shift 2
fio_mmap=0
if [ "${1:-}" = --fio-mmap ]; then fio_mmap=1; shift; fi
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(libpmem.fio dev-dax.fio test.fio mmap-groups.fio mmap-shared-file.fio)
command -v fio >/dev/null || { echo "SKIP: fio is not installed (scripts/setup installs it)"; exit 77; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed (scripts/setup installs it)"; exit 1; }

work=$(mktemp -d -t fio-structure-XXXXXX)
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted"
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${FB_DIR:-}" ]; then
  FB_DIR=$work/files
  mkdir -p "$FB_DIR"
  # tmpfs: a page cache fio's invalidate=1 cannot empty, so no run waits on the disk.
  if mount -t tmpfs -o size=400m tmpfs "$FB_DIR" 2>/dev/null; then mounted=$FB_DIR; fi
fi
export FB_DIR
if [ -z "${FB_DAX_DEV:-}" ]; then
  export FB_DAX_DEV=$FB_DIR/dev-dax.dat
  head -c 16M /dev/zero >"$FB_DAX_DEV"
fi

failed=0
layout() {  # JSON-FILE: one line per job, "jobname groupid"
  jq -r '.jobs[] | "\(.jobname) \(.groupid)"' "$1"
}
for name in "${files[@]}"; do
  job=$jobs/$name
  fio_job=$job
  if [ "$fio_mmap" = 1 ] && grep -Eq '^ioengine=(libpmem|dev-dax)$' "$job"; then
    fio_job=$work/fio-$name
    sed -E 's/^ioengine=(libpmem|dev-dax)$/ioengine=mmap/' "$job" >"$fio_job"
  fi
  if ! fio --output-format=json --output="$work/fio.json" "$fio_job" >"$work/fio.out" 2>&1; then
    echo "FAIL: $name: fio failed:"; cat "$work/fio.out"; failed=1; continue
  fi
  if ! "$fb" run --output-format=json --output="$work/fb.json" "$job" 2>"$work/fb.err"; then
    echo "FAIL: $name: faultbench failed:"; cat "$work/fb.err"; failed=1; continue
  fi
  if [ "$(layout "$work/fio.json")" = "$(layout "$work/fb.json")" ]; then
    echo "ok: $name: $(layout "$work/fb.json" | tr '\n' ';')"
  else
    echo "FAIL: $name: jobname/groupid differ"
    paste <(echo "fio"; layout "$work/fio.json") <(echo "faultbench"; layout "$work/fb.json")
    failed=1
  fi
  # What faultbench adds for a group: every worker, listed, and the sums.
  if ! jq -e '[.jobs[] | select(.faultbench.group_reporting) |
               (.faultbench.members == (.faultbench.workers | length)) and
               (.write.total_ios + .read.total_ios > 0)] | all' "$work/fb.json" >/dev/null; then
    echo "FAIL: $name: a group_reporting entry does not list its workers or did no I/O"; failed=1
  fi
  # Beside the entries, the run's signature and system: the signature's own
  # faults are every stage's workers' (the entries' minf + majf, groups too).
  if ! jq -e '(.signature.faults == ([.jobs[] | .minf + .majf] | add)) and
              (.signature.vmstat.pgfault >= .signature.faults) and (.system.kernel | length > 0)' \
       "$work/fb.json" >/dev/null; then
    echo "FAIL: $name: the signature does not count every stage's workers, or system is missing"; failed=1
  fi
  jq -r --arg n "$name" '.jobs[] | "measure: \($n) \(.jobname) g=\(.groupid) members=\(.faultbench.members // 1)
    engine=\(.["job options"].ioengine) read_ios=\(.read.total_ios) write_ios=\(.write.total_ios)
    majf=\(.majf) minf=\(.minf) pmd=\(.faultbench.mapping.pmd_bytes) pte=\(.faultbench.mapping.pte_bytes)
    granularity=\(.faultbench.mapping.granularity // .faultbench.workers[0].mapping.granularity)
    verify=\(.faultbench.mapping.verify_method // .faultbench.workers[0].mapping.verify_method)"' "$work/fb.json" |
    tr -s ' \n' ' ' | sed 's/ measure:/\nmeasure:/g'
  echo
  jq -r --arg n "$name" '.jobs[] | "measure-fio: \($n) \(.jobname) g=\(.groupid) majf=\(.majf) minf=\(.minf) read_ios=\(.read.total_ios) write_ios=\(.write.total_ios)"' "$work/fio.json"
  if [ -n "${FB_KEEP_DIR:-}" ]; then
    cp "$work/fio.json" "$FB_KEEP_DIR/$name.fio.json"
    cp "$work/fb.json" "$FB_KEEP_DIR/$name.faultbench.json"
  fi
  rm -f "$FB_DIR"/*.0.0 "$FB_DIR"/shared.dat
done
exit "$failed"
