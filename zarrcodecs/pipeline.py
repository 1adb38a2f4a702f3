"""A zarr codec pipeline that decodes and encodes whole chunks on zarr's worker threads.

zarr 3.1's default pipeline runs each chunk's codec chain as coroutines on its event-loop
thread and hands only the codec call itself to a worker thread; the event loop copies
each chunk into the output (or, writing, merges, checks and copies it). That per-chunk
work (~130 us of CPU per 256x256x3 chunk, bench_zarr's "zarr, no decode") is serialized
on one thread beside ~230 us of decode, so a second worker adds little. This pipeline keeps
store I/O on the event loop and moves everything else off: ``threading.max_workers`` jobs
each take the next chunk, run the codec chain synchronously (the ``_decode_sync`` and
``_encode_sync`` methods of zarr's codecs and this project's) and write the result into
the output array, or hand encoded bytes back to be stored.

Opt in before opening an array, for the process (sharding picks the pipeline of its inner
chunks at each read, from the configuration of the moment)::

    zarr.config.set({"codec_pipeline.path": PIPELINE_PATH})

It applies to codec chains whose codecs all have the synchronous methods; anything else
(``sharding_indexed``, whose partial decode reads inner chunks through this pipeline in
turn; a codec without them) goes through zarr's default pipeline, which this class extends.

It is the pipeline for two or more threads on every zarr release. zarr 3.3 ships
``FusedCodecPipeline``, which also runs codecs with synchronous methods (zarr's
``SupportsSyncCodec``) off the event loop; ``tools.bench_zarr`` measures it ahead with one
worker and behind with two (docs/data-publishers.md, "Writing stores").
This class also names failing chunks, which zarr's pipelines do not.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from zarr.core.codec_pipeline import BatchedCodecPipeline, fill_value_or_default
from zarr.core.config import config as zarr_config
from zarr.registry import register_pipeline

try:  # zarr >= 3.3 merges a written part into a chunk with a function its pipelines share ...
    _MERGE: Any = importlib.import_module("zarr.core.chunk_utils")._merge_chunk_array
except (ImportError, AttributeError):  # ... zarr 3.1 and 3.2 with a method of BatchedCodecPipeline
    _MERGE = None

if TYPE_CHECKING:
    from zarr.abc.store import ByteGetter, ByteSetter
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.indexing import SelectorTuple

__all__ = ["PIPELINE_PATH", "ThreadedCodecPipeline", "workers"]

#: The value of zarr's ``codec_pipeline.path`` that selects this pipeline.
PIPELINE_PATH = "zarr_jpeg_conformance.zarrcodecs.pipeline.ThreadedCodecPipeline"
#: Chunks per window and worker: reading, the next window is fetched while this one
#: decodes, so at most two windows of encoded chunks are held at once.
WINDOW_PER_WORKER = 32

ReadItem = tuple["ByteGetter", "ArraySpec", "SelectorTuple", "SelectorTuple", bool]
WriteItem = tuple["ByteSetter", "ArraySpec", "SelectorTuple", "SelectorTuple", bool]
Specs = tuple[list["ArraySpec"], "ArraySpec", list["ArraySpec"]]
J = TypeVar("J")
R = TypeVar("R")


def workers() -> int:
    """How many chunks are coded at once: zarr's ``threading.max_workers``, else the CPU count."""
    configured = zarr_config.get("threading.max_workers", None)
    return max(1, int(configured) if configured else os.cpu_count() or 1)


