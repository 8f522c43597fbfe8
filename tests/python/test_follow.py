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


def _read_snapshot_while_written(path, taken, written, result):
    """Takes a snapshot of a read-only open, waits for the writer's
    commits, then reads it: every key, forward and backward."""
    with pmstore.Store(path, read_only=True) as store:
        with store.snapshot() as snap:
            taken.set()
            written.wait(timeout=30)
            result.put(
                (
                    store.get(b"k000", snapshot=snap),
                    b"gone" in dict(store.items(snapshot=snap)),
                    list(store.items(snapshot=snap)),
                    list(store.items(snapshot=snap, reverse=True)),
                )
            )


def test_a_snapshot_of_a_reader_process_reads_its_commit_while_the_writer_rewrites_every_key(pool, small):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    context = multiprocessing.get_context("spawn")
    with pmstore.Store(pool, **small) as writer:
        _write_round(writer, 0)  # "gone" is there at even versions
        taken, written, result = context.Event(), context.Event(), context.Queue()
        reader = context.Process(target=_read_snapshot_while_written, args=(pool, taken, written, result))
        reader.start()
        assert taken.wait(timeout=30)
        for version in range(1, 20):
            _write_round(writer, version)
        written.set()
        first, has_gone, forward, backward = result.get(timeout=30)
        reader.join(timeout=30)
    assert first == b"v0"
    assert has_gone
    expected = [(b"gone", b"back")] + [(b"k%03d" % i, b"v0") for i in range(KEYS)]
    assert forward == expected
    assert backward == expected[::-1]
