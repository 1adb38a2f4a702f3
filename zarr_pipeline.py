"""A zarr codec pipeline that decodes whole chunks on zarr's worker threads.

zarr 3.1's default pipeline runs each chunk's codec chain as coroutines on its event-loop
thread and hands only the codec call itself to a worker thread; the event loop then copies
the chunk into the output. That per-chunk work (~125 us, bench_zarr's "zarr, no decode") is
serialized on one thread, beside ~230 us of decode, so a second worker adds little
(issue 5's measurement). This pipeline keeps fetching on the event loop and moves everything
after it off: each of ``threading.max_workers`` jobs takes the next fetched chunk, runs the
codec chain synchronously (the ``_decode_sync`` methods zarr's codecs and this project's
have), and writes the result into the output array.

Opt in before opening an array::

    zarr.config.set({"codec_pipeline.path": PIPELINE_PATH})

It applies to reads of codec chains whose codecs all have ``_decode_sync``; anything else
(sharding's partial decode, a codec without a synchronous path) and every write go through
zarr's default pipeline, which this class extends.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zarr.core.codec_pipeline import BatchedCodecPipeline, fill_value_or_default
from zarr.core.config import config as zarr_config
from zarr.registry import register_pipeline

if TYPE_CHECKING:
    from zarr.abc.store import ByteGetter
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.indexing import SelectorTuple

__all__ = ["PIPELINE_PATH", "ThreadedCodecPipeline"]

#: The value of zarr's ``codec_pipeline.path`` that selects this pipeline.
PIPELINE_PATH = "zarr_jpeg_conformance.zarr_pipeline.ThreadedCodecPipeline"
#: Chunks fetched ahead per worker: the next window is fetched while this one decodes,
#: so at most two windows of encoded chunks are held at once.
WINDOW_PER_WORKER = 32

ReadItem = tuple["ByteGetter", "ArraySpec", "SelectorTuple", "SelectorTuple", bool]


def workers() -> int:
    """How many chunks decode at once: zarr's ``threading.max_workers``, else the CPU count."""
    configured = zarr_config.get("threading.max_workers", None)
    return max(1, int(configured) if configured else os.cpu_count() or 1)


