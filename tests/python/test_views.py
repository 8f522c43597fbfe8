"""Zero-copy reads: Store.view() memoryviews, and what close() does while
one is alive, in this interpreter (test_lifetime.py covers exit)."""
import gc

import pytest

import pmstore


def test_view_reads_the_value_in_place_read_only(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"hello, pmem"
        view = store.view(b"k")
        assert isinstance(view, memoryview) and view.readonly
        assert bytes(view) == b"hello, pmem" and view[7:] == b"pmem" and len(view) == 11
        with pytest.raises(TypeError):
            view[0] = 0
        view.release()


def test_empty_and_large_values_view_whole(pool):
    with pmstore.Store(pool, initial_size=16 << 20) as store:
        store[b"empty"] = b""
        big = bytes(range(256)) * (8 << 10)  # 2 MiB: a value in its own run
        store[b"big"] = big
        with store.view(b"empty") as empty, store.view(b"big") as whole:
            assert len(empty) == 0 and bytes(empty) == b""
            assert whole == big


def test_view_survives_overwrite_and_delete(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"original"
        with store.view(b"k") as view:
            for i in range(200):
                store[b"k"] = b"overwritten %d" % i
            del store[b"k"]
            assert bytes(view) == b"original"


def test_close_with_a_live_view_raises_buffer_error_and_closes_nothing(pool, small):
    store = pmstore.Store(pool, **small)
    store[b"k"] = b"v"
    view = store.view(b"k")
    with pytest.raises(BufferError, match="1 zero-copy memoryview"):
        store.close()
    assert not store.closed and store[b"k"] == b"v"
    view.release()
    store.close()
    assert store.closed


def test_slices_of_a_view_keep_it_alive(pool, small):
    store = pmstore.Store(pool, **small)
    store[b"k"] = b"0123456789"
    view = store.view(b"k")
    part = view[2:5]
    view.release()
    with pytest.raises(BufferError):
        store.close()
    assert bytes(part) == b"234"
    part.release()
    store.close()


def test_with_block_exit_with_a_live_view_raises_buffer_error(pool, small):
    with pytest.raises(BufferError):
        with pmstore.Store(pool, **small) as store:
            store[b"k"] = b"v"
            view = store.view(b"k")
    assert not store.closed
    assert bytes(view) == b"v"
    del view
    store.close()


def test_dropped_store_stays_open_for_its_views_and_closes_after_the_last(pool, small):
    store = pmstore.Store(pool, **small)
    store[b"k"] = b"kept open"
    view = store.view(b"k")
    del store
    gc.collect()
    assert bytes(view) == b"kept open", "the view keeps the store open"
    with pytest.raises(pmstore.FailedPreconditionError, match="already open in this process"):
        pmstore.Store(pool)
    del view
    with pmstore.Store(pool) as again:  # the last view closed it
        assert again[b"k"] == b"kept open"


def test_view_in_a_reference_cycle_is_collected_and_closes_the_store(pool, small):
    store = pmstore.Store(pool, **small)
    store[b"k"] = b"v"
    cycle = [store.view(b"k"), store]
    cycle.append(cycle)
    del store, cycle
    gc.collect()
    with pmstore.Store(pool) as again:
        assert again[b"k"] == b"v"


def test_many_views_are_counted(pool, small):
    store = pmstore.Store(pool, **small)
    for i in range(10):
        store[b"%d" % i] = b"v%d" % i
    views = [store.view(b"%d" % i) for i in range(10)]
    with pytest.raises(BufferError, match="10 zero-copy"):
        store.close()
    assert [bytes(v) for v in views] == [b"v%d" % i for i in range(10)]
    del views[3:]
    with pytest.raises(BufferError, match="3 zero-copy"):
        store.close()
    views.clear()
    store.close()
