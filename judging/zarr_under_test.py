"""A zarr-python codec named ``jpeg`` that hands each chunk to the implementation under test.

The store suite reads real Zarr arrays (transpose, reshape and sharding around the jpeg
codec) through zarr-python, so that zarr finds every stored chunk and the shape the jpeg
codec sees for it; this codec puts the implementation under test where a jpeg codec sits,
and remembers every call (the stream, the chunk shape, what came back), so each chunk can
be judged against its expected decodes. zarr only imports it when the suite asks for it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from zarr.abc.codec import ArrayBytesCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

#: zarr's name for this class in its codec registry (module.qualname).
REGISTRY_KEY = f"{__name__}.CodecUnderTest"


@dataclass
class Call:
    """One decode zarr asked for: the stream, the shape, and what the implementation did."""

    data: bytes
    shape: tuple[int, ...]
    result: object = None
    error: BaseException | None = None


@dataclass
class _Session:
    impl: Any
    codec: Mapping[str, Any]
    parsed: object
    calls: list[Call] = field(default_factory=list)


_LOCK = threading.Lock()
_SESSION: _Session | None = None
# A thread of its own, not the loop's default executor: zarr makes that executor its own pool,
# sized once per process, and an implementation built on zarr (the zarr adapter) needs a worker
# of that pool for its own chunk while this call holds one; with a pool of one worker the read
# waited on itself forever.
_DECODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codec_under_test")


@dataclass(frozen=True)
class CodecUnderTest(ArrayBytesCodec):
    """Decodes through the implementation of the current :func:`reading` session; never encodes."""

    is_fixed_size: ClassVar[bool] = False  # type: ignore[misc]
    #: The session the store was opened in. zarr goes on with the decodes it had scheduled after one chunk's
    #: decode failed; looked up when they ran, a next store read opened at once was charged with them.
    session: _Session | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        session = _current()
        if dict(data) != dict(session.codec):
            raise ValueError(f"the store's jpeg codec object {dict(data)} is not the one under test {dict(session.codec)}")
        return cls(session=session)

    def _session(self) -> _Session:
        return self.session if self.session is not None else _current()

    def to_dict(self) -> dict[str, Any]:
        return dict(self._session().codec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("the size of a JPEG stream depends on the chunk's content")

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        session = self._session()
        call = Call(chunk_bytes.to_bytes(), tuple(int(n) for n in chunk_spec.shape))
        session.calls.append(call)
        try:
            call.result = session.impl.decode(session.parsed, call.data, call.shape)
        except Exception as exc:
            call.error = exc
            raise
        out = np.array(call.result, copy=True, subok=False)
        if out.shape != call.shape or out.dtype != np.uint8:
            # zarr would fail on it with its own words; the suite judges the call it recorded.
            out = np.zeros(call.shape, np.uint8)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        # Off zarr's event loop: an implementation may itself be built on zarr (the zarr
        # adapter), whose synchronous API refuses to run inside a running loop.
        return await asyncio.get_running_loop().run_in_executor(_DECODER, self._decode_sync, chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        raise NotImplementedError("the store suite only reads")


def _current() -> _Session:
    if _SESSION is None:
        raise RuntimeError("CodecUnderTest used outside zarr_under_test.reading()")
    return _SESSION


@contextmanager
def reading(impl: Any, codec: Mapping[str, Any], parsed: object) -> Iterator[list[Call]]:
    """While open, zarr's ``jpeg`` is the implementation ``impl`` with its ``parsed`` configuration.

    Yields the list of calls made. One session at a time: zarr's registry is global.
    """
    import zarr
    from zarr.registry import register_codec

    global _SESSION
    with _LOCK:
        register_codec("jpeg", CodecUnderTest)
        _SESSION = _Session(impl, codec, parsed)
        try:
            # One chunk at a time: an implementation in another process answers one call at a time.
            with zarr.config.set({"codecs.jpeg": REGISTRY_KEY, "async.concurrency": 1}):
                yield _SESSION.calls
        finally:
            _SESSION = None


__all__ = ["REGISTRY_KEY", "Call", "CodecUnderTest", "reading"]
