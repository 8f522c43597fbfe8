"""pmstore.Snapshot: every read as of the snapshot while writes go on, the
`snapshot=` argument of the Store's reads, release, and close() with a
snapshot alive (in a child interpreter too: never a crash)."""
import pytest

import pmstore


def fill(store):
    for i in range(2000):  # more than an iterator's refill of 1024 entries
        store[b"k%04d" % i] = b"old%d" % i


def test_snapshot_reads_the_state_when_it_was_taken(pool, small):
    with pmstore.Store(pool, **small) as store:
        fill(store)
        then = dict(store.items())
        with store.snapshot() as snap:
            for i in range(0, 2000, 2):
                del store[b"k%04d" % i]
            store[b"k0001"] = b"changed"
            store[b"new"] = b"added"
            assert snap[b"k0000"] == b"old0" and snap[b"k0001"] == b"old1"
            assert store[b"k0001"] == b"changed"
            with pytest.raises(KeyError):
                snap[b"new"]
            assert snap.get(b"new") is None and snap.get(b"new", b"d") == b"d"
            assert snap.get(b"k0002", verify_checksums=True) == b"old2"
            assert b"k0000" in snap and b"new" not in snap
            assert snap.multi_get([b"k0000", b"new", b"k0001"]) == [b"old0", None, b"old1"]
            assert bytes(snap.view(b"k0004")) == b"old4"
            assert dict(snap.items()) == then
            assert list(snap) == sorted(then)
            assert list(snap.keys(prefix=b"k19")) == [b"k19%02d" % i for i in range(100)]
            assert list(snap.values(start=b"k0010", stop=b"k0012")) == [b"old10", b"old11"]
            # The Store's reads with snapshot= read the same.
            assert store.get(b"k0000", snapshot=snap) == b"old0"
            assert store.multi_get([b"k0000", b"new"], snapshot=snap) == [b"old0", None]
            assert dict(store.items(snapshot=snap)) == then
            assert list(store.keys(prefix=b"k000", snapshot=snap)) == [b"k000%d" % i for i in range(10)]
            assert bytes(store.view(b"k0000", snapshot=snap)) == b"old0"
        assert snap.released
        assert b"k0000" not in store


def test_sequence_counts_commits(pool, small):
    with pmstore.Store(pool, **small) as store:
        with store.snapshot() as first:
            store[b"a"] = b"1"
            store.put(b"b", b"2", sync=False)
            with store.snapshot() as second:
                assert second.sequence == first.sequence + 2
                assert second.store is store


def test_released_snapshot_raises_value_error_and_release_twice_is_fine(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        snap = store.snapshot()
        snap.release()
        snap.release()
        for read in (lambda: snap[b"k"], lambda: snap.get(b"k"), lambda: b"k" in snap, lambda: list(snap),
                     lambda: store.get(b"k", snapshot=snap), lambda: snap.sequence):
            with pytest.raises(ValueError, match="released"):
                read()


def test_an_iterator_keeps_a_released_snapshot_until_it_ends(pool, small):
    with pmstore.Store(pool, **small) as store:
        fill(store)
        snap = store.snapshot()
        it = snap.keys()
        first = next(it)
        snap.release()
        for i in range(2000):
            del store[b"k%04d" % i]
        assert [first] + list(it) == [b"k%04d" % i for i in range(2000)]


def test_bad_snapshot_arguments(pool, pool_dir, small):
    with pmstore.Store(pool, **small) as store, \
            pmstore.Store(pool_dir + "/other", **small) as other:
        store[b"k"] = b"v"
        with pytest.raises(TypeError, match="pmstore.Snapshot"):
            store.get(b"k", snapshot=b"not a snapshot")
        with other.snapshot() as foreign:
            with pytest.raises(pmstore.InvalidArgumentError, match="another store"):
                store.get(b"k", snapshot=foreign)
            with pytest.raises(pmstore.InvalidArgumentError):
                list(store.items(snapshot=foreign))


def test_close_ends_snapshots_and_their_iterators(pool, small):
    store = pmstore.Store(pool, **small)
    fill(store)
    snap = store.snapshot()
    it = snap.items()
    next(it)
    store.close()
    with pytest.raises(ValueError, match="closed"):
        snap[b"k0000"]
    with pytest.raises(ValueError, match="closed"):
        next(it)
    snap.release()
    with pytest.raises(ValueError):
        store.snapshot()


EXIT_CASES = {
    "snapshot_left_open": "snap = store.snapshot()\nit = snap.items()\nnext(it)",
    "snapshot_in_a_cycle": "snap = store.snapshot()\ncycle = [snap, store, snap.keys()]\ncycle.append(cycle)\n"
                           "del snap, store",
    "store_closed_under_a_snapshot": "snap = store.snapshot()\nstore.close()",
    "only_the_snapshot_left": "snap = store.snapshot()\ndel store\ngc.collect()",
}


@pytest.mark.parametrize("case", sorted(EXIT_CASES))
def test_interpreter_exit_with_a_snapshot_alive_is_clean(exit_cleanly_with, case):
    exit_cleanly_with(EXIT_CASES[case])
