"""Whatever order Python frees things in, the store never crashes the
interpreter, and what was written is there on the next open. Each case
runs in a child interpreter, then the pool is reopened and checked here.
Also: a pool held by another process, and threads against close()."""
import os
import subprocess
import sys
import threading

import pytest

import pmstore

# Every child opens the pool in argv[1] and writes these first.
PROLOGUE = """
import sys, gc, threading
import pmstore
store = pmstore.Store(sys.argv[1], initial_size=8 << 20)
for i in range(100):
    store[b"k%03d" % i] = b"v%03d" % i
store.put(b"unsynced", b"written with sync=False", sync=False)
"""

EXIT_ORDERS = {
    # Module globals are cleared in insertion order: store first, then the view.
    "store_then_view": "view = store.view(b'k001')",
    # The view's name is older than the store's.
    "view_then_store": "del store\nview = None\nstore = pmstore.Store(sys.argv[1])\nview = store.view(b'k001')",
    # Only the cycle collector at exit can free them.
    "reference_cycle": "cycle = [store.view(b'k001'), store, store.items()]\ncycle.append(cycle)\ndel store",
    "half_read_iterator_and_view": "it = store.items()\nnext(it)\nview = store.view(b'k002')",
    "only_the_view_left": "view = store.view(b'k003')\ndel store\ngc.collect()",
    "closed_store_with_ended_iterator": "it = store.keys()\nnext(it)\nstore.close()",
    "daemon_thread_reading_a_view": """
view = store.view(b'k004')
def reader():
    while True:
        bytes(view)
threading.Thread(target=reader, daemon=True).start()
""",
    "view_held_by_a_finalizer": """
class Holder:
    def __init__(self, store):
        self.store, self.view = store, store.view(b'k005')
    def __del__(self):
        self.store.close()  # BufferError: reported as ignored, never a crash
holder = Holder(store)
""",
}

RAISING_EXITS = {
    # BufferError from close() replaces SystemExit: the exit status is 1.
    "sys_exit_inside_with_and_a_live_view": "with store:\n    view = store.view(b'k006')\n    sys.exit(0)",
    "uncaught_exception_with_a_live_view": "view = store.view(b'k007')\nraise RuntimeError('boom')",
}


def expect_pool_intact(pool):
    with pmstore.Store(pool, create=False) as store:
        assert [store[b"k%03d" % i] for i in range(100)] == [b"v%03d" % i for i in range(100)]
        assert store[b"unsynced"] == b"written with sync=False"
        assert store.check()["clean"]


@pytest.mark.parametrize("case", sorted(EXIT_ORDERS))
def test_interpreter_exit_in_any_order_is_clean(pool, run_python, case):
    child = run_python(PROLOGUE + EXIT_ORDERS[case], pool)
    assert child.returncode == 0, child.stderr
    assert "Fatal Python error" not in child.stderr and "Segmentation" not in child.stderr
    if case == "view_held_by_a_finalizer":
        assert "BufferError" in child.stderr, "the finalizer's close() was refused"
    else:
        assert child.stderr == ""
    expect_pool_intact(pool)


@pytest.mark.parametrize("case", sorted(RAISING_EXITS))
def test_exit_through_an_exception_with_a_live_view_is_clean(pool, run_python, case):
    child = run_python(PROLOGUE + RAISING_EXITS[case], pool)
    assert child.returncode == 1, (child.returncode, child.stderr)
    assert "Traceback" in child.stderr and "Fatal Python error" not in child.stderr
    expect_pool_intact(pool)


def test_pool_in_use_by_another_process_names_it(pool, small):
    pmstore.Store(pool, **small).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, pmstore\ns = pmstore.Store(sys.argv[1])\nprint('ready', flush=True)\n"
         "sys.stdin.read()", pool], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))
    try:
        assert holder.stdout.readline() == "ready\n"
        with pytest.raises(pmstore.FailedPreconditionError, match="in use by process %d" % holder.pid):
            pmstore.Store(pool)
        # A check shares the pool with the writer: it checks its newest commit.
        assert pmstore.check(pool)["clean"]
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    pmstore.Store(pool).close()


def test_threads_share_a_store(pool, small):
    with pmstore.Store(pool, **small) as store:
        def work(t):
            for i in range(2000):
                store[b"t%d/%05d" % (t, i)] = b"%d" % i
                assert store[b"t%d/%05d" % (t, i // 2)] == b"%d" % (i // 2)
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(1 for _ in store.keys()) == 8000
        assert store.check()["clean"]


def test_close_from_another_thread_never_pulls_the_store_from_under_a_write(pool, small, close_while_writing):
    store = pmstore.Store(pool, **small)

    def put(i):
        store[b"w%06d" % i] = b"x" * 100
    close_while_writing(store, put)
