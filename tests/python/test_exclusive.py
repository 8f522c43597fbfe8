"""Processes on one pool: an exclusive=True open keeps out what it shuts
out (a writable one every other open, a read-only one writers); without
it a read-only process follows the writer's commits, and pmstore.check
checks the writer's newest commit. The other process is a child
interpreter."""
import os
import subprocess
import sys
import textwrap

import pytest

import pmstore

# Opens sys.argv[1] with the keywords in sys.argv[2] (a dict literal) and
# prints "open", or the exception's type and message; then, for each line
# of stdin, prints the value of that key (or None) until stdin closes.
OTHER = textwrap.dedent("""
    import ast, sys
    import pmstore
    try:
        store = pmstore.Store(sys.argv[1], create=False, **ast.literal_eval(sys.argv[2]))
    except pmstore.Error as e:
        print(type(e).__name__, e, flush=True)
        sys.exit(0)
    print("open", flush=True)
    for line in sys.stdin:
        print(store.get(line.strip().encode()), flush=True)
    store.close()
""")


class Other:
    """Another process that opens the pool with `kwargs`."""

    def __init__(self, pool, **kwargs):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.process = subprocess.Popen([sys.executable, "-c", OTHER, pool, repr(kwargs)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.opened = self.process.stdout.readline().strip()

    def get(self, key):
        self.process.stdin.write(key + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def close(self):
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0


@pytest.fixture
def filled(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
    return pool


def assert_refused_by(opened, pid):
    assert opened.startswith("FailedPreconditionError "), opened
    assert "pool in use by process %d" % pid in opened, opened


def test_an_exclusive_writer_shuts_out_read_only_processes_and_they_shut_it_out(filled):
    with pmstore.Store(filled, exclusive=True) as store:
        reader = Other(filled, read_only=True)
        reader.close()
        assert_refused_by(reader.opened, os.getpid())
        store[b"k"] = b"w"
    reader = Other(filled, read_only=True)
    try:
        assert reader.opened == "open"
        with pytest.raises(pmstore.FailedPreconditionError, match="pool in use by process %d" % reader.process.pid):
            pmstore.Store(filled, exclusive=True)
    finally:
        reader.close()


def test_an_exclusive_read_only_open_shuts_out_writers_but_not_readers(filled):
    with pmstore.Store(filled, read_only=True, exclusive=True) as store:
        writer = Other(filled)
        writer.close()
        assert_refused_by(writer.opened, os.getpid())
        reader = Other(filled, read_only=True)
        try:
            assert reader.opened == "open"
            assert reader.get("k") == "b'v'"
        finally:
            reader.close()
        assert store[b"k"] == b"v"


def test_without_exclusive_a_read_only_process_follows_the_writers_commits(filled):
    with pmstore.Store(filled) as writer:
        reader = Other(filled, read_only=True)
        try:
            assert reader.opened == "open"
            assert reader.get("k") == "b'v'"
            assert reader.get("late") == "None"
            writer[b"late"] = b"after the reader opened"  # durable: sync is the default
            assert reader.get("late") == "b'after the reader opened'"
            writer[b"k"] = b"w"
            assert reader.get("k") == "b'w'"
        finally:
            reader.close()


# pmstore.check in another process, its report on one line.
CHECK = 'import sys, pmstore; r = pmstore.check(sys.argv[1]); print(r["clean"], r["keys"], r["problems"])'


def test_a_check_of_another_process_checks_the_writers_newest_commit(filled):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    with pmstore.Store(filled) as writer:
        for i in range(100):
            writer[b"w%03d" % i] = b"x"
        checked = subprocess.run([sys.executable, "-c", CHECK, filled], capture_output=True, text=True, env=env,
                                 timeout=60)
        assert checked.stdout.strip() == "True 101 []", checked.stdout + checked.stderr
        writer[b"after"] = b"the check"  # the writer's turn came back
        assert writer[b"after"] == b"the check"
