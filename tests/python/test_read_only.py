"""Read-only opens (read_only=True) and new pools' permissions (mode=)."""
import os
import stat

import pytest

import pmstore


@pytest.fixture
def filled(pool, small):
    with pmstore.Store(pool, **small) as store:
        for i in range(20):
            store[b"k%02d" % i] = b"v%02d" % i
    return pool


def test_reads_and_refuses_writes_with_permission_error(filled):
    with pmstore.Store(filled, read_only=True) as store:
        assert store[b"k07"] == b"v07"
        assert [k for k in reversed(store)][:2] == [b"k19", b"k18"]
        assert store.stats()["read_only"] is True
        for write in (lambda: store.put(b"k07", b"x"), lambda: store.__setitem__(b"new", b"x"),
                      lambda: store.delete(b"k01"), store.sync):
            with pytest.raises(pmstore.PermissionDeniedError, match="read-only") as raised:
                write()
            assert isinstance(raised.value, PermissionError)
            assert raised.value.code == "PERMISSION_DENIED"
        with pytest.raises(PermissionError):
            with store.transaction() as t:
                t[b"k01"] = t[b"k02"]
        with store.transaction() as t:  # reads only: commits
            assert t[b"k03"] == b"v03"
        assert store[b"k01"] == b"v01"


def test_read_only_opens_share_the_pool_with_each_other_and_a_writer(filled, run_python):
    other_process = """
import sys
import pmstore
try:
    with pmstore.Store(sys.argv[1], read_only=sys.argv[2] == "read_only") as store:
        print(store[b"k00"].decode())
except pmstore.FailedPreconditionError as e:
    print(e)
"""
    with pmstore.Store(filled, read_only=True) as first:
        assert first[b"k00"] == b"v00"
        assert run_python(other_process, filled, "read_only").stdout.strip() == "v00"
        assert run_python(other_process, filled, "writable").stdout.strip() == "v00"
        # One process opens a pool once, read-only or not.
        for read_only in (True, False):
            with pytest.raises(pmstore.FailedPreconditionError, match="already open in this process"):
                pmstore.Store(filled, read_only=read_only)
    with pmstore.Store(filled) as writer:
        writer[b"k00"] = b"new"
        assert run_python(other_process, filled, "read_only").stdout.strip() == "new"


def test_never_creates(pool):
    with pytest.raises(pmstore.NotFoundError, match="read-only"):
        pmstore.Store(pool, create=True, read_only=True)
    assert not os.path.exists(pool)


def test_a_user_who_may_only_read_reads_the_pool(filled, pool_dir, run_python):
    os.chmod(pool_dir, 0o755)
    child = run_python("""
import os, sys
import pmstore
os.setgid(65534)
os.setuid(65534)
try:
    pmstore.Store(sys.argv[1])
    sys.exit("a writable open succeeded without write permission")
except pmstore.PermissionDeniedError as e:
    assert "read-only" in str(e), e
with pmstore.Store(sys.argv[1], read_only=True) as store:
    assert store[b"k05"] == b"v05"
print("ok")
""", filled)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"


def test_mode_sets_a_new_pools_permissions_less_the_umask(pool_dir, small):
    old = os.umask(0o022)
    try:
        private = os.path.join(pool_dir, "private")
        pmstore.Store(private, mode=0o600, **small).close()
        assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
        wide = os.path.join(pool_dir, "wide")
        pmstore.Store(wide, mode=0o666, **small).close()
        assert stat.S_IMODE(os.stat(wide).st_mode) == 0o644
    finally:
        os.umask(old)
    with pytest.raises(pmstore.InvalidArgumentError, match="permission bits"):
        pmstore.Store(os.path.join(pool_dir, "bad"), mode=0o4755, **small)
