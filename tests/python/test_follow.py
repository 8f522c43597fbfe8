"""A writer process and a multiprocessing pool of reader processes on one
pool, as a web service's workers use it: after each commit returns, every
reader's next read sees it, without reopening."""
import multiprocessing
import os
import sys

import pmstore

KEYS = 200
WORKERS = 3
_store = None  # each worker's read-only open
_all_read = None  # a barrier: each round's reads, one in every worker


def _open_read_only(path, barrier):
    global _store, _all_read
    _store = pmstore.Store(path, read_only=True)
    _all_read = barrier


def _read_all(_):
    """Every key's value in this worker, and its pid. Every worker takes
    one of a round's tasks: each waits here for the others."""
    _all_read.wait(timeout=30)
    return os.getpid(), [_store.get(b"k%03d" % i) for i in range(KEYS)]


def _write_round(store, version):
    with store.batch() as batch:
        for i in range(KEYS):
            batch.put(b"k%03d" % i, b"v%d" % version)
        if version % 2:
            batch.delete(b"gone")
        else:
            batch.put(b"gone", b"back")


def test_a_pool_of_reader_processes_sees_each_commit_of_the_writer(pool, small):
    # Spawned workers import this module afresh: they find pmstore where
    # this interpreter did.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    context = multiprocessing.get_context("spawn")
    with pmstore.Store(pool, **small) as writer:
        _write_round(writer, 0)
        barrier = context.Barrier(WORKERS)
        with context.Pool(WORKERS, initializer=_open_read_only, initargs=(pool, barrier)) as readers:
            for version in range(1, 30):
                _write_round(writer, version)
                pids = set()
                for pid, values in readers.map(_read_all, range(WORKERS), chunksize=1):
                    pids.add(pid)
                    assert values == [b"v%d" % version] * KEYS, (version, pid)
                assert len(pids) == WORKERS, "each worker was to read once a round"
            assert pmstore.readers(pool)[0]["writable"]
