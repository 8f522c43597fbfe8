"""pmstore.Store from Python: the mapping protocol, writes, batches,
iteration, stats and check, and every error a caller can meet."""
import os
import pathlib

import pytest

import pmstore


def test_mapping_protocol_round_trips_bytes(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"user/1"] = b"Ada"
        store[b"bin\x00\xff"] = b"\x00\n\\"
        store[b"empty"] = b""
        assert store[b"user/1"] == b"Ada"
        assert store[b"bin\x00\xff"] == b"\x00\n\\"
        assert store[b"empty"] == b""
        assert b"user/1" in store and b"user/2" not in store
        assert type(store[b"user/1"]) is bytes
        del store[b"user/1"]
        assert b"user/1" not in store
    with pmstore.Store(pool, create=False) as store:
        assert store[b"bin\x00\xff"] == b"\x00\n\\", "durable across close and reopen"


def test_missing_key_is_key_error_for_read_and_del(pool, small):
    with pmstore.Store(pool, **small) as store:
        with pytest.raises(KeyError) as missing:
            store[b"nope"]
        assert missing.value.args == (b"nope",)
        with pytest.raises(KeyError):
            del store[b"nope"]
        with pytest.raises(KeyError):
            store.view(b"nope")
        store.delete(b"nope")  # the store's own semantics: absent is fine