@dataclass(frozen=True)
class ThreadedCodecPipeline(BatchedCodecPipeline):
    """zarr's batched pipeline, with each chunk's codec chain and copies run on worker threads."""

    @property
    def decodes_synchronously(self) -> bool:
        """Whether reads run here: every codec has a synchronous decode, and no partial decode."""
        return not self.supports_partial_decode and self._all_have("_decode_sync")

    @property
    def encodes_synchronously(self) -> bool:
        """Whether writes run here: every codec decodes (partial chunks) and encodes synchronously."""
        return not self.supports_partial_encode and self._all_have("_decode_sync") and self._all_have("_encode_sync")

    def _all_have(self, method: str) -> bool:
        return all(callable(getattr(codec, method, None)) for codec in self)

    # ------------------------------------------------------------------ reading

    async def read(self, batch_info: Iterable[ReadItem], out: NDBuffer, drop_axes: tuple[int, ...] = ()) -> Any:
        """Read every chunk into ``out``; one ``{"status": "present" | "missing"}`` per chunk.

        zarr >= 3.3 reads the statuses (``array.read_missing_chunks``); 3.1 returns and ignores None.
        """
        if not self.decodes_synchronously:
            zarrs_read: Any = super().read  # returns None in zarr 3.1, the statuses later
            return await zarrs_read(batch_info, out, drop_axes)
        windows = _windows(list(batch_info))
        if not windows:
            return ()
        specs: dict[Any, Specs] = {}
        statuses: list[dict[str, str]] = []

        def prefetch(window: list[ReadItem]) -> asyncio.Task[list[Buffer | None]]:
            return asyncio.get_running_loop().create_task(_fetch([(getter, spec) for getter, spec, *_ in window]))

        fetching = prefetch(windows[0])
        try:
            for index, window in enumerate(windows):
                fetched = await fetching
                if index + 1 < len(windows):
                    fetching = prefetch(windows[index + 1])

                def place(job: tuple[Buffer | None, ReadItem]) -> dict[str, str]:
                    return self._place(job, out, drop_axes, specs)

                statuses += await _on_threads(place, list(zip(fetched, window, strict=True)))
        finally:
            fetching.cancel()  # a no-op once done; stops a prefetch when a decode failed
        return tuple(statuses)

    def _place(self, job: tuple[Buffer | None, ReadItem], out: NDBuffer, drop_axes: tuple[int, ...],
               specs: dict[Any, Specs]) -> dict[str, str]:
        """Decode one fetched chunk and copy its selected part into ``out``."""
        chunk_bytes, (getter, spec, chunk_selection, out_selection, _) = job
        if chunk_bytes is None:
            out[out_selection] = fill_value_or_default(spec)
            return {"status": "missing"}
        with _naming_the_chunk(getter, "decoding"):
            part = self._decode_chunk(chunk_bytes, spec, specs)[chunk_selection]
        if drop_axes:
            part = part.squeeze(axis=drop_axes)
        out[out_selection] = part
        return {"status": "present"}

    # ------------------------------------------------------------------ writing

    async def write(self, batch_info: Iterable[WriteItem], value: NDBuffer, drop_axes: tuple[int, ...] = ()) -> None:
        if not self.encodes_synchronously:
            await super().write(batch_info, value, drop_axes)
            return
        specs: dict[Any, Specs] = {}
        for window in _windows(list(batch_info)):
            # Only chunks written in part are read back, to merge into (as zarr does).
            existing = await _fetch([(None if complete else setter, spec) for setter, spec, *_, complete in window])

            def merge_and_encode(job: tuple[Buffer | None, WriteItem]) -> Buffer | None:
                return self._merge_and_encode(job, value, drop_axes, specs)

            encoded = await _on_threads(merge_and_encode, list(zip(existing, window, strict=True)))
            # The whole window is encoded before any of it is stored: a chunk that fails
            # to encode leaves this window's chunks as they were.
            await _store([(setter, data) for data, (setter, *_) in zip(encoded, window, strict=True)])

    def _merge_and_encode(self, job: tuple[Buffer | None, WriteItem], value: NDBuffer, drop_axes: tuple[int, ...],
                          specs: dict[Any, Specs]) -> Buffer | None:
        """The bytes to store for one chunk, or None to delete it (all fill value, as zarr decides)."""
        existing_bytes, (setter, spec, chunk_selection, out_selection, complete) = job
        if existing_bytes is None:
            existing = None
        else:
            with _naming_the_chunk(setter, "decoding, to write into,"):
                existing = self._decode_chunk(existing_bytes, spec, specs)
        merge = _MERGE or getattr(self, "_merge_chunk_array")  # noqa: B009 - absent from zarr >= 3.3
        chunk = merge(existing, value, out_selection, spec, chunk_selection, complete, drop_axes)
        if not spec.config.write_empty_chunks and _all_equal(chunk, fill_value_or_default(spec)):
            return None
        with _naming_the_chunk(setter, "encoding"):
            return self._encode_chunk(chunk, spec, specs)

    # ------------------------------------------------------------------ codec chain

    def _decode_chunk(self, chunk_bytes: Buffer, spec: ArraySpec, specs: dict[Any, Specs]) -> NDBuffer:
        aa_specs, ab_spec, bb_specs = self._resolved(spec, specs)
        # _decode_sync is no part of zarr's Codec ABC: decodes_synchronously checked it exists.
        aa, ab, bb = self._untyped()
        data: Any = chunk_bytes
        for codec, bb_spec in zip(bb[::-1], bb_specs[::-1], strict=True):
            data = codec._decode_sync(data, bb_spec)
        chunk: NDBuffer = ab._decode_sync(data, ab_spec)
        for codec, aa_spec in zip(aa[::-1], aa_specs[::-1], strict=True):
            chunk = codec._decode_sync(chunk, aa_spec)
        return chunk

    def _encode_chunk(self, chunk: NDBuffer, spec: ArraySpec, specs: dict[Any, Specs]) -> Buffer | None:
        aa_specs, ab_spec, bb_specs = self._resolved(spec, specs)
        aa, ab, bb = self._untyped()
        for codec, aa_spec in zip(aa, aa_specs, strict=True):
            chunk = codec._encode_sync(chunk, aa_spec)
        data: Buffer | None = ab._encode_sync(chunk, ab_spec)
        for codec, bb_spec in zip(bb, bb_specs, strict=True):
            data = None if data is None else codec._encode_sync(data, bb_spec)
        return data

    def _untyped(self) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
        return self.array_array_codecs, self.array_bytes_codec, self.bytes_bytes_codecs

    def _resolved(self, spec: ArraySpec, specs: dict[Any, Specs]) -> Specs:
        """The spec each codec codes with, as zarr's pipeline resolves them."""
        if not self.array_array_codecs and not self.bytes_bytes_codecs:
            return [], spec, []  # the array -> bytes codec sees the chunk's own spec
        try:
            # Chunks of a regular grid share one spec: resolve it once, not per chunk.
            return specs[spec]
        except KeyError:
            pass
        except TypeError:  # an unhashable fill value: resolve this chunk's specs uncached
            return self._resolve(spec)
        specs[spec] = resolved = self._resolve(spec)
        return resolved

    def _resolve(self, spec: ArraySpec) -> Specs:
        aa, (_, ab), bb = self._codecs_with_resolved_metadata_batched([spec])
        return [s[0] for _, s in aa], ab[0], [s[0] for _, s in bb]


