"""ThreadedCodecPipeline (zarrcodecs/pipeline.py) reads exactly what zarr's default pipeline reads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from zarr.core.codec_pipeline import BatchedCodecPipeline  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.core.errors import StreamError  # noqa: E402
from zarr_jpeg_conformance.corpus.registry import resource  # noqa: E402
from zarr_jpeg_conformance.corpus.stores import open_store  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs import pipeline as zarr_pipeline  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, register  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.pipeline import PIPELINE_PATH, ThreadedCodecPipeline  # noqa: E402

STORES = sorted(e.name for e in resource("fixtures", "stores").iterdir() if e.is_dir())
DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"
#: Selections, from an array's shape, that cut chunks, drop axes, step and count from the end.
SELECTIONS: dict[str, Callable[[tuple[int, ...]], tuple[Any, ...]]] = {
    "all": lambda shape: (Ellipsis,),
    "inner-slab": lambda shape: tuple(slice(n // 5, n - n // 7) for n in shape),
    "one-row": lambda shape: (shape[0] // 2,),
    "one-pixel": lambda shape: tuple(n // 3 for n in shape),
    "step": lambda shape: (slice(None, None, 3), slice(1, None, 2)),
    "negative": lambda shape: (slice(-shape[0] // 2, -1),),
}


@pytest.fixture(autouse=True)
def _codec() -> Iterator[None]:
    register()
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        yield


def _read(entries: dict[str, Any], path: str, selection: Any = (Ellipsis,), **settings: Any) -> tuple[np.ndarray, Any]:
    with zarr.config.set({"codec_pipeline.path": path, **settings}):
        array = zarr.open_array(MemoryStore(dict(entries)), mode="r", zarr_format=3)
        return np.asarray(array[selection]), array


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=SELECTIONS.keys())
@pytest.mark.parametrize("store", STORES)
def test_reads_what_the_default_pipeline_reads(store: str, selection: Callable[[tuple[int, ...]], tuple[Any, ...]]) -> None:
    entries = open_store(resource("fixtures", "stores", store))
    whole, default = _read(entries, DEFAULT)
    expected = whole[selection(whole.shape)]
    got, array = _read(entries, PIPELINE_PATH, selection(whole.shape))
    assert type(array.async_array.codec_pipeline) is ThreadedCodecPipeline
    assert type(default.async_array.codec_pipeline) is BatchedCodecPipeline
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def _array(entries: dict[str, Any], shape: tuple[int, ...] = (70, 90), chunks: tuple[int, ...] = (16, 16),
           **codecs: Any) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, shape, dtype=np.uint8)
    serializer = JpegCodec(quality=90, encoded_color_space="grayscale")
    array = zarr.create_array(MemoryStore(entries), shape=shape, chunks=chunks, dtype="uint8",
                              serializer=serializer, compressors=codecs.pop("compressors", None), fill_value=7, **codecs)
    array[...] = data
    return array, data


def test_orthogonal_and_mask_selections() -> None:
    entries: dict[str, Any] = {}
    _array(entries)
    rows, cols = [0, 5, 33, 69], np.arange(90) % 7 == 0
    with zarr.config.set({"codec_pipeline.path": DEFAULT}):
        default = zarr.open_array(MemoryStore(dict(entries)), mode="r")
        # oindex with an integer drops an axis that is not the first (drop_axes).
        expected = default.oindex[rows, cols], default.vindex[[1, 40, 69], [2, 50, 89]], default.oindex[rows, 50]
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array = zarr.open_array(MemoryStore(dict(entries)), mode="r")
        np.testing.assert_array_equal(array.oindex[rows, cols], expected[0])
        np.testing.assert_array_equal(array.oindex[rows, 50], expected[2])
        np.testing.assert_array_equal(array.vindex[[1, 40, 69], [2, 50, 89]], expected[1])


def test_array_to_array_and_bytes_to_bytes_codecs_around_jpeg() -> None:
    from zarr.codecs import Crc32cCodec, GzipCodec, TransposeCodec

    entries: dict[str, Any] = {}
    _array(entries, shape=(40, 70), chunks=(16, 24), filters=[TransposeCodec(order=(1, 0))],
           compressors=[GzipCodec(level=1), Crc32cCodec()])
    expected, _ = _read(entries, DEFAULT)
    got, array = _read(entries, PIPELINE_PATH)
    pipeline = array.async_array.codec_pipeline
    assert pipeline.array_array_codecs and len(pipeline.bytes_bytes_codecs) == 2 and pipeline.decodes_synchronously
    np.testing.assert_array_equal(got, expected)


def test_missing_chunks_read_as_fill_value() -> None:
    entries: dict[str, Any] = {}
    _array(entries)
    for key in ("c/0/0", "c/2/3", "c/4/5"):
        del entries[key]
    expected, _ = _read(entries, DEFAULT)
    got, _ = _read(entries, PIPELINE_PATH)
    np.testing.assert_array_equal(got, expected)
    assert (got[:16, :16] == 7).all()


def test_several_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    _array(entries)  # 5 x 6 = 30 chunks
    monkeypatch.setattr(zarr_pipeline, "WINDOW_PER_WORKER", 2)
    expected, _ = _read(entries, DEFAULT)
    for workers in (1, 2, 3):
        got, _ = _read(entries, PIPELINE_PATH, **{"threading.max_workers": workers})
        np.testing.assert_array_equal(got, expected)


def _read_on_own_loop(entries: dict[str, Any], pool_size: int, on_error: Callable[[], None] | None = None) -> np.ndarray:
    """Read through zarr's async API on a fresh event loop whose executor has ``pool_size`` threads.

    zarr's synchronous API sizes its executor once per process, on first use; a loop of the
    test's own makes the pool size certain whatever ran before. ``on_error`` runs the moment
    the read raises, before asyncio.run waits for the executor's threads.
    """
    from zarr.api.asynchronous import open_array

    async def main() -> np.ndarray:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(pool_size))
        array = await open_array(store=MemoryStore(dict(entries)), mode="r", zarr_format=3)
        try:
            return np.asarray(await array.getitem(Ellipsis))
        except Exception:
            if on_error:
                on_error()
            raise

    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH, "threading.max_workers": pool_size}):
        return asyncio.run(main())


def test_decodes_off_the_event_loop_on_several_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    _array(entries)
    expected, _ = _read(entries, DEFAULT)
    threads: set[int] = set()
    decode = JpegCodec._decode_sync

    def recording(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
        threads.add(threading.get_ident())
        time.sleep(0.002)  # a decode long enough that one thread cannot drain the queue alone
        return decode(self, chunk_bytes, chunk_spec)

    monkeypatch.setattr(JpegCodec, "_decode_sync", recording)
    np.testing.assert_array_equal(_read_on_own_loop(entries, 2), expected)
    assert len(threads) == 2, f"30 chunks decoded on {len(threads)} thread(s) with 2 workers"
    assert threading.get_ident() not in threads  # asyncio.run's loop runs on this thread


def test_a_bad_chunk_raises_the_codecs_error_after_every_job_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    _array(entries)  # 30 chunks; c/1/1 is the 8th handed out
    entries["c/1/1"] = entries["c/1/1"].__class__.from_bytes(b"\xff\xd8 not a jpeg")
    lock, running, calls = threading.Lock(), [0], [0]
    decode = JpegCodec._decode_sync

    def counting(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
        with lock:
            running[0] += 1
            calls[0] += 1
        try:
            time.sleep(0.002)
            return decode(self, chunk_bytes, chunk_spec)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(JpegCodec, "_decode_sync", counting)
    at_error: list[int] = []
    with pytest.raises(StreamError, match="JPEG-DEC-01"):
        _read_on_own_loop(entries, 2, on_error=lambda: at_error.append(running[0]))
    assert at_error == [0], f"{at_error[0]} decode(s) still running when the read raised"
    assert calls[0] < 30, f"all {calls[0]} chunks were decoded after one failed: the other job did not stop"


def test_a_cancelled_read_stops_handing_out_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr.api.asynchronous import open_array

    entries: dict[str, Any] = {}
    _array(entries)  # 30 chunks, one window
    calls = [0]
    decode = JpegCodec._decode_sync

    def slow(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
        calls[0] += 1
        time.sleep(0.005)
        return decode(self, chunk_bytes, chunk_spec)

    monkeypatch.setattr(JpegCodec, "_decode_sync", slow)

    async def main() -> None:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        array = await open_array(store=MemoryStore(dict(entries)), mode="r", zarr_format=3)
        read = asyncio.ensure_future(array.getitem(Ellipsis))
        await asyncio.sleep(0.03)
        read.cancel()
        with pytest.raises(asyncio.CancelledError):
            await read

    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH, "threading.max_workers": 1}):
        asyncio.run(main())  # returns once the executor's thread has finished
    assert calls[0] < 30, "every chunk was decoded after the read was cancelled"


def test_sharded_reads_go_through_zarrs_partial_decode_and_inner_chunks_through_threads() -> None:
    entries = open_store(resource("fixtures", "stores", "sharded.zarr"))
    _, array = _read(entries, PIPELINE_PATH)
    outer = array.async_array.codec_pipeline
    assert not outer.decodes_synchronously  # the sharding codec reads its inner chunks itself ...
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):  # sharding picks it on each read
        inner = outer.array_bytes_codec.codec_pipeline
    assert type(inner) is ThreadedCodecPipeline and inner.decodes_synchronously  # ... through this pipeline


def test_a_codec_without_a_synchronous_decode_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    _array(entries)
    expected, _ = _read(entries, DEFAULT)
    monkeypatch.delattr(JpegCodec, "_decode_sync")  # _decode_single still works: it is zarr's path
    monkeypatch.setattr(JpegCodec, "_decode_single", _async_decode)
    got, array = _read(entries, PIPELINE_PATH)
    assert not array.async_array.codec_pipeline.decodes_synchronously
    np.testing.assert_array_equal(got, expected)


_decode_sync = JpegCodec._decode_sync


async def _async_decode(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
    return _decode_sync(self, chunk_bytes, chunk_spec)


# ----------------------------------------------------------------------------- writing

#: Writes, applied in order to a 70 x 90 array of 16 x 16 chunks: whole, cutting chunks,
#: a scalar, the fill value over whole chunks (which zarr deletes), and the last row/column.
WRITES: list[tuple[Any, Callable[[np.random.Generator, tuple[int, ...]], Any]]] = [
    ((Ellipsis,), lambda rng, shape: rng.integers(0, 256, shape, dtype=np.uint8)),
    ((slice(5, 40), slice(3, 61)), lambda rng, shape: rng.integers(0, 256, shape, dtype=np.uint8)),
    ((slice(20, 30), slice(50, 70)), lambda rng, shape: 200),
    ((slice(0, 32), slice(0, 32)), lambda rng, shape: 7),
    ((slice(64, 70), slice(None)), lambda rng, shape: rng.integers(0, 256, shape, dtype=np.uint8)),
    ((3, slice(None)), lambda rng, shape: rng.integers(0, 256, shape, dtype=np.uint8)),
    # chunk (2, 2): the fill value first, then other values (kept), and chunk (2, 3) all fill value (deleted)
    ((slice(32, 48), slice(32, 48)), lambda rng, shape: np.where(np.arange(256).reshape(16, 16) == 0, 7, 9).astype(np.uint8)),
    ((slice(32, 48), slice(48, 64)), lambda rng, shape: np.full(shape, 7, np.uint8)),
]


def _write_all(path: str, **codecs: Any) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    with zarr.config.set({"codec_pipeline.path": path}):
        array, _ = _array(entries, **codecs)
        assert (type(array.async_array.codec_pipeline) is ThreadedCodecPipeline) == (path == PIPELINE_PATH)
        rng = np.random.default_rng(11)
        for selection, value in WRITES:
            array[selection] = value(rng, np.empty(array.shape)[selection].shape)
    return entries


@pytest.mark.parametrize("chain", ["jpeg", "transpose-jpeg-zstd-crc32c"])
def test_writes_store_what_the_default_pipeline_stores(chain: str) -> None:
    from zarr.codecs import Crc32cCodec, TransposeCodec, ZstdCodec

    codecs: dict[str, Any] = {}
    if chain != "jpeg":
        # Not gzip: its header records the time of writing, so two writes a second apart
        # store different bytes whatever the pipeline does.
        codecs = {"filters": [TransposeCodec(order=(1, 0))], "compressors": [ZstdCodec(level=1), Crc32cCodec()]}
    expected = _write_all(DEFAULT, **codecs)
    got = _write_all(PIPELINE_PATH, **codecs)
    assert "c/1/0" not in expected and "c/1/1" not in expected and "c/2/3" not in expected  # all fill value: deleted
    assert "c/2/2" in expected
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key].to_bytes() == expected[key].to_bytes(), key


def test_writes_encode_on_several_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr.api.asynchronous import create_array

    threads: set[int] = set()
    encode = JpegCodec._encode_sync

    def recording(self: JpegCodec, chunk: Any, chunk_spec: Any) -> Any:
        threads.add(threading.get_ident())
        time.sleep(0.002)
        return encode(self, chunk, chunk_spec)

    monkeypatch.setattr(JpegCodec, "_encode_sync", recording)
    data = np.random.default_rng(3).integers(0, 256, (64, 96), dtype=np.uint8)

    async def main() -> np.ndarray:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        array = await create_array(MemoryStore(), shape=data.shape, chunks=(16, 16), dtype="uint8", fill_value=0,
                                   serializer=JpegCodec(quality=100, encoded_color_space="grayscale"), compressors=None)
        await array.setitem(Ellipsis, data)
        return np.asarray(await array.getitem(Ellipsis))

    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH, "threading.max_workers": 2}):
        back = asyncio.run(main())
    assert len(threads) == 2 and threading.get_ident() not in threads
    assert np.abs(back.astype(int) - data).max() <= 8  # quality 100: the chunks were really written


def test_a_failed_encode_stores_nothing_of_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array, _ = _array(entries)
        before = {key: value.to_bytes() for key, value in entries.items()}
        encode = JpegCodec._encode_sync
        seen = [0]

        def failing(self: JpegCodec, chunk: Any, chunk_spec: Any) -> Any:
            seen[0] += 1
            if seen[0] == 5:
                raise RuntimeError("encoder failure")
            return encode(self, chunk, chunk_spec)

        monkeypatch.setattr(JpegCodec, "_encode_sync", failing)
        with pytest.raises(RuntimeError, match="encoder failure"):
            array[...] = np.full(array.shape, 99, dtype=np.uint8)  # 30 chunks: one window
    assert {key: value.to_bytes() for key, value in entries.items()} == before


def test_sharded_writes_go_through_zarrs_pipeline() -> None:
    entries = open_store(resource("fixtures", "stores", "sharded.zarr"))
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array = zarr.open_array(MemoryStore(dict(entries)), mode="r")
        assert not array.async_array.codec_pipeline.encodes_synchronously


def _named(entries: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """A 2 x 2-chunk grayscale array at 'scans/img', written through the default pipeline."""
    data = np.random.default_rng(9).integers(0, 256, (32, 32), dtype=np.uint8)
    array = zarr.create_array(MemoryStore(entries), name="scans/img", shape=data.shape, chunks=(16, 16), dtype="uint8",
                              serializer=JpegCodec(quality=90, encoded_color_space="grayscale"), compressors=None)
    array[...] = data
    return array, data


def _corrupt(entries: dict[str, Any], key: str) -> None:
    entries[key] = entries[key].__class__.from_bytes(b"\xff\xd8 not a jpeg")


def test_a_bad_chunk_is_named_by_array_and_key_when_read() -> None:
    entries: dict[str, Any] = {}
    _named(entries)
    _corrupt(entries, "scans/img/c/1/0")
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array = zarr.open_array(MemoryStore(entries), path="scans/img", mode="r")
        np.asarray(array[:16])  # the chunks of row 0 are fine
        with pytest.raises(StreamError) as exc:
            array[...]
    assert exc.value.requirement == "JPEG-DEC-01"
    assert "'scans/img/c/1/0'" in str(exc.value) and "while decoding" in str(exc.value)


def test_a_bad_chunk_is_named_when_a_write_reads_it_back_and_a_failed_encode_too(monkeypatch: pytest.MonkeyPatch) -> None:
    entries: dict[str, Any] = {}
    _named(entries)
    _corrupt(entries, "scans/img/c/0/1")
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array = zarr.open_array(MemoryStore(entries), path="scans/img", mode="r+")
        with pytest.raises(StreamError) as exc:
            array[0:4, 16:20] = 1  # a part of c/0/1: zarr merges it into the stored chunk
        assert "'scans/img/c/0/1'" in str(exc.value) and "to write into" in str(exc.value)

        def failing(self: JpegCodec, chunk: Any, chunk_spec: Any) -> Any:
            raise RuntimeError("encoder failure")

        monkeypatch.setattr(JpegCodec, "_encode_sync", failing)
        with pytest.raises(RuntimeError, match="encoder failure") as err:
            array[16:32, 0:16] = 5
    assert any("'scans/img/c/1/0'" in note and "encoding" in note for note in getattr(err.value, "__notes__", []))


def test_reports_missing_chunks_to_zarr() -> None:
    """zarr >= 3.3 asks the pipeline which chunks were missing (array.read_missing_chunks)."""
    if zarr.config.get("array.read_missing_chunks", None) is None:
        pytest.skip(f"zarr {zarr.__version__} has no array.read_missing_chunks")
    from zarr.errors import ChunkNotFoundError

    entries: dict[str, Any] = {}
    _named(entries)
    del entries["scans/img/c/1/1"]
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        array = zarr.open_array(MemoryStore(entries), path="scans/img", mode="r")
        assert (array[16:, 16:] == 0).all()  # the fill value, by default
        with zarr.config.set({"array.read_missing_chunks": False}):  # read when the array is opened
            strict = zarr.open_array(MemoryStore(entries), path="scans/img", mode="r")
        assert type(strict.async_array.codec_pipeline) is ThreadedCodecPipeline
        np.asarray(strict[:16])  # no missing chunk there
        with pytest.raises(ChunkNotFoundError, match="c/1/1"):
            strict[...]


def test_a_bad_inner_chunk_of_a_shard_is_named_by_its_position(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = open_store(resource("fixtures", "stores", "sharded.zarr"))
    decode, calls = JpegCodec._decode_sync, [0]

    def failing(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            raise StreamError("JPEG-DEC-01", "a corrupt inner chunk")
        return decode(self, chunk_bytes, chunk_spec)

    monkeypatch.setattr(JpegCodec, "_decode_sync", failing)
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}), pytest.raises(StreamError) as exc:
        zarr.open_array(MemoryStore(dict(entries)), mode="r")[...]
    assert "while decoding the chunk at inner chunk (" in str(exc.value) and "of a shard" in str(exc.value)
    assert len(str(exc.value)) < 300  # the shard's bytes are not in it
