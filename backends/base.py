"""The shared base of the built-in adapters: spec logic from ``core``, pixels from a backend.

A backend subclass declares what its library can do correctly and implements a few
small hooks; everything the spec says (parsing, chunk checks, stream checks, color
rules) happens here, once. What a backend cannot do correctly is rejected at parse
time, as the spec asks of an implementation that cannot decode ``rgb``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np

from ..core import color, scans
from ..core.chunk import SPEC_MAX_DIMENSION, check_chunk
from ..core.config import JpegConfig, parse_codec
from ..core.errors import Rejection, StreamError, Unsupported
from ..core.stream import DecodePlan, plan_decode

Factor = tuple[int, int]
#: How the backend must hand back pixels: one plane, RGB converted from stored YCbCr,
#: or the stored components untouched.
DecodeMode = Literal["gray", "convert", "raw"]
RGB_IDS = (82, 71, 66)  # 'R', 'G', 'B': what every rgb encoder observed writes
YCBCR_IDS = (1, 2, 3)


class BackendRejection(Rejection):
    """The backend library refused the input cleanly (its own error, wrapped)."""


class BackendAdapter:
    """Base class of an adapter over one JPEG library. Subclasses set the capabilities."""

    name: ClassVar[str]
    roles: frozenset[str] = frozenset({"encode", "decode"})
    #: Luma factors (chroma [1, 1]) the library writes itself in one interleaved scan.
    native_factors: frozenset[Factor] = frozenset()
    #: True if other factor sets, rgb and YCbCr input may be written as non-interleaved
    #: scans assembled from grayscale streams of each component (core.scans).
    planar: ClassVar[bool] = True
    #: True if the library writes rgb (no transform, APP14 transform 0) itself.
    native_rgb: bool = False
    #: True if the library takes YCbCr input without converting it.
    native_ycbcr_input: ClassVar[bool] = False
    #: True if the library can return stored YCbCr samples unconverted.
    raw_ycbcr_output: ClassVar[bool] = False
    #: True if the library can be told the stored color space, overriding JFIF/APP14.
    forces_color_space: ClassVar[bool] = False
    #: Largest image height/width the library writes and reads.
    max_dimension: ClassVar[int] = 65500
    #: Exceptions of the library that mean a clean refusal of the input.
    backend_errors: ClassVar[tuple[type[BaseException], ...]] = (OSError,)
    #: True if a stream libjpeg-turbo only warns about (corrupt entropy-coded data: a bad
    #: Huffman code, a scan that ends early, bytes left over before a marker) is rejected, so
    #: that every decode is either refused or exactly libjpeg-turbo's strict decode
    #: (tools/corrupt_chunks.py measures it). The checks of core (truncation, the entropy
    #: floor, the scan rules) run for every backend; only the library can see inside a scan.
    strict: ClassVar[bool] = False

    # ---------------------------------------------------------------- contract

    def versions(self) -> dict[str, str]:
        raise NotImplementedError

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = parse_codec(codec)
        self._check_support(config)
        return config

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        config = self._config(parsed)
        image = check_chunk(config, chunk, min(self.max_dimension, SPEC_MAX_DIMENSION))
        try:
            return self._encode_image(config, image)
        except self.backend_errors as exc:
            raise BackendRejection("JPEG-ENC-04", f"{self.name} refused to encode: {exc}") from exc

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return self._decode_chunk(parsed, data, chunk_shape, None)

    def decode_into(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...], out: np.ndarray) -> None:
        """:meth:`decode`, its samples written into ``out`` (uint8, C order, ``chunk_shape``), by the library itself where it
        writes there (a harness's reply room: ``harnesses.server``); ``out`` is left unspecified when the stream is rejected."""
        if out.dtype != np.uint8 or out.shape != tuple(chunk_shape) or not out.flags.c_contiguous or not out.flags.writeable:
            # The caller's slip, not a verdict on the stream: not a ValueError, which would read as a rejection.
            raise RuntimeError(f"decode_into needs a writable C-order uint8 array of shape {tuple(chunk_shape)}, got "
                               f"{out.dtype} {out.shape}")
        pixels = self._decode_chunk(parsed, data, chunk_shape, out)
        if not np.may_share_memory(pixels, out):  # the library wrote its own array (or a conversion followed)
            np.copyto(out, pixels)

    def _decode_chunk(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...], out: np.ndarray | None) -> np.ndarray:
        config = self._config(parsed)
        plan = plan_decode(config, bytes(data), chunk_shape)
        self._check_stream_support(plan)
        if plan.stored == "grayscale":
            mode: DecodeMode = "gray"
        elif plan.stored == "ycbcr" and plan.output == "rgb":
            mode = "convert"
        else:
            mode = "raw"
        if plan.backend_disagrees and not self.forces_color_space:
            raise Unsupported(
                "JPEG-ECS-12",
                f"stream stores {plan.stored} (APP14 transform {plan.info.adobe_transform}) but {self.name} "
                f"would read it as {plan.info.libjpeg_color_space}, and cannot be told otherwise",
            )
        expected = (plan.height, plan.width, plan.components)
        # A backend's own _decode_pixels marked writes_into takes ``out``; one that is not (a subclass that overrides
        # it, as tests/wrong_adapters.py's do) is called as before, and decode_into copies what it returns.
        decode_pixels: Any = self._decode_pixels
        try:
            if out is not None and getattr(decode_pixels, "writes_into", False) and not (plan.stored == "rgb" and plan.output == "ycbcr"):
                # The samples the library writes are the chunk's only where no conversion follows.
                pixels = decode_pixels(bytes(data), plan, mode, out=out.reshape(expected))
            else:
                pixels = decode_pixels(bytes(data), plan, mode)
        except self.backend_errors as exc:
            raise BackendRejection("JPEG-DEC-01", f"{self.name} refused to decode: {exc}") from exc
        pixels = np.asarray(pixels)
        if pixels.dtype != np.uint8 or pixels.size != math.prod(expected):
            raise RuntimeError(f"{self.name} returned {pixels.dtype} {pixels.shape}, expected uint8 {expected}")
        pixels = pixels.reshape(expected)
        if plan.stored == "rgb" and plan.output == "ycbcr":
            pixels = color.rgb_to_ycbcr(pixels)
        return pixels.reshape(tuple(chunk_shape))

    # ---------------------------------------------------------------- capability checks

    def _config(self, parsed: object) -> JpegConfig:
        if not isinstance(parsed, JpegConfig):
            raise TypeError(f"{self.name}: expected a parsed codec from {self.name}.parse, got {type(parsed).__name__}")
        return parsed

    def writes_factors(self, factors: tuple[Factor, ...]) -> bool:
        return factors[0] in self.native_factors or self.planar

    def reads_factors(self, factors: tuple[Factor, ...]) -> bool:
        """Whether the library decodes a stream with these sampling factors (default: all)."""
        return True

    def _check_support(self, config: JpegConfig) -> None:
        ecs, dcs = config.encoded_color_space, config.decoded_color_space
        if ecs == "rgb" and not (self.native_rgb or self.planar):
            raise Unsupported("JPEG-ECS-11", f"{self.name} cannot write rgb (no color transform with APP14)")
        if dcs == "ycbcr" and not (self.raw_ycbcr_output and (self.native_ycbcr_input or self.planar)):
            raise Unsupported("JPEG-DCS-05", f"{self.name} cannot read or write YCbCr samples unconverted")
        if ecs == "ycbcr" and not (self.writes_factors(config.subsampling) and self.reads_factors(config.subsampling)):
            raise Unsupported(
                "JPEG-X-04" if not config.is_required_scheme else "JPEG-SUB-08",
                f"{self.name} cannot write and read sampling factors {[list(f) for f in config.subsampling]}",
            )

    def _check_stream_support(self, plan: DecodePlan) -> None:
        factors = tuple((c.h, c.v) for c in plan.info.components)
        if not self.reads_factors(factors):
            raise Unsupported("JPEG-X-04", f"{self.name} cannot decode sampling factors {[list(f) for f in factors]}")
        if plan.output == "ycbcr" and plan.stored == "ycbcr" and not self.raw_ycbcr_output:
            raise Unsupported("JPEG-DCS-05", f"{self.name} cannot return YCbCr samples unconverted")

    # ---------------------------------------------------------------- encoding paths

    def _encode_image(self, config: JpegConfig, image: np.ndarray) -> bytes:
        q = config.quality
        if config.encoded_color_space == "grayscale":
            return self._encode_gray(image[:, :, 0], q)
        if config.encoded_color_space == "rgb":
            if self.native_rgb:
                return self._encode_rgb(image, q)
            return self._encode_planar(image, config, RGB_IDS, adobe_transform=0, jfif=False)
        ycbcr_input = config.decoded_color_space == "ycbcr"
        if config.luma_factors in self.native_factors and (self.native_ycbcr_input or not ycbcr_input):
            return self._encode_ycbcr(image, q, config.luma_factors, ycbcr_input=ycbcr_input)
        ycc = image if ycbcr_input else color.rgb_to_ycbcr(image)
        return self._encode_planar(ycc, config, YCBCR_IDS, adobe_transform=None, jfif=True)

    def _encode_planar(
        self, image: np.ndarray, config: JpegConfig, ids: tuple[int, ...], *, adobe_transform: int | None, jfif: bool
    ) -> bytes:
        luma, chroma = scans.quant_tables(config.quality)
        same_table = config.encoded_color_space == "rgb"  # libjpeg's rgb uses table 0 for all components
        tables = [luma, luma if same_table else chroma, luma if same_table else chroma]
        return scans.encode_planar(
            image,
            factors=config.subsampling,
            component_ids=ids,
            adobe_transform=adobe_transform,
            jfif=jfif,
            tables=tables,
            encode_gray=lambda plane, table: self._encode_plane(plane, config.quality, table),
        )

    # ---------------------------------------------------------------- backend hooks

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        raise NotImplementedError

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: Factor, *, ycbcr_input: bool) -> bytes:
        raise NotImplementedError

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        raise NotImplementedError

    def _encode_plane(self, plane: np.ndarray, quality: int, table: np.ndarray) -> bytes:
        """A 1-component baseline stream of ``plane`` with quantization ``table``.

        A library that cannot take a table uses its own luma table for ``quality``: how
        quality maps to tables is the encoder's choice (JPEG-Q-03).
        """
        raise NotImplementedError

    def _decode_pixels(self, data: bytes, plan: DecodePlan, mode: DecodeMode) -> np.ndarray:
        """The decoded samples, ``(height, width, components)`` or as many in another shape. An implementation marked
        :func:`writes_into` also takes ``out=`` (an array of that shape), writes the samples there and returns a view of it."""
        raise NotImplementedError


F = TypeVar("F", bound=Callable[..., np.ndarray])


def writes_into(method: F) -> F:
    """Marks a backend's ``_decode_pixels`` that takes ``out=``: :meth:`BackendAdapter.decode_into` then copies nothing."""
    method.writes_into = True  # type: ignore[attr-defined]
    return method


__all__ = ["BackendAdapter", "BackendRejection", "DecodeMode", "StreamError", "writes_into"]
