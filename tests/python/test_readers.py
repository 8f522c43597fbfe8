"""The reader table: pmstore.readers(path) lists every open of a pool by any
process, a killed process's as stale, and pmstore.clear_stale_readers(path)
frees those."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import pmstore

HOLD = textwrap.dedent("""
    import sys
    import pmstore
    store = pmstore.Store(sys.argv[1], read_only=True)
    print("open", flush=True)
    sys.stdin.read()  # until the parent closes the pipe, or kills this process
    store.close()
""")


@pytest.fixture
def filled(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
    return pool


def hold(pool):
    """A process that holds `pool` open read-only until its stdin closes."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    child = subprocess.Popen([sys.executable, "-c", HOLD, pool], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout.readline() == "open\n"
    return child


def test_lists_every_process_and_this_one(filled):
    assert pmstore.readers(filled) == []
    child = hold(filled)
    try:
        with pmstore.Store(filled, read_only=True):
            readers = pmstore.readers(filled)
            assert sorted(r["pid"] for r in readers) == sorted([child.pid, os.getpid()])
            for r in readers:
                assert r["writable"] is False and r["stale"] is False
                assert r["opened_unix_ns"] > 0
    finally:
        child.stdin.close()
        assert child.wait(timeout=30) == 0
    assert pmstore.readers(filled) == []
    with pmstore.Store(filled) as writer:
        [me] = pmstore.readers(filled)
        assert me["pid"] == os.getpid() and me["writable"] is True


def test_each_open_shows_the_oldest_commit_it_reads(filled):
    with pmstore.Store(filled) as store:
        [me] = pmstore.readers(filled)
        assert me["pinned_commit"] is None
        older = store.snapshot()
        store[b"k2"] = b"v2"
        newer = store.snapshot()
        assert pmstore.readers(filled)[0]["pinned_commit"] == older.sequence < newer.sequence
        older.release()
        store[b"k3"] = b"v3"  # the next commit publishes the oldest that remains
        assert pmstore.readers(filled)[0]["pinned_commit"] == newer.sequence
        newer.release()
        with store.snapshot() as now:
            latest = now.sequence
        with store.transaction() as t:
            assert t[b"k"] == b"v"
            assert pmstore.readers(filled)[0]["pinned_commit"] == latest
        assert pmstore.readers(filled)[0]["pinned_commit"] is None


def test_a_writable_open_shows_its_last_commit_and_a_read_only_one_none(filled):
    with pmstore.Store(filled) as store:
        with store.snapshot() as snapshot:
            found = snapshot.sequence
        assert pmstore.readers(filled)[0]["last_commit"] == found
        store[b"k2"] = b"v2"
        with store.snapshot() as snapshot:
            now = snapshot.sequence
        assert pmstore.readers(filled)[0]["last_commit"] == now > found
    with pmstore.Store(filled, read_only=True):
        [me] = pmstore.readers(filled)
        assert me["writable"] is False and me["last_commit"] is None


def test_a_killed_process_is_stale_until_cleared(filled):
    child = hold(filled)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    [dead] = pmstore.readers(filled)
    assert dead["pid"] == child.pid and dead["stale"] is True
    assert pmstore.clear_stale_readers(filled) == 1
    assert pmstore.readers(filled) == []
    assert pmstore.clear_stale_readers(filled) == 0


def test_what_is_not_a_pool_is_refused(pool_dir):
    with pytest.raises(pmstore.NotFoundError):
        pmstore.readers(os.path.join(pool_dir, "missing"))
    with pytest.raises(pmstore.InvalidArgumentError, match="directory"):
        pmstore.readers(pool_dir)
    text = os.path.join(pool_dir, "text")
    with open(text, "w") as f:
        f.write("not a pool, though long enough to hold a superblock's magic\n" * 4)
    with pytest.raises(pmstore.InvalidArgumentError, match="not a pmstore pool"):
        pmstore.readers(text)
