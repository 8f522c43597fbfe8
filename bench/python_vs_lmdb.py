#!/usr/bin/python3
"""pmstore's Python module against py-lmdb, the same workload in the same run.

Keys of 16 B (random order) with 100 B values; every read finds its key
except `miss`, which is reported on its own. Per benchmark and side: the
median and the range of --repeat runs, fresh pool and environment each
run, the two sides alternating which goes first; then pmstore/lmdb as the
ratio of the medians, and the issue's two targets. One warm-up run of
each side comes first and is not counted: on a VM that hands free memory
back to its host, the first touch of fresh tmpfs pages costs a host fault
each, and would fall on whichever side ran first.

  put       pmstore: store[k] = v, durable on return (sync)
            lmdb:    one synced write transaction per put (writemap=True,
                     the faster of its durable modes; the default flags are
                     reported too, as `put (lmdb default flags)`)
  get       store[k]            vs  txn.get(k), all in one read transaction
  get/txn   store[k]            vs  a read transaction per get
  view      store.view(k)       vs  txn.get(k) with buffers=True (both zero copy)
  miss      store.get(k)        vs  txn.get(k), keys that are absent
  scan      store.items()       vs  txn.cursor(), whole store

Run as root for --huge-tmpfs (a private tmpfs, huge=always, mounted and
unmounted here); --dir measures where you say. PMEM2_FORCE_GRANULARITY is
set to CACHE_LINE (the code path of a DAX pool) unless --granularity=auto.
Timings are this machine's, under whatever else it runs: the load average
is printed before and after.
"""
import argparse
import datetime
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import lmdb

VALUE_SIZE = 100


def bench_parser(doc):
    """An argument parser whose help is the script's docstring `doc`, with
    the choices every bench script offers: where it measures and at what
    granularity."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(doc.split("\n")[2:]))
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--huge-tmpfs", action="store_true", help="mount a private huge=always tmpfs (root)")
    where.add_argument("--dir", help="measure in this directory (it is left as found)")
    parser.add_argument("--granularity", choices=("cache_line", "auto"), default="cache_line",
                        help="cache_line: PMEM2_FORCE_GRANULARITY=CACHE_LINE (default); auto: what the mapping offers")
    return parser


def force_granularity(args):
    """Sets PMEM2_FORCE_GRANULARITY as --granularity asks, before pmstore
    is imported or run."""
    if args.granularity == "cache_line":
        os.environ["PMEM2_FORCE_GRANULARITY"] = "CACHE_LINE"


def parse_args():
    parser = bench_parser(__doc__)
    parser.add_argument("--num", type=int, default=200000, help="keys (default 200000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per benchmark (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side first (default 1)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if not args.huge_tmpfs and not args.dir:
        parser.error("give --huge-tmpfs (as root) or --dir DIR")
    if args.num < 1 or args.repeat < 1 or args.warmup < 0:
        parser.error("--num and --repeat must be positive, --warmup not negative")
    return args


class HugeTmpfs:
    """A tmpfs of our own with huge=always, gone at exit."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="pmstore-pybench-")
        size = "size=4g,huge=always"
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", size, "tmpfs", self.path], capture_output=True, text=True)
        if result.returncode != 0:
            os.rmdir(self.path)
            sys.exit("python_vs_lmdb: cannot mount a tmpfs (-o %s) at %s: %s (run as root, or use --dir)"
                     % (size, self.path, result.stderr.strip()))
        return self.path

    def __exit__(self, *exc):
        subprocess.run(["umount", self.path], check=False)
        os.rmdir(self.path)


