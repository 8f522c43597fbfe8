"""Fixtures for the pmstore module's tests: a fresh pool path on tmpfs, a
helper that runs a Python snippet in a child interpreter, and the two
lifetime checks that snapshots, transactions and plain writes share."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest


@pytest.fixture
def pool_dir():
    path = tempfile.mkdtemp(prefix="pmstore-py-", dir="/dev/shm")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def pool(pool_dir):
    return os.path.join(pool_dir, "pool")


@pytest.fixture
def small():
    """Open arguments for a small pool."""
    return {"initial_size": 8 << 20, "max_size": 64 << 20}


@pytest.fixture
def run_python():
    """run_python(code, *args): runs `code` in a fresh interpreter (this one,
    with this sys.path) and returns the CompletedProcess, text output."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))

    def run(code, *args, timeout=60):
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                              capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture
def exit_cleanly_with(pool, run_python):
    """exit_cleanly_with(code): a child interpreter fills `pool` with 100
    keys, runs `code` (which leaves something of the store alive, or closes
    it, before the interpreter exits), and must exit 0 with nothing on
    stderr; the 100 keys must then be intact and the pool clean."""
    import pmstore

    def run(code):
        child = run_python("""
import sys, gc
import pmstore
store = pmstore.Store(sys.argv[1], initial_size=8 << 20)
for i in range(100):
    store[b"k%03d" % i] = b"v%03d" % i
""" + code, pool)
        assert child.returncode == 0, child.stderr
        assert child.stderr == ""
        with pmstore.Store(pool, create=False) as store:
            assert [store[b"k%03d" % i] for i in range(100)] == [b"v%03d" % i for i in range(100)]
            assert store.check()["clean"]
    return run


@pytest.fixture
def close_while_writing(pool):
    """close_while_writing(store, write): a thread calls write(i) for
    i = 0, 1, ... (each writing key b"w%06d" % i) until the store is closed,
    while this thread closes it once key 100 is there; the writer must see
    only ValueError (closed), and the pool must check clean afterwards."""
    import pmstore

    def run(store, write):
        errors = []

        def writer():
            i = 0
            while True:
                try:
                    write(i)
                except ValueError:  # closed: the end
                    return
                except Exception as e:  # anything else is a failure
                    errors.append(e)
                    return
                i += 1

        thread = threading.Thread(target=writer)
        thread.start()
        while not store.closed:
            if b"w000100" in store:
                store.close()  # waits for a write that let go of the GIL
        thread.join()
        assert errors == []
        report = pmstore.check(pool)
        assert report["clean"], report["problems"]
    return run