@contextmanager
def _naming_the_chunk(key: ByteGetter | ByteSetter, doing: str) -> Iterator[None]:
    """Say which chunk of which array an error is about: a codec sees only bytes and a shape.

    A rejection (core.errors.Rejection, a ValueError citing a requirement) is raised again as
    the same class with the chunk in its message; any other exception gets it as a note.
    """
    try:
        yield
    except Exception as exc:
        where = f"while {doing} the chunk at {_chunk_location(key)}"
        requirement, reason = getattr(exc, "requirement", None), getattr(exc, "reason", None)
        if isinstance(requirement, str) and isinstance(reason, str):
            try:
                named = type(exc)(requirement, f"{reason} ({where})")
            except TypeError:  # a subclass with another constructor
                named = None
            if named is not None:
                raise named from exc
        exc.add_note(where)
        raise


def _chunk_location(key: object) -> str:
    """``'arr/c/0/1' in memory://...`` for a store path; the position of an inner chunk of a shard."""
    path, store = getattr(key, "path", None), getattr(key, "store", None)
    if isinstance(path, str) and store is not None:
        return f"{path!r} in {store}"
    coords = getattr(key, "chunk_coords", None)  # zarr's byte getter of an inner chunk of a shard
    if isinstance(coords, tuple):
        return f"inner chunk {coords} of a shard"
    return type(key).__name__  # not its repr: that may hold a whole shard


