"""pmstore.destroy (RocksDB's DestroyDB) and device paths that are not device DAX."""
import os

import pytest

import pmstore


def test_destroy_removes_a_closed_pool(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        assert store.stats()["device_dax_align"] == 0  # a file
    pmstore.destroy(pool)
    assert not os.path.exists(pool)
    with pytest.raises(pmstore.NotFoundError):
        pmstore.destroy(pool)
    with pmstore.Store(pool, **small) as store:  # a new pool under the name starts empty
        assert b"k" not in store


def test_destroy_refuses_an_open_pool_and_a_file_that_is_not_one(pool, small):
    with pmstore.Store(pool, **small):
        with pytest.raises(pmstore.FailedPreconditionError, match="already open in this process"):
            pmstore.destroy(pool)
    assert os.path.exists(pool)
    notes = pool + ".txt"
    with open(notes, "w") as f:
        f.write("not a pool")
    with pytest.raises(pmstore.InvalidArgumentError, match="not a pmstore pool"):
        pmstore.destroy(notes)
    with open(notes) as f:
        assert f.read() == "not a pool"


def test_a_character_device_that_is_not_device_dax_is_refused():
    with pytest.raises(pmstore.InvalidArgumentError, match="not device DAX"):
        pmstore.Store("/dev/null", create=True)
    with pytest.raises(pmstore.InvalidArgumentError, match="/dev/daxX.Y"):
        pmstore.destroy("/dev/null")
