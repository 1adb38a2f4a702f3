"""The ``jpeg`` codec for zarr-python: a Zarr v3 ``array -> bytes`` codec built on the shared core.

Parsing is :func:`core.config.parse_codec` (the same rules and the same :class:`ConfigError`
as everywhere in this project); chunk checks, stream checks and color rules are those of
:class:`backends.base.BackendAdapter`; the pixels come from one JPEG library, the first of
imagecodecs, Pillow and PyTurboJPEG that loads, unless a backend is named.

zarr finds the codec through the ``zarr.codecs`` entry point ``jpeg`` (or :func:`register`).
When several packages register ``jpeg``, pin this one with
``zarr.config.set({"codecs.jpeg": REGISTRY_KEY})``. The backend of codecs that zarr builds
from metadata can be chosen with ``zarr.config.set({BACKEND_CONFIG_KEY: "pillow"})``.

Public zarr API only (``zarr.abc.codec``, ``zarr.core.buffer``, ``zarr.core.array_spec``,
``zarr.registry``, ``zarr.config``), the same surface zarr's own codecs and its
custom-codec documentation use, so it works with zarr 3.1 and newer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from zarr.abc.codec import ArrayBytesCodec

from ..backends import BACKENDS as _BACKEND_MODULES
from ..backends import BackendUnavailable, load_backend
from ..backends.base import BackendAdapter
from ..core.config import JpegConfig
from ..core.errors import ChunkError

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

__all__ = [
    "BACKENDS",
    "backend_adapter",
    "BACKEND_CONFIG_KEY",
    "DEFAULT_QUALITY",
    "REGISTRY_KEY",
    "JpegCodec",
    "check_spec",
    "default_backend",
    "register",
    "zarr_threads_specs",
]

#: Built-in adapters the codec can run on, in order of preference.
BACKENDS: tuple[str, ...] = tuple(_BACKEND_MODULES)
#: The quality a convenience constructor uses when none is given (JPEG-Q-06 SHOULD).
DEFAULT_QUALITY = 95
#: The name zarr's codec registry files this class under (``module.qualname``).
REGISTRY_KEY = "zarr_jpeg_conformance.zarrcodecs.jpeg.JpegCodec"
#: zarr config key naming the backend of codecs built by ``from_dict`` (None: first that loads).
BACKEND_CONFIG_KEY = "jpeg_conformance.backend"


def backend_adapter(name: str) -> BackendAdapter:
    """The backend ``name`` (started once per process); BackendUnavailable says why it cannot run."""
    return load_backend(name)


@cache
def default_backend() -> str:
    """The first strict backend of :data:`BACKENDS` that loads; BackendUnavailable if none does.

    Only a strict backend is chosen unasked: a non-strict one returns corrupt entropy-coded
    data as pixels without an error, which a store of scientific data must not. Naming one
    in zarr's config (:data:`BACKEND_CONFIG_KEY`) is the user's informed choice.
    """
    reasons = []
    for name in BACKENDS:
        try:
            backend = backend_adapter(name)
        except BackendUnavailable as exc:
            reasons.append(f"{name}: {exc}")
            continue
        if backend.strict:
            return name
        reasons.append(f"{name}: loads, but is not strict (corrupt entropy data decodes to pixels without an error)")
    raise BackendUnavailable(
        "no strict JPEG backend for the zarr jpeg codec loads (install libturbojpeg and PyTurboJPEG,"
        f" or choose a non-strict backend with zarr.config.set({{{BACKEND_CONFIG_KEY!r}: NAME}})):\n  "
        + "\n  ".join(reasons)
    )


def _configured_backend() -> str:
    import zarr

    name = zarr.config.get(BACKEND_CONFIG_KEY, None)
    return str(name) if name else default_backend()


def _minimal_codec(
    quality: object, encoded_color_space: object, decoded_color_space: object, subsampling: object
) -> dict[str, Any]:
    cfg: dict[str, Any] = {"quality": quality, "encoded_color_space": encoded_color_space}
    if decoded_color_space is not None:
        cfg["decoded_color_space"] = decoded_color_space
    if subsampling is not None:
        cfg["subsampling"] = subsampling  # parse_codec takes lists or tuples, and rejects the rest
    return {"name": "jpeg", "configuration": cfg}


@dataclass(frozen=True, init=False)
class JpegCodec(ArrayBytesCodec):
    """The Zarr v3 ``jpeg`` codec. Fields hold the parsed configuration, defaults applied.

    ``JpegCodec(encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])`` builds
    one with quality 95; :meth:`from_dict` parses metadata, where ``quality`` is required.
    Invalid configurations raise :class:`core.errors.ConfigError` (a ``ValueError``); a valid
    one the backend cannot handle correctly raises :class:`core.errors.Unsupported`.
    """

    #: JPEG output size depends on the content.
    is_fixed_size: ClassVar[bool] = False  # type: ignore[misc]

    quality: int
    encoded_color_space: str
    decoded_color_space: str
    subsampling: tuple[tuple[int, int], ...]
    #: Which library encodes and decodes; not part of the metadata, nor of equality.
    backend: str = field(compare=False)

    def __init__(
        self,
        *,
        quality: int = DEFAULT_QUALITY,
        encoded_color_space: str,
        decoded_color_space: str | None = None,
        subsampling: Sequence[Sequence[int]] | None = None,
        backend: str | None = None,
    ) -> None:
        self._set(_minimal_codec(quality, encoded_color_space, decoded_color_space, subsampling), backend)

    def _set(self, codec: Mapping[str, Any], backend: str | None) -> None:
        name = backend or _configured_backend()
        # The backend's parse is core.config.parse_codec plus the rejection, at parse time,
        # of what this library cannot do correctly (JPEG-ECS-11).
        config = backend_adapter(name).parse(codec)
        for key, value in (
            ("quality", config.quality),
            ("encoded_color_space", config.encoded_color_space),
            ("decoded_color_space", config.decoded_color_space),
            ("subsampling", config.subsampling),
            ("backend", name),
        ):
            object.__setattr__(self, key, value)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Parse a codec object from metadata: no defaults beyond the spec's (JPEG-Q-05)."""
        codec = cls.__new__(cls)
        codec._set(data, None)
        return codec

    @classmethod
    def with_backend(cls, data: Mapping[str, Any], backend: str) -> Self:
        """Parse a codec object like :meth:`from_dict`, on the named backend."""
        codec = cls.__new__(cls)
        codec._set(data, backend)
        return codec

    @property
    def config(self) -> JpegConfig:
        return JpegConfig(self.quality, self.encoded_color_space, self.decoded_color_space, self.subsampling)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The codec object written minimally: default ``decoded_color_space`` and, for rgb and
        grayscale, ``subsampling`` are omitted (JPEG-SUB-06)."""
        return self.config.to_codec()

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        # Variable-size output: zarr's contract is NotImplementedError, as for gzip or zstd.
        raise NotImplementedError("the size of a JPEG stream depends on the chunk's content")

    # Early errors. What reaches this codec is the chunk as the array -> array codecs before
    # it (transpose, reshape, a cast) leave it, not the array's own chunk: validate() cannot
    # check it, because zarr passes it the array's shape and dtype (zarr >= 3.2 passes the
    # threaded ones once, then the array's own again). zarr >= 3.2 evolves each codec against
    # the spec the codecs before it leave (its dtype and rank are exactly those of every chunk
    # this codec will see); zarr 3.1 evolves every codec against the array's own spec, so there
    # the checks wait for the first chunk. The spec's shape is the array's when zarr builds
    # metadata and a chunk's when it builds the codec pipeline, and nothing tells the two apart,
    # so the component count of 3D chunks and the 65535 limit, which depend on the chunk's own
    # shape, stay per-chunk checks (below and in BackendAdapter), as do all checks on zarr 3.1.

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        if zarr_threads_specs():
            check_spec(self.config, _native_dtype(array_spec), len(array_spec.shape))
        return self

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        data = backend_adapter(self.backend).encode(self.config, chunk_array.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(data)

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        dtype = _native_dtype(chunk_spec)
        if dtype != np.uint8:
            raise ChunkError("JPEG-DT-01", f"array data type is {dtype}: only uint8 is supported")
        out = backend_adapter(self.backend).decode(self.config, chunk_bytes.to_bytes(), tuple(chunk_spec.shape))
        return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

    # imagecodecs, Pillow and PyTurboJPEG release the GIL for all but the start and end of a
    # call, so in zarr's default pipeline each chunk runs in a worker thread, off zarr's
    # event loop, and chunks code in parallel. _encode_sync/_decode_sync are zarr's
    # SupportsSyncCodec protocol (zarr >= 3.2): FusedCodecPipeline (zarr >= 3.3) and
    # pipeline.ThreadedCodecPipeline call them directly on threads of their own.
    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        return await asyncio.to_thread(self._encode_sync, chunk_array, chunk_spec)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)


def check_spec(config: JpegConfig, dtype: np.dtype[Any], ndim: int) -> None:
    """Reject a data type or rank that every chunk reaching the codec would have and the spec rejects."""
    when = "every chunk the jpeg codec would code has"
    if dtype != np.uint8:
        raise ChunkError("JPEG-DT-01", f"{when} data type {dtype}: only uint8 is supported")
    if ndim < 2:
        raise ChunkError("JPEG-SHP-01", f"{when} {ndim} dimension(s): reshape to 2D first")
    if ndim > 3:
        raise ChunkError("JPEG-SHP-06", f"{when} {ndim} dimensions: transpose/reshape down to 2D or 3D")
    if ndim == 2 and config.components != 1:
        raise ChunkError(
            "JPEG-CFG-02",
            f"{when} 2 dimensions, so 1 component, but encoded_color_space {config.encoded_color_space!r} "
            f"needs {config.components}: give the chunks a channel axis of 3",
        )


@cache
def zarr_threads_specs() -> bool:
    """Whether zarr evolves each codec against the spec the codecs before it leave (zarr >= 3.2)."""
    import zarr

    major, minor = (int(part) for part in re.findall(r"\d+", zarr.__version__)[:2])
    return (major, minor) >= (3, 2)


def _native_dtype(chunk_spec: ArraySpec) -> np.dtype[Any]:
    dtype: Any = chunk_spec.dtype
    # zarr >= 3.1 wraps data types (ZDType); earlier releases used numpy dtypes directly.
    to_native = getattr(dtype, "to_native_dtype", None)
    return np.dtype(to_native() if to_native else dtype)


def register() -> None:
    """Register :class:`JpegCodec` as ``jpeg`` (and the reshape codec, if zarr has none).

    Not needed once the package's ``zarr.codecs`` entry point is installed; harmless then.
    """
    from zarr.registry import register_codec

    from . import reshape

    register_codec("jpeg", JpegCodec)
    reshape.register()