def _all_equal(chunk: NDBuffer, fill: Any) -> bool:
    """``chunk.all_equal(fill)``, answered from the first element when that differs.

    zarr compares every element against a broadcast copy of the fill value (~250 us for a
    256x256x3 chunk, more than encoding it); chunks of image data differ from the fill
    value almost always, and at the first element mostly. Only for integer and boolean
    numpy data, where no NaN or signed zero makes equality subtle.
    """
    data = chunk.as_ndarray_like()
    if isinstance(data, np.ndarray) and data.dtype.kind in "iub" and data.size and np.isscalar(fill):
        if data.reshape(-1)[0] != fill:
            return False
        return bool((data == fill).all())
    return chunk.all_equal(fill)


def _windows(items: list[J]) -> list[list[J]]:
    size = WINDOW_PER_WORKER * workers()
    return [items[i : i + size] for i in range(0, len(items), size)]


async def _fetch(requests: Sequence[tuple[ByteGetter | None, ArraySpec]]) -> list[Buffer | None]:
    """Each getter's bytes (None for a None getter), at most ``async.concurrency`` requests in flight.

    zarr's concurrent_map makes a task per chunk (~11 us each); a few tasks that each await
    one chunk after another keep the same limit for ~3 us a chunk, which matters for
    in-memory stores, where a get costs less than its task.
    """
    found: list[Buffer | None] = [None] * len(requests)
    pending = iter(enumerate(requests))

    async def fetcher() -> None:
        for index, (getter, spec) in pending:
            if getter is not None:
                found[index] = await getter.get(spec.prototype)

    await _limited(fetcher, len(requests))
    return found


async def _store(writes: Sequence[tuple[ByteSetter, Buffer | None]]) -> None:
    """Set each key to its bytes, or delete it for None, at most ``async.concurrency`` at once."""
    pending = iter(writes)

    async def storer() -> None:
        for setter, data in pending:
            await (setter.delete() if data is None else setter.set(data))

    await _limited(storer, len(writes))


async def _limited(worker: Callable[[], Any], count: int) -> None:
    limit = zarr_config.get("async.concurrency") or count
    await asyncio.gather(*(worker() for _ in range(min(limit, count))))


async def _on_threads(func: Callable[[J], R], jobs: list[J]) -> list[R]:
    """``func(job)`` for every job, on ``workers()`` threads of the loop's executor, results in order.

    Each thread takes the next job when done with one, so a slow chunk delays no other
    thread. It returns, or raises the first error, only once every thread has stopped, so
    nothing is written into an output array after the call ends.
    """
    results: list[Any] = [None] * len(jobs)
    queue = _Queue(list(enumerate(jobs)))

    def drain() -> None:
        try:
            for index, job in queue:
                results[index] = func(job)
        except BaseException:
            queue.stop()  # the other threads finish their current job and return
            raise

    loop = asyncio.get_running_loop()
    try:
        outcomes = await asyncio.gather(
            *(loop.run_in_executor(None, drain) for _ in range(min(workers(), len(jobs)))), return_exceptions=True
        )
    except asyncio.CancelledError:
        queue.stop()  # threads cannot be cancelled: they finish their current job and return
        raise
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return results


class _Queue:
    """Jobs handed out one at a time to several threads."""

    def __init__(self, jobs: list[tuple[int, Any]]) -> None:
        self._jobs = iter(jobs)
        self._lock = threading.Lock()
        self._stopped = False

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        while True:
            with self._lock:
                job = None if self._stopped else next(self._jobs, None)
            if job is None:
                return
            yield job

    def stop(self) -> None:
        self._stopped = True


register_pipeline(ThreadedCodecPipeline)
