"""Store.copy_to: the copy's contents and geometry, a copy while another
Python thread writes, and each error, which leaves nothing behind."""
import os
import pathlib
import stat
import threading
import time

import pytest

import pmstore


def fill(store, count):
    with store.batch() as batch:
        for i in range(count):
            batch[b"key%d" % i] = bytes([97 + i % 26]) * (i % 300)


def test_copy_holds_every_entry_and_the_pools_geometry(pool_dir, pool, small):
    dest = os.path.join(pool_dir, "copy")
    with pmstore.Store(pool, **small) as store:
        fill(store, 3000)
        store[b""] = b"empty key"
        store[b"large"] = b"L" * (3 << 20)
        expected = dict(store.items())
        store.copy_to(dest)
        geometry = store.stats()
    assert pmstore.check(dest)["clean"]
    with pmstore.Store(dest, create=False) as copy:
        assert dict(copy.items()) == expected
        # Created at the source's size; the copy's close may grow it by one
        # step (a quarter, and a chunk) to hold its separator image.
        assert geometry["pool_bytes"] <= copy.stats()["pool_bytes"] <= \
            geometry["pool_bytes"] * 5 // 4 + (2 << 20)
        assert copy.stats()["max_pool_bytes"] == geometry["max_pool_bytes"]
    assert sorted(os.listdir(pool_dir)) == ["copy", "pool"]


def test_copy_has_the_sources_permission_bits(pool_dir, small):
    source = os.path.join(pool_dir, "private")
    dest = os.path.join(pool_dir, "copy")
    before = os.umask(0o022)
    try:
        with pmstore.Store(source, mode=0o640, **small) as store:
            store[b"k"] = b"v"
            store.copy_to(dest)
    finally:
        os.umask(before)
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o640


def test_copy_to_takes_a_path_like_destination(pool_dir, pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        store.copy_to(pathlib.Path(pool_dir) / "copy")
    with pmstore.Store(os.path.join(pool_dir, "copy"), create=False) as copy:
        assert copy[b"k"] == b"v"


def test_copy_while_another_thread_writes_holds_only_values_it_had(pool_dir, pool, small):
    dest = os.path.join(pool_dir, "copy")
    stop = threading.Event()
    written = []  # (version, time written)

    def writer(store):
        version = 0
        while not stop.is_set():
            version += 1
            store.put(b"churn%d" % (version % 100), b"v%d" % version, sync=False)
            written.append((version, time.monotonic()))

    with pmstore.Store(pool, initial_size=64 << 20, max_size=256 << 20) as store:
        fill(store, 50000)
        thread = threading.Thread(target=writer, args=(store,))
        thread.start()
        while len(written) < 100:
            pass
        start = time.monotonic()
        store.copy_to(dest)
        end = time.monotonic()
        stop.set()
        thread.join()
    # Writes in the middle half of the copy: the writer ran while copy_to
    # did, which it can only do when copy_to releases the GIL (a thread
    # switch just before or after the call lasts one 5 ms switch interval).
    middle = [v for v, t in written if start + (end - start) / 4 < t < end - (end - start) / 4]
    assert end - start > 0.04, "the copy must last long enough for the middle half to tell"
    assert middle, "no write while copy_to ran: it must release the GIL"
    assert pmstore.check(dest)["clean"]
    last = written[-1][0]
    with pmstore.Store(dest, create=False) as copy:
        stable = 0
        for key, value in copy.items():
            if key.startswith(b"churn"):
                version = int(value[1:])
                assert version <= last and version % 100 == int(key[5:]), (key, value)
            else:
                stable += 1
        assert stable == 50000


def test_existing_destination_is_already_exists_and_untouched(pool_dir, pool, small):
    dest = os.path.join(pool_dir, "taken")
    with open(dest, "wb") as f:
        f.write(b"keep me")
    with pmstore.Store(pool, **small) as store:
        with pytest.raises(pmstore.AlreadyExistsError, match="taken"):
            store.copy_to(dest)
        with pytest.raises(pmstore.AlreadyExistsError):
            store.copy_to(pool)
    with open(dest, "rb") as f:
        assert f.read() == b"keep me"
    assert sorted(os.listdir(pool_dir)) == ["pool", "taken"]


def test_missing_directory_is_not_found_and_leaves_nothing(pool_dir, pool, small):
    with pmstore.Store(pool, **small) as store:
        with pytest.raises(pmstore.NotFoundError, match="nodir"):
            store.copy_to(os.path.join(pool_dir, "nodir", "copy"))
    assert os.listdir(pool_dir) == ["pool"]


def test_copy_of_a_closed_store_is_value_error(pool_dir, pool, small):
    store = pmstore.Store(pool, **small)
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.copy_to(os.path.join(pool_dir, "copy"))
    with pmstore.Store(pool, create=False) as reopened:
        with pytest.raises(TypeError):
            reopened.copy_to(None)


def test_copy_of_a_snapshot_equals_it_while_another_thread_writes(pool_dir, pool, small):
    dest = os.path.join(pool_dir, "copy")
    stop = threading.Event()

    versions = []

    def writer(store):
        version = 0
        while not stop.is_set():
            version += 1
            store.put(b"churn%d" % (version % 100), b"v%d" % version, sync=False)
            if version % 3 == 0:
                store.delete(b"key%d" % (version % 3000), sync=False)
            versions.append(version)

    with pmstore.Store(pool, **small) as store:
        fill(store, 3000)
        thread = threading.Thread(target=writer, args=(store,))
        thread.start()
        with store.snapshot() as snap:
            expected = dict(store.items(snapshot=snap))
            # The store moves on before the copy starts: a copy that took
            # a snapshot of its own instead would differ.
            before = len(versions)
            while len(versions) < before + 50:
                pass
            store.copy_to(dest, snapshot=snap)
        stop.set()
        thread.join()
        assert dict(store.items()) != expected, "the writer changed the store after the snapshot"
    assert pmstore.check(dest)["clean"]
    with pmstore.Store(dest, create=False) as copy:
        assert dict(copy.items()) == expected


def test_copy_through_a_released_snapshot_is_value_error(pool_dir, pool, small):
    with pmstore.Store(pool, **small) as store:
        snap = store.snapshot()
        snap.release()
        with pytest.raises(ValueError):
            store.copy_to(os.path.join(pool_dir, "copy"), snapshot=snap)
        with pytest.raises(TypeError):
            store.copy_to(os.path.join(pool_dir, "copy"), snapshot=b"not a snapshot")
    assert os.listdir(pool_dir) == ["pool"]
