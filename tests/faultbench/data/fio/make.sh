#!/bin/bash
# Makes the fio results under this directory (kept as test data for
# faultbench diff; see README.md). Run as root from anywhere:
#   tests/faultbench/data/fio/make.sh
# Each set is 3 runs of one fio job, one after another, 2 s each.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmpfs=$(mktemp -d /tmp/fio-data-tmpfs.XXXXXX)
disk=$(mktemp -d /var/tmp/fio-data-disk.XXXXXX)
mount -t tmpfs -o size=512m tmpfs "$tmpfs"
trap 'umount "$tmpfs"; rmdir "$tmpfs"; rm -rf "$disk"' EXIT
common=(--name=t --rw=randread --size=64M --runtime=2 --time_based --output-format=json)
set_of() {  # NAME FIO-ARGS...
  local name=$1; shift
  mkdir -p "$here/$name"
  for i in 1 2 3; do fio "${common[@]}" "$@" > "$here/$name/run$i.json"; done
  echo "$name: $(cat /proc/loadavg)"
}
# psync on tmpfs: the copy runs on the CPU, one job saturates one CPU.
set_of psync-4k --directory="$tmpfs" --ioengine=psync --bs=4k
set_of psync-64k --directory="$tmpfs" --ioengine=psync --bs=64k
set_of psync-4k-2jobs --directory="$tmpfs" --ioengine=psync --bs=4k --numjobs=2
# Rate-limited to 2000 IOPS: the same job twice, no CPU saturation.
set_of psync-4k-rate --directory="$tmpfs" --ioengine=psync --bs=4k --rate_iops=2000
set_of psync-4k-rate-again --directory="$tmpfs" --ioengine=psync --bs=4k --rate_iops=2000
# libaio with O_DIRECT on the disk under /var/tmp: queue depth 1 against 8.
set_of libaio-qd1 --directory="$disk" --ioengine=libaio --direct=1 --bs=4k --iodepth=1
set_of libaio-qd8 --directory="$disk" --ioengine=libaio --direct=1 --bs=4k --iodepth=8