def workload(num):
    rng = random.Random(20261201)
    keys = [b"%016d" % i for i in range(num)]
    rng.shuffle(keys)
    values = [rng.randbytes(VALUE_SIZE) for _ in range(num)]
    lookups = keys[:]
    rng.shuffle(lookups)
    misses = [b"%015dx" % i for i in range(max(1, num // 4))]
    rng.shuffle(misses)
    return keys, values, lookups, misses


def rate(ops, loop):
    start = time.perf_counter()
    loop()
    return ops / (time.perf_counter() - start)


def run_pmstore(pmstore, directory, keys, values, lookups, misses):
    path = os.path.join(directory, "pool")
    store = pmstore.Store(path, initial_size=max(64 << 20, len(keys) * 512), max_size=16 << 30)
    out = {}

    def put():
        for k, v in zip(keys, values):
            store[k] = v

    def get():
        for k in lookups:
            store[k]

    def view():
        for k in lookups:
            store.view(k)

    def miss():
        for k in misses:
            store.get(k)

    def scan():
        for _ in store.items():
            pass

    out["put"] = rate(len(keys), put)
    out["get"] = rate(len(lookups), get)
    out["get/txn"] = out["get"]  # a pmstore read needs no transaction
    out["view"] = rate(len(lookups), view)
    out["miss"] = rate(len(misses), miss)
    out["scan"] = rate(len(keys), scan)
    stats = store.stats()
    store.close()
    os.unlink(path)
    return out, stats


def run_lmdb(directory, keys, values, lookups, misses):
    out = {}
    path = os.path.join(directory, "lmdb")
    env = lmdb.open(path, map_size=max(1 << 30, len(keys) * 1024), writemap=True, sync=True, metasync=True)

    def put():
        for k, v in zip(keys, values):
            with env.begin(write=True) as txn:
                txn.put(k, v)

    def get():
        with env.begin() as txn:
            for k in lookups:
                txn.get(k)

    def get_txn():
        for k in lookups:
            with env.begin() as txn:
                txn.get(k)

    def view():
        with env.begin(buffers=True) as txn:
            for k in lookups:
                txn.get(k)

    def miss():
        with env.begin() as txn:
            for k in misses:
                txn.get(k)

    def scan():
        with env.begin() as txn:
            for _ in txn.cursor():
                pass

    out["put"] = rate(len(keys), put)
    out["get"] = rate(len(lookups), get)
    out["get/txn"] = rate(len(lookups), get_txn)
    out["view"] = rate(len(lookups), view)
    out["miss"] = rate(len(misses), miss)
    out["scan"] = rate(len(keys), scan)
    env.close()
    shutil.rmtree(path)

    default_path = os.path.join(directory, "lmdb-default")
    env = lmdb.open(default_path, map_size=max(1 << 30, len(keys) * 1024))

    def put_default():
        for k, v in zip(keys, values):
            with env.begin(write=True) as txn:
                txn.put(k, v)

    out["put (lmdb default flags)"] = rate(len(keys), put_default)
    env.close()
    shutil.rmtree(default_path)
    return out


def machine():
    facts = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "kernel": platform.release(), "python": "%s (%s)" % (platform.python_version(), sys.executable)}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        fields = dict(line.split(":", 1) for line in lscpu.splitlines() if ":" in line)
        facts["cpu"] = fields.get("Model name", "?").strip()
        facts["hypervisor"] = fields.get("Hypervisor vendor", "none").strip()
    except OSError:
        facts["cpu"] = facts["hypervisor"] = "unknown (no lscpu)"
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True)
    facts["virtualization"] = virt.stdout.strip() or "none"
    return facts


def mount_of(directory):
    best = ("?", "?", "?")
    with open("/proc/mounts") as mounts:
        for line in mounts:
            _, point, fstype, options = line.split()[:4]
            if (directory + "/").startswith(point.rstrip("/") + "/") and len(point) >= len(best[0]):
                best = (point, fstype, options)
    return "%s (%s, %s)" % best


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def summarize(runs):
    return {"median": statistics.median(runs), "min": min(runs), "max": max(runs), "runs": runs}


def measure(args, directory):
    import pmstore  # after PMEM2_FORCE_GRANULARITY is set
    keys, values, lookups, misses = workload(args.num)
    sides = {"pmstore": {}, "lmdb": {}}
    stats = None
    for run in range(-args.warmup, args.repeat):
        order = ("pmstore", "lmdb") if run % 2 == 0 else ("lmdb", "pmstore")
        for side in order:
            if side == "pmstore":
                figures, stats = run_pmstore(pmstore, directory, keys, values, lookups, misses)
            else:
                figures = run_lmdb(directory, keys, values, lookups, misses)
            if run >= 0:
                for name, value in figures.items():
                    sides[side].setdefault(name, []).append(value)
            print("  %s %d/%d %-7s done" % ("warm-up" if run < 0 else "run", run + 1 if run >= 0 else run + 1 +
                                            args.warmup, args.warmup if run < 0 else args.repeat, side),
                  file=sys.stderr, flush=True)
    return {side: {name: summarize(runs) for name, runs in figures.items()} for side, figures in sides.items()}, \
        stats, pmstore.__version__


def verdict(ours, peer, target):
    ratio = ours["median"] / peer["median"]
    evidence = "medians %.2fx" % ratio
    if ours["min"] > peer["max"] * target:
        evidence += "; every pmstore run beat every lmdb run x%.1f" % target
    elif ours["max"] < peer["min"] * target:
        evidence += "; every pmstore run missed"
    else:
        evidence += "; the ranges overlap"
    return "%s (%s)" % ("met" if ratio >= target else "NOT met", evidence)


def report(args, directory, where, results, stats, version, facts, load_before, load_after):
    print("pmstore %s (Python) vs py-lmdb %s (LMDB %s), %d keys of 16 B, %d B values, %d run(s) each after %d "
          "warm-up" % (version, lmdb.__version__, ".".join(map(str, lmdb.version())), args.num, VALUE_SIZE,
                       args.repeat, args.warmup))
    print("date %s; %s; hypervisor %s (%s); kernel %s; Python %s" % (facts["date"], facts["cpu"], facts["hypervisor"],
                                                                   facts["virtualization"], facts["kernel"],
                                                                   facts["python"]))
    print("dir %s on %s; pmstore granularity %s, PMD-mapped %s; load average %s before, %s after"
          % (directory, where, stats["granularity"],
             "%.0f%%" % (100 * stats["pmd_mapped_share"]) if stats["pmd_mapped_share"] >= 0 else "unknown",
             load_before, load_after))
    print()
    print("%-26s %28s %28s %13s" % ("benchmark (ops/s)", "pmstore median [min-max]", "lmdb median [min-max]",
                                    "pmstore/lmdb"))

    def cell(s):
        return "%9.0f [%7.0f-%7.0f]" % (s["median"], s["min"], s["max"])

    ours, peer = results["pmstore"], results["lmdb"]
    for name in ("put", "get", "get/txn", "view", "miss", "scan"):
        print("%-26s %28s %28s %12.2fx" % (name, cell(ours[name]), cell(peer[name]),
                                           ours[name]["median"] / peer[name]["median"]))
    default = peer["put (lmdb default flags)"]
    print("%-26s %28s %28s %12.2fx" % ("put (lmdb default flags)", "", cell(default),
                                       ours["put"]["median"] / default["median"]))
    print()
    print("target store[k] >= lmdb get in one read txn:      " + verdict(ours["get"], peer["get"], 1.0))
    print("target durable store[k] = v >= 1.5x lmdb synced put: " + verdict(ours["put"], peer["put"], 1.5))


def main():
    args = parse_args()
    force_granularity(args)
    facts = machine()
    load_before = loadavg()
    if args.huge_tmpfs:
        with HugeTmpfs() as directory:
            where = mount_of(directory)
            results, stats, version = measure(args, directory)
    else:
        directory = os.path.abspath(args.dir)
        where = mount_of(directory)
        results, stats, version = measure(args, directory)
    load_after = loadavg()
    report(args, directory, where, results, stats, version, facts, load_before, load_after)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": facts, "dir": where, "load_before": load_before, "load_after": load_after,
                       "num": args.num, "value_size": VALUE_SIZE, "granularity": stats["granularity"],
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
