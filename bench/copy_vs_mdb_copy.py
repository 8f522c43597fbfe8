#!/usr/bin/python3
"""`pmstore copy` against LMDB's `mdb_copy`, the same content in the same run.

Two contents, each in a pool (filled through the Python module) and in an
LMDB environment (filled through py-lmdb) holding the same keys and values:

  small   --num keys of 16 B (random order) with 100 B values
  large   --large values of 4 MiB under 16 B keys

Per content and side: wall time of the whole command (process start to
exit, so both include opening the source, creating the destination and
making it durable), as keys/s and MB/s of keys plus values; the median
and range of --repeat runs, the sides alternating which goes first, a
fresh destination each run, after --warmup uncounted runs of each side
(the first touch of fresh tmpfs pages costs a host fault each on a VM
that hands free memory back). Sides:

  pmstore copy   `pmstore copy SRC DEST --noprogress` (a packed copy)
  mdb_copy       `mdb_copy SRC DEST` (page for page, free pages too)
  mdb_copy -c    `mdb_copy -c SRC DEST` (compacting: the like of pmstore's)

then pmstore/mdb_copy as the ratio of the medians. Run as root for
--huge-tmpfs (a private tmpfs, huge=always, mounted and unmounted here);
--dir measures where you say. PMEM2_FORCE_GRANULARITY is set to
CACHE_LINE (the code path of a DAX pool) unless --granularity=auto. The
load average is printed before and after.
"""
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

import lmdb

from python_vs_lmdb import HugeTmpfs, bench_parser, force_granularity, loadavg, machine, mount_of

KEY_SIZE = 16
SMALL_VALUE = 100
LARGE_VALUE = 4 << 20


def parse_args():
    parser = bench_parser(__doc__)
    parser.add_argument("--pmstore", default="build/bin/pmstore", help="the pmstore command (default build/bin/pmstore)")
    parser.add_argument("--num", type=int, default=1000000, help="keys of the small content (default 1000000)")
    parser.add_argument("--large", type=int, default=32, help="4 MiB values of the large content (default 32)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side first (default 1)")
    args = parser.parse_args()
    if not args.huge_tmpfs and not args.dir:
        parser.error("give --huge-tmpfs (as root) or --dir DIR")
    if args.num < 1 or args.large < 1 or args.repeat < 1 or args.warmup < 0:
        parser.error("--num, --large and --repeat must be positive, --warmup not negative")
    if shutil.which("mdb_copy") is None:
        parser.error("mdb_copy is missing: install lmdb-utils (scripts/setup does)")
    return args


def contents(args):
    rng = random.Random(20261201)
    small = [b"%016d" % i for i in range(args.num)]
    rng.shuffle(small)
    yield "small", [(k, rng.randbytes(SMALL_VALUE)) for k in small]
    yield "large", [(b"%016d" % i, rng.randbytes(LARGE_VALUE)) for i in range(args.large)]


def fill(pmstore, directory, entries):
    """The pool and the LMDB environment of `entries`; returns their paths."""
    data_bytes = sum(len(k) + len(v) for k, v in entries)
    pool = os.path.join(directory, "src.pool")
    with pmstore.Store(pool, initial_size=max(64 << 20, data_bytes * 3), max_size=16 << 30, sync=False) as store:
        for start in range(0, len(entries), 1000):
            with store.batch() as batch:
                for k, v in entries[start:start + 1000]:
                    batch[k] = v
    env_dir = os.path.join(directory, "src.lmdb")
    os.mkdir(env_dir)
    env = lmdb.open(env_dir, map_size=max(1 << 30, data_bytes * 4), writemap=True)
    with env.begin(write=True) as txn:
        for k, v in entries:
            txn.put(k, v)
    env.close()
    return pool, env_dir


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("copy_vs_mdb_copy: %s failed: %s" % (" ".join(command), result.stderr.strip()))
    return seconds


def measure(args, directory, pool, env_dir):
    sides = {"pmstore copy": [], "mdb_copy": [], "mdb_copy -c": []}
    order = list(sides)
    for run in range(-args.warmup, args.repeat):
        for side in order if run % 2 == 0 else reversed(order):
            dest = os.path.join(directory, "dest")
            if side == "pmstore copy":
                seconds = timed([args.pmstore, "copy", pool, dest, "--noprogress"])
                os.unlink(dest)
            else:
                os.mkdir(dest)
                seconds = timed(["mdb_copy"] + (["-c"] if side.endswith("-c") else []) + [env_dir, dest])
                shutil.rmtree(dest)
            if run >= 0:
                sides[side].append(seconds)
        print("  %s done" % ("warm-up" if run < 0 else "run %d/%d" % (run + 1, args.repeat)), file=sys.stderr,
              flush=True)
    return sides


def report(name, entries, sides):
    keys = len(entries)
    data_mb = sum(len(k) + len(v) for k, v in entries) / 1e6
    print("%s: %d keys, %.1f MB of keys and values" % (name, keys, data_mb))
    print("  %-14s %30s %30s %10s" % ("side", "keys/s median [min-max]", "MB/s median [min-max]", "speed pmstore/it"))
    ours = statistics.median(sides["pmstore copy"])
    for side, runs in sides.items():
        median = statistics.median(runs)
        print("  %-14s %12.0f [%7.0f-%7.0f] %12.1f [%6.1f-%6.1f] %9.2fx"
              % (side, keys / median, keys / max(runs), keys / min(runs), data_mb / median, data_mb / max(runs),
                 data_mb / min(runs), median / ours))


def main():
    args = parse_args()
    force_granularity(args)
    import pmstore  # after PMEM2_FORCE_GRANULARITY is set
    facts = machine()
    load_before = loadavg()

    def run_in(directory):
        print("pmstore copy %s vs mdb_copy (LMDB %s), %d run(s) each after %d warm-up; date %s; %s; hypervisor %s (%s); kernel %s"
              % (pmstore.__version__, ".".join(map(str, lmdb.version())), args.repeat, args.warmup, facts["date"], facts["cpu"],
                 facts["hypervisor"], facts["virtualization"], facts["kernel"]))
        print("dir %s on %s; PMEM2_FORCE_GRANULARITY=%s" % (directory, mount_of(directory),
                                                             os.environ.get("PMEM2_FORCE_GRANULARITY", "unset")))
        for name, entries in contents(args):
            scratch = os.path.join(directory, "copy-bench-%d" % os.getpid())
            os.mkdir(scratch)
            try:
                pool, env_dir = fill(pmstore, scratch, entries)
                report(name, entries, measure(args, scratch, pool, env_dir))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        print("load average %s before, %s after" % (load_before, loadavg()))

    if args.huge_tmpfs:
        with HugeTmpfs() as directory:
            run_in(directory)
    else:
        run_in(os.path.abspath(args.dir))


if __name__ == "__main__":
    main()