def test_get_returns_default_when_absent(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        assert store.get(b"k") == b"v"
        assert store.get(b"absent") is None
        assert store.get(b"absent", b"fallback") == b"fallback"
        assert store.get(b"absent", default=0) == 0


def test_bytes_like_keys_and_values_are_accepted_str_is_not(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[bytearray(b"ba")] = memoryview(b"from a view")
        assert store[b"ba"] == b"from a view"
        assert store[memoryview(b"xbay")[1:3]] == b"from a view"
        with pytest.raises(TypeError, match="key is bytes.*not str: encode it first"):
            store["text"] = b"v"
        with pytest.raises(TypeError, match="value is bytes.*not int"):
            store[b"k"] = 5
        with pytest.raises(TypeError):
            store.get(None)


def test_paths_may_be_str_bytes_or_pathlike(pool_dir, small):
    for name, path in [("a", os.path.join(pool_dir, "a")), ("b", os.fsencode(os.path.join(pool_dir, "b"))),
                       ("c", pathlib.Path(pool_dir) / "c")]:
        with pmstore.Store(path, **small) as store:
            store[b"name"] = name.encode()
            assert store.path == os.path.join(pool_dir, name)


def test_put_and_delete_with_sync_false_are_durable_after_sync(pool, small):
    with pmstore.Store(pool, **small) as store:
        store.put(b"a", b"1", sync=False)
        store.put(b"b", b"2")
        store.delete(b"b", sync=False)
        store.sync()
    with pmstore.Store(pool) as store:
        assert store.get(b"a") == b"1" and store.get(b"b") is None


def test_store_default_sync_false_applies_to_plain_writes(pool, small):
    with pmstore.Store(pool, sync=False, **small) as store:
        store[b"k"] = b"v"
        store.sync()
    with pmstore.Store(pool) as store:
        assert store[b"k"] == b"v"


def test_batch_commits_every_operation_in_order_on_a_clean_exit(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"old"] = b"x"
        with store.batch() as batch:
            batch[b"a"] = b"first"
            batch.put(b"b", b"2")
            batch[b"a"] = b"second"
            del batch[b"old"]
            batch.delete(b"never-there")
            assert len(batch) == 5
            assert batch.approximate_size == 1 + 5 + 1 + 1 + 1 + 6 + 3 + 11
            assert b"a" not in store, "nothing is visible before the commit"
        assert store[b"a"] == b"second" and store[b"b"] == b"2" and b"old" not in store


def test_batch_is_discarded_when_the_block_raises(pool, small):
    with pmstore.Store(pool, **small) as store:
        with pytest.raises(RuntimeError, match="boom"):
            with store.batch() as batch:
                batch[b"a"] = b"1"
                raise RuntimeError("boom")
        assert b"a" not in store
        with pytest.raises(ValueError, match="already committed or discarded"):
            batch[b"b"] = b"2"


def test_spent_batch_refuses_more_work_and_commit_outside_with(pool, small):
    with pmstore.Store(pool, **small) as store:
        batch = store.batch(sync=False)
        batch[b"k"] = b"v"
        batch.clear()
        assert len(batch) == 0
        batch[b"k2"] = b"v2"
        batch.commit()
        assert store[b"k2"] == b"v2" and b"k" not in store
        for spent_call in (batch.commit, batch.clear, lambda: batch.put(b"x", b"y"), lambda: batch.delete(b"x")):
            with pytest.raises(ValueError):
                spent_call()


def test_failed_batch_changes_nothing_and_can_be_retried(pool):
    with pmstore.Store(pool, initial_size=8 << 20, max_size=0) as store:
        store[b"k"] = b"kept"
        batch = store.batch()
        batch[b"k"] = b"lost"
        batch[b"huge"] = b"h" * (16 << 20)
        with pytest.raises(pmstore.ResourceExhaustedError) as full:
            batch.commit()
        assert full.value.code == "RESOURCE_EXHAUSTED" and pool in str(full.value)
        assert store[b"k"] == b"kept"
        batch.clear()  # not spent: the caller may fix it and commit again
        batch[b"k"] = b"lost"
        batch.commit()
        assert store[b"k"] == b"lost" and b"huge" not in store


def test_iteration_is_in_key_order_with_prefix_and_range(pool, small):
    keys = [b"a", b"b", b"b/1", b"b/2", b"b/3", b"c", b"\xff"]
    with pmstore.Store(pool, **small) as store:
        for key in reversed(keys):
            store[key] = b"v" + key
        assert list(store) == keys
        assert list(store.keys()) == keys
        assert list(store.keys(prefix=b"b/")) == [b"b/1", b"b/2", b"b/3"]
        assert list(store.keys(start=b"b/2", stop=b"c")) == [b"b/2", b"b/3"]
        assert list(store.keys(prefix=b"b", start=b"b/2")) == [b"b/2", b"b/3"]
        assert list(store.keys(stop=b"")) == [], "nothing lies below b''"
        assert list(store.values(prefix=b"b/")) == [b"vb/1", b"vb/2", b"vb/3"]
        assert list(store.items(start=b"c")) == [(b"c", b"vc"), (b"\xff", b"v\xff")]
        with pytest.raises(TypeError):
            store.keys(prefix="b")


def test_reverse_iteration_is_in_descending_order_with_prefix_range_and_snapshot(pool, small):
    keys = [b"a", b"b", b"b/1", b"b/2", b"b/3", b"c", b"\xff", b"\xff\xff"]
    with pmstore.Store(pool, **small) as store:
        for key in keys:
            store[key] = b"v" + key
        assert list(reversed(store)) == keys[::-1]
        assert list(store.keys(reverse=True)) == keys[::-1]
        assert list(store.keys(prefix=b"b/", reverse=True)) == [b"b/3", b"b/2", b"b/1"]
        assert list(store.keys(prefix=b"\xff", reverse=True)) == [b"\xff\xff", b"\xff"], "a prefix of 0xff bytes"
        assert list(store.keys(start=b"b/2", stop=b"c", reverse=True)) == [b"b/3", b"b/2"]
        assert list(store.values(prefix=b"b/", reverse=True)) == [b"vb/3", b"vb/2", b"vb/1"]
        assert list(store.items(start=b"c", stop=b"\xff\xff", reverse=True)) == [(b"\xff", b"v\xff"), (b"c", b"vc")]
        assert list(store.keys(stop=b"", reverse=True)) == []
        with store.snapshot() as snap:
            store[b"b/25"] = b"later"
            del store[b"a"]
            assert list(snap.keys(reverse=True)) == keys[::-1], "as of the snapshot"
            assert list(reversed(snap)) == keys[::-1]
            assert list(snap.keys(prefix=b"b/", reverse=True)) == [b"b/3", b"b/2", b"b/1"]
        assert list(store.keys(prefix=b"b/", reverse=True)) == [b"b/3", b"b/25", b"b/2", b"b/1"]


def test_reverse_iteration_crosses_refills(pool, small):
    with pmstore.Store(pool, **small) as store:
        with store.batch() as batch:
            for i in range(5000):
                batch[b"%06d" % i] = b"x" * 50
        assert list(store.keys(reverse=True)) == [b"%06d" % i for i in reversed(range(5000))]
        assert [k for k, _ in store.items(prefix=b"00499", reverse=True)] == [b"%06d" % i for i in range(4999, 4989, -1)]


def test_iteration_crosses_refills_and_keeps_the_store_alive(pool, small):
    with pmstore.Store(pool, **small) as store:
        with store.batch() as batch:
            for i in range(5000):
                batch[b"%06d" % i] = b"x" * 50
        assert list(store.keys()) == [b"%06d" % i for i in range(5000)]
    # An iterator holds its store, as a dict iterator holds its dict.
    items = pmstore.Store(pool).items(prefix=b"00499")
    assert [k for k, _ in items] == [b"%06d" % i for i in range(4990, 5000)]


def test_close_ends_iterators_and_later_calls_raise_value_error(pool, small):
    store = pmstore.Store(pool, **small)
    store[b"a"] = b"1"
    store[b"b"] = b"2"
    it = store.items()
    assert next(it) == (b"a", b"1")
    store.close()
    with pytest.raises(ValueError, match="closed"):
        next(it)
    assert store.closed
    store.close()  # twice is fine
    for call in (lambda: store[b"a"], lambda: store.get(b"a"), lambda: store.put(b"a", b"b"), lambda: b"a" in store,
                 store.sync, store.stats, store.check, store.keys, store.batch, lambda: store.view(b"a")):
        with pytest.raises(ValueError, match="closed pmstore.Store"):
            call()
    assert repr(store) == "<pmstore.Store %r closed>" % pool


def test_missing_pool_without_create_is_not_found_error(pool):
    with pytest.raises(pmstore.NotFoundError, match="no such pool file") as missing:
        pmstore.Store(pool, create=False)
    assert missing.value.code == "NOT_FOUND"
    assert isinstance(missing.value, pmstore.Error)


def test_error_if_exists_is_already_exists_error(pool, small):
    pmstore.Store(pool, **small).close()
    with pytest.raises(pmstore.AlreadyExistsError) as exists:
        pmstore.Store(pool, error_if_exists=True)
    assert exists.value.code == "ALREADY_EXISTS"


def test_file_that_is_not_a_pool_is_invalid_argument_error(pool):
    with open(pool, "wb") as f:
        f.write(b"x" * (1 << 20))
    with pytest.raises(pmstore.InvalidArgumentError, match="not a pmstore pool"):
        pmstore.Store(pool)
    with pytest.raises(pmstore.InvalidArgumentError):
        pmstore.check(pool)


def test_oversized_key_is_invalid_argument_error(pool, small):
    with pmstore.Store(pool, **small) as store:
        with pytest.raises(pmstore.InvalidArgumentError, match="key"):
            store[b"k" * (64 * 1024 + 1)] = b"v"
        store[b"k" * (64 * 1024)] = b"fits"


def test_second_open_is_failed_precondition_error(pool, small):
    with pmstore.Store(pool, **small):
        with pytest.raises(pmstore.FailedPreconditionError, match="already open in this process") as busy:
            pmstore.Store(pool)
        assert busy.value.code == "FAILED_PRECONDITION"


def test_granularity_requirements(pool, small):
    with pytest.raises(ValueError, match="'byte', 'cache_line' or 'page'"):
        pmstore.Store(pool, required_granularity="huge", **small)
    if "PMEM2_FORCE_GRANULARITY" not in os.environ:
        with pytest.raises(pmstore.FailedPreconditionError, match="granularity"):
            pmstore.Store(pool, required_granularity="cache_line", **small)


def test_damaged_value_is_data_loss_for_verified_reads_and_check_reports_it(pool, small):
    marker = b"a value that nothing else in the pool holds, 0123456789"
    with pmstore.Store(pool, **small) as store:
        store[b"victim"] = marker
        store[b"bystander"] = b"fine"
        report = store.check()
        assert report["clean"] and report["problems"] == [] and report["keys"] == 2
    with open(pool, "r+b") as f:
        image = f.read()
        f.seek(image.index(marker))
        f.write(b"X")
    report = pmstore.check(pool)
    assert not report["clean"] and len(report["problems"]) == 1 and "checksum" in report["problems"][0]
    with pmstore.Store(pool) as store:
        assert store[b"victim"][:1] == b"X", "unverified reads do not hash"
        with pytest.raises(pmstore.DataLossError) as damaged:
            store.get(b"victim", verify_checksums=True)
        assert damaged.value.code == "DATA_LOSS" and pool in str(damaged.value)
        with pytest.raises(pmstore.DataLossError):
            store.view(b"victim", verify_checksums=True)
        assert store.get(b"bystander", verify_checksums=True) == b"fine"
        assert not store.check()["clean"]


def test_stats_describe_the_pool(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"a"] = b"1"
        stats = store.stats()
    assert stats["path"] == pool and stats["keys"] == 1
    assert stats["pool_bytes"] == 8 << 20 and stats["max_pool_bytes"] >= 64 << 20
    assert stats["live_bytes"] > 0 and stats["free_bytes"] > 0 and 0 <= stats["fragmentation"] <= 1
    assert stats["granularity"] in ("byte", "cache_line", "page")
    assert stats["dax"] is False and stats["map_sync"] is False
    assert stats["pmd_mapped_share"] == -1 or 0 <= stats["pmd_mapped_share"] <= 1
    assert stats["pmd_verify_method"]


def test_module_exposes_version_and_exception_hierarchy():
    assert pmstore.__version__.count(".") == 2
    for name in ("NotFoundError", "AlreadyExistsError", "InvalidArgumentError", "FailedPreconditionError",
                 "DataLossError", "ResourceExhaustedError"):
        assert issubclass(getattr(pmstore, name), pmstore.Error)
    assert issubclass(pmstore.Error, Exception)
    assert "KeyError" in pmstore.Store.__getitem__.__doc__


def test_multi_get_equals_get_key_by_key_with_none_for_missing(pool, small):
    with pmstore.Store(pool, **small) as store:
        for i in range(100):
            store[b"k%d" % i] = b"v%d" % i * (i + 1)
        store[b""] = b"empty key"
        big = os.urandom(1 << 20)  # a 2 MiB run
        store[b"big"] = big
        keys = [b"k%d" % (i * 3) for i in range(60)] + [b"", b"big", b"k1", b"k1", b"absent"]
        got = store.multi_get(keys)
        assert got == [store.get(k) for k in keys]
        assert got[-5:] == [b"empty key", big, b"v1" * 2, b"v1" * 2, None]
        assert got.count(None) == 27  # k102 .. k177: never written
        assert store.multi_get(iter([bytearray(b"k2"), memoryview(b"k3")])) == [b"v2" * 3, b"v3" * 4]
        assert store.multi_get([]) == []
        with pytest.raises(TypeError, match="key is bytes"):
            store.multi_get([b"k1", "k2"])
    with pytest.raises(ValueError, match="closed"):
        store.multi_get([b"k1"])


def test_multi_get_verified_raises_data_loss_on_a_damaged_record(pool, small):
    marker = b"a value for multi_get that nothing else holds, 9876543210"
    with pmstore.Store(pool, **small) as store:
        store[b"victim"] = marker
        store[b"bystander"] = b"fine"
    with open(pool, "r+b") as f:
        image = f.read()
        f.seek(image.index(marker))
        f.write(b"X")
    with pmstore.Store(pool) as store:
        assert store.multi_get([b"bystander", b"victim"])[1][:1] == b"X", "unverified reads do not hash"
        with pytest.raises(pmstore.DataLossError):
            store.multi_get([b"bystander", b"victim"], verify_checksums=True)
        assert store.multi_get([b"bystander", b"nope"], verify_checksums=True) == [b"fine", None]