@dataclass(frozen=True)
class ThreadedCodecPipeline(BatchedCodecPipeline):
    """zarr's batched pipeline, with reads decoded and assembled on worker threads."""

    @property
    def decodes_synchronously(self) -> bool:
        """Whether every codec of the chain has a synchronous decode this pipeline can call."""
        return not self.supports_partial_decode and all(callable(getattr(codec, "_decode_sync", None)) for codec in self)

    async def read(self, batch_info: Iterable[ReadItem], out: NDBuffer, drop_axes: tuple[int, ...] = ()) -> None:
        if not self.decodes_synchronously:
            await super().read(batch_info, out, drop_axes)
            return
        items = list(batch_info)
        if not items:
            return
        size = WINDOW_PER_WORKER * workers()
        windows = [items[i : i + size] for i in range(0, len(items), size)]
        fetching = asyncio.ensure_future(self._fetch(windows[0]))
        try:
            for index, window in enumerate(windows):
                fetched = await fetching
                if index + 1 < len(windows):
                    fetching = asyncio.ensure_future(self._fetch(windows[index + 1]))
                await self._decode_window(list(zip(fetched, window, strict=True)), out, drop_axes)
        finally:
            fetching.cancel()  # a no-op once done; stops a prefetch when a decode failed

    async def _fetch(self, window: list[ReadItem]) -> list[Buffer | None]:
        """The window's encoded chunks, at most ``async.concurrency`` requests in flight, as zarr does.

        zarr's concurrent_map makes a task per chunk (~11 us each); a few tasks that each
        await one chunk after another keep the same limit for ~3 us a chunk, which matters
        for in-memory stores, where a get costs less than its task.
        """
        found: list[Buffer | None] = [None] * len(window)
        pending = iter(enumerate(window))

        async def fetcher() -> None:
            for index, (getter, spec, *_) in pending:
                found[index] = await getter.get(spec.prototype)

        limit = zarr_config.get("async.concurrency") or len(window)
        await asyncio.gather(*(fetcher() for _ in range(min(limit, len(window)))))
        return found

    async def _decode_window(self, jobs: list[tuple[Buffer | None, ReadItem]], out: NDBuffer, drop_axes: tuple[int, ...]) -> None:
        loop = asyncio.get_running_loop()
        queue = _Queue(jobs)
        # Each job drains the shared queue, so a slow chunk delays no other job's next chunk.
        try:
            results = await asyncio.gather(
                *(loop.run_in_executor(None, self._drain, queue, out, drop_axes) for _ in range(min(workers(), len(jobs)))),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            queue.stop()  # threads cannot be cancelled: they finish their current chunk and return
            raise
        # Every job has returned by now: nothing writes into ``out`` after an error is raised.
        for result in results:
            if isinstance(result, BaseException):
                raise result

    def _drain(self, queue: _Queue, out: NDBuffer, drop_axes: tuple[int, ...]) -> None:
        specs: dict[Any, tuple[list[ArraySpec], ArraySpec, list[ArraySpec]]] = {}
        try:
            for chunk_bytes, (_, spec, chunk_selection, out_selection, _) in queue:
                chunk = None if chunk_bytes is None else self._decode_chunk(chunk_bytes, spec, specs)
                if chunk is None:
                    out[out_selection] = fill_value_or_default(spec)
                    continue
                part = chunk[chunk_selection]
                if drop_axes:
                    part = part.squeeze(axis=drop_axes)
                out[out_selection] = part
                # Free the decoded chunk before the next decode allocates one: with two alive,
                # glibc returns the top of the heap to the system and page-faults it back.
                del chunk, part
        except BaseException:
            queue.stop()  # the other jobs finish their current chunk and return
            raise

    def _decode_chunk(self, chunk_bytes: Buffer, spec: ArraySpec, cache: dict[Any, Any]) -> NDBuffer:
        aa_specs, ab_spec, bb_specs = self._resolved(spec, cache)
        # _decode_sync is no part of zarr's Codec ABC: decodes_synchronously checked it exists.
        bb: tuple[Any, ...] = self.bytes_bytes_codecs
        aa: tuple[Any, ...] = self.array_array_codecs
        ab: Any = self.array_bytes_codec
        data: Any = chunk_bytes
        for codec, bb_spec in zip(bb[::-1], bb_specs[::-1], strict=True):
            data = codec._decode_sync(data, bb_spec)
        chunk: NDBuffer = ab._decode_sync(data, ab_spec)
        for codec, aa_spec in zip(aa[::-1], aa_specs[::-1], strict=True):
            chunk = codec._decode_sync(chunk, aa_spec)
        return chunk

    def _resolved(self, spec: ArraySpec, cache: dict[Any, Any]) -> tuple[list[ArraySpec], ArraySpec, list[ArraySpec]]:
        """The spec each codec decodes with, as zarr's pipeline resolves them (``array_spec`` order)."""
        if not self.array_array_codecs and not self.bytes_bytes_codecs:
            return [], spec, []  # the array -> bytes codec sees the chunk's own spec
        try:
            # Chunks of a regular grid share one spec: resolve it once, not per chunk.
            return cache[spec]
        except KeyError:
            pass
        except TypeError:  # an unhashable fill value: resolve this chunk's specs uncached
            return self._resolve(spec)
        cache[spec] = resolved = self._resolve(spec)
        return resolved

    def _resolve(self, spec: ArraySpec) -> tuple[list[ArraySpec], ArraySpec, list[ArraySpec]]:
        aa, (_, ab), bb = self._codecs_with_resolved_metadata_batched([spec])
        return [s[0] for _, s in aa], ab[0], [s[0] for _, s in bb]


class _Queue:
    """The chunks of a window, handed out one at a time to several threads."""

    def __init__(self, jobs: list[tuple[Buffer | None, ReadItem]]) -> None:
        self._jobs = iter(jobs)
        self._lock = threading.Lock()
        self._stopped = False

    def __iter__(self) -> Iterator[tuple[Buffer | None, ReadItem]]:
        while True:
            with self._lock:
                job = None if self._stopped else next(self._jobs, None)
            if job is None:
                return
            yield job

    def stop(self) -> None:
        self._stopped = True


register_pipeline(ThreadedCodecPipeline)
