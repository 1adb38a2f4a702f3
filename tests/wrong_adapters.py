"""Deliberately wrong adapters, each breaking one rule of the spec.

The project's proof that its suites bite: every adapter here must be caught by the
suites, with a failure that cites the requirement it breaks (tests/test_suites_bite.py).
They build on the imagecodecs adapter so that everything except the one fault is right.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import imagecodecs
import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.core.config import JpegConfig
from zarr_jpeg_conformance.core.errors import ConfigError


def _strip_segment(data: bytes, marker: int) -> bytes:
    """Remove every segment with this marker byte that precedes the first SOS."""
    out, i = bytearray(data[:2]), 2
    while i + 4 <= len(data) and data[i] == 0xFF and data[i + 1] != 0xDA:
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if data[i + 1] != marker:
            out += data[i : i + 2 + length]
        i += 2 + length
    return bytes(out + data[i:])


class LenientParse(ImagecodecsAdapter):
    """Accepts out-of-range quality by clamping it, as several libraries do."""

    name = "wrong-lenient-parse"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        if not isinstance(codec, Mapping) or not isinstance(codec.get("configuration"), Mapping):
            return super().parse(codec)
        cfg = dict(codec["configuration"])
        q = cfg.get("quality")
        if isinstance(q, int) and not isinstance(q, bool):
            cfg["quality"] = min(max(q, 1), 100)
        return super().parse({**codec, "configuration": cfg})


class NoApp14(ImagecodecsAdapter):
    """Writes rgb streams without the APP14 Adobe marker."""

    name = "wrong-no-app14"

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return _strip_segment(super()._encode_rgb(image, quality), 0xEE)


class WrongFactors(ImagecodecsAdapter):
    """Always writes 4:2:0, whatever the configuration says."""

    name = "wrong-factors"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        return super()._encode_ycbcr(image, quality, (2, 2), ycbcr_input=ycbcr_input)


class TransposedAxes(ImagecodecsAdapter):
    """Treats the first axis as width (the zarrs_jpeg bug), in both directions."""

    name = "wrong-transposed"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.ndim in (2, 3) and chunk.dtype == np.uint8:
            chunk = np.ascontiguousarray(np.swapaxes(chunk, 0, 1))
        return super().encode(parsed, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        swapped = (chunk_shape[1], chunk_shape[0], *chunk_shape[2:])
        return super().decode(parsed, data, swapped).reshape(chunk_shape)


class TransposesTwoDimensionalChunks(ImagecodecsAdapter):
    """Writes a chunk of two axes (a grayscale chunk without its channel axis) with its axes swapped, as a codec that
    reads such chunks in Fortran order does; chunks with a channel axis are written right."""

    name = "wrong-transposes-2d"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.ndim == 2:
            chunk = np.ascontiguousarray(chunk.T)
        return super().encode(parsed, chunk)


class ChannelSwap(ImagecodecsAdapter):
    """Reads 3-channel chunks as BGR when writing ycbcr (its decoder is right: only its streams show it)."""

    name = "wrong-channel-swap"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        return super()._encode_ycbcr(np.ascontiguousarray(image[:, :, ::-1]), quality, luma, ycbcr_input=ycbcr_input)


class DecodesBgr(ImagecodecsAdapter):
    """Returns every 3-component decode with its components reversed (its streams are right)."""

    name = "wrong-decodes-bgr"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        return np.ascontiguousarray(out[..., ::-1]) if out.ndim == 3 and out.shape[-1] == 3 else out


class _EncodeOnly(ImagecodecsAdapter):
    """A writer only (a converter that writes Zarr arrays): judged by its streams alone."""

    roles = frozenset({"encode"})


class WritesBgr(_EncodeOnly):
    """Encode-only: stores RGB chunks in BGR order, in every colour mode."""

    name = "wrong-writes-bgr"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.ndim == 3 and chunk.shape[-1] == 3:
            chunk = np.ascontiguousarray(chunk[..., ::-1])
        return super().encode(parsed, chunk)


class WritesRgbAsYcbcr(_EncodeOnly):
    """Encode-only: stores the RGB input unconverted in a stream labelled YCbCr (JFIF)."""

    name = "wrong-writes-rgb-as-ycbcr"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        return super()._encode_ycbcr(image, quality, luma, ycbcr_input=True)


class WritesYcbcrAsRgb(_EncodeOnly):
    """Encode-only: YCbCr-converts rgb data and labels the stream APP14 transform 0."""

    name = "wrong-writes-ycbcr-as-rgb"

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return super()._encode_rgb(color.rgb_to_ycbcr(image), quality)


class _OtherQuality(ImagecodecsAdapter):
    """Encodes at ``_quality(q)`` where the configuration says q (the fault of each subclass)."""

    def _quality(self, quality: int) -> int:
        raise NotImplementedError

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        return super()._encode_ycbcr(image, self._quality(quality), luma, ycbcr_input=ycbcr_input)

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return super()._encode_gray(plane, self._quality(quality))

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return super()._encode_rgb(image, self._quality(quality))


class IgnoresQuality(_OtherQuality):
    """Encodes at quality 75 whatever the configuration says."""

    name = "wrong-ignores-quality"

    def _quality(self, quality: int) -> int:
        return 75


class QualityTen(_OtherQuality):
    """Encodes at quality 10 whatever the configuration says: legal streams, far below every fidelity floor."""

    name = "wrong-quality-ten"

    def _quality(self, quality: int) -> int:
        return 10


class CastsDtype(ImagecodecsAdapter):
    """Casts any numeric chunk to uint8 instead of rejecting it."""

    name = "wrong-casts-dtype"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.dtype != np.uint8 and chunk.dtype.kind in "biuf":
            chunk = chunk.astype(np.uint8)
        return super().encode(parsed, chunk)


class AnyShape(ImagecodecsAdapter):
    """Encodes 1D chunks as one row (JPEG-SHP-01)."""

    name = "wrong-any-shape"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.ndim == 1:
            chunk = chunk.reshape(1, -1)
        return super().encode(parsed, chunk)


class SqueezesLeadingAxes(ImagecodecsAdapter):
    """Squeezes leading size-1 axes of a 4D or 5D chunk and encodes what is left (JPEG-SHP-06)."""

    name = "wrong-squeezes-leading-axes"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        while isinstance(chunk, np.ndarray) and chunk.ndim > 3 and chunk.shape[0] == 1:
            chunk = chunk[0]
        return super().encode(parsed, chunk)


class ConvertsRgb(ImagecodecsAdapter):
    """Applies the YCbCr transform to rgb data but still labels the stream APP14 transform 0."""

    name = "wrong-converts-rgb"

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return super()._encode_rgb(color.rgb_to_ycbcr(image), quality)


class Progressive(ImagecodecsAdapter):
    """Writes progressive (SOF2) streams: valid JPEG, but not baseline."""

    name = "wrong-progressive"

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        import io

        from PIL import Image

        if max(plane.shape) > 65500:  # libjpeg's own limit: the base's refusal, not this fault
            return super()._encode_gray(plane, quality)
        buf = io.BytesIO()
        Image.fromarray(plane, "L").save(buf, "JPEG", quality=quality, progressive=True)
        return buf.getvalue()


class PassthroughConverts(ImagecodecsAdapter):
    """With decoded_color_space ycbcr, converts the input as if it were RGB."""

    name = "wrong-passthrough-converts"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        return super()._encode_ycbcr(image, quality, luma, ycbcr_input=False)

    def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
        if plan.output == "ycbcr":
            return color.rgb_to_ycbcr(np.asarray(imagecodecs.jpeg8_decode(data)))
        return super()._decode_pixels(data, plan, mode)


class DecodeFollowsConfig(ImagecodecsAdapter):
    """Decodes a 3-component stream it accepted as YCbCr whenever the configuration says ycbcr, whatever the stream's markers say."""

    name = "wrong-decode-follows-config"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        assert isinstance(parsed, JpegConfig)
        right = super().decode(parsed, data, chunk_shape)  # every check of the stream against the chunk, as before
        if parsed.encoded_color_space == "ycbcr" and parsed.decoded_color_space == "rgb" and right.ndim == 3:
            out = imagecodecs.jpeg8_decode(data, colorspace="YCbCr", outcolorspace="RGB")
            return np.asarray(out).reshape(chunk_shape)
        return right


class NoJfif(ImagecodecsAdapter):
    """Leaves out the JFIF APP0 marker (a SHOULD, so only a warning)."""

    name = "wrong-no-jfif"

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return _strip_segment(super()._encode_gray(plane, quality), 0xE0)


class RejectsRequired(ImagecodecsAdapter):
    """Rejects 4:4:0, which every implementation must support."""

    name = "wrong-rejects-440"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = super().parse(codec)
        if config.encoded_color_space == "ycbcr" and config.luma_factors == (1, 2):
            raise ConfigError("JPEG-SUB-08", "4:4:0 is not supported")
        return config


class CrashesOnParse(ImagecodecsAdapter):
    """Raises KeyError (not a rejection) on a missing member: an error, never a rejection."""

    name = "wrong-crashes"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        codec["configuration"]["quality"]  # the fault under test
        return super().parse(codec)


class ParseCrashes(ImagecodecsAdapter):
    """Raises RuntimeError (not a rejection) parsing every configuration, valid ones too."""

    name = "wrong-parse-crashes"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        raise RuntimeError("the parser exploded")


# ---------------------------------------------------------------- faults the capability model and the invariants catch


class RejectsRequiredAtEncode(ImagecodecsAdapter):
    """Accepts 4:4:0 when parsing, then refuses to write it: a required scheme refused, at encode."""

    name = "wrong-rejects-440-at-encode"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(parsed, JpegConfig) and parsed.encoded_color_space == "ycbcr" and parsed.luma_factors == (1, 2):
            raise ValueError("writing 4:4:0 is not supported")
        return super().encode(parsed, chunk)


class RgbDecodeRefused(ImagecodecsAdapter):
    """Accepts rgb when parsing and writes it, then refuses rgb streams when decoding (JPEG-ECS-11)."""

    name = "wrong-rgb-decode-refused"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if isinstance(parsed, JpegConfig) and parsed.encoded_color_space == "rgb":
            raise ValueError("rgb streams are not decoded")
        return super().decode(parsed, data, chunk_shape)


class ProgressiveWhenLarge(ImagecodecsAdapter):
    """Writes baseline for the bitstream suite's 40x72 chunk but progressive (SOF2) for larger grayscale chunks."""

    name = "wrong-progressive-when-large"

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        if plane.size <= 40 * 72:
            return super()._encode_gray(plane, quality)
        return Progressive._encode_gray(self, plane, quality)  # type: ignore[arg-type]


class FactorsWhenTiny(ImagecodecsAdapter):
    """Writes 4:4:4 instead of the configured factors when the chunk is smaller than one MCU."""

    name = "wrong-factors-when-tiny"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: tuple[int, int], *, ycbcr_input: bool) -> bytes:
        if image.shape[0] < 8 * luma[1] or image.shape[1] < 8 * luma[0]:
            luma = (1, 1)
        return super()._encode_ycbcr(image, quality, luma, ycbcr_input=ycbcr_input)


class HidesLowQuality(ImagecodecsAdapter):
    """Encodes at quality 5 and writes the decode of that stream back into the caller's chunk.

    Judged against the chunk it was handed, it looks perfect; judged against the original
    (the suite keeps its own copy), its fidelity is that of quality 5.
    """

    name = "wrong-hides-low-quality"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        assert isinstance(parsed, JpegConfig)
        low = JpegConfig(5, parsed.encoded_color_space, parsed.decoded_color_space, parsed.subsampling)
        data = super().encode(low, chunk)
        if isinstance(chunk, np.ndarray) and chunk.flags.writeable:
            chunk[...] = super().decode(low, data, chunk.shape)
        return data


class ReusesOutputBuffer(ImagecodecsAdapter):
    """Decodes by the configuration (quality and factors change the output) into one buffer it hands out every time.

    Two decodes compared as returned are one array: equal whatever they held.
    """

    name = "wrong-reuses-output-buffer"

    def __init__(self) -> None:
        super().__init__()
        self._buffers: dict[tuple[int, ...], np.ndarray] = {}

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        if isinstance(parsed, JpegConfig) and parsed.quality < 50:
            out = np.clip(out.astype(np.int16) + 9, 0, 255).astype(np.uint8)  # the configuration leaks into the decode
        buffer = self._buffers.setdefault(tuple(chunk_shape), np.empty(chunk_shape, np.uint8))
        buffer[...] = out
        return buffer


class ReadsMemoryOrder(ImagecodecsAdapter):
    """Reads the chunk's samples in memory order (``ravel(order='K')``), not in C order."""

    name = "wrong-reads-memory-order"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.ndim >= 2:
            chunk = np.ascontiguousarray(chunk.ravel(order="K").reshape(chunk.shape))
        return super().encode(parsed, chunk)


class ReturnsBytes(ImagecodecsAdapter):
    """Returns the decoded samples as bytes, not as an array."""

    name = "wrong-returns-bytes"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return super().decode(parsed, data, chunk_shape).tobytes()  # type: ignore[return-value]


class EncodeReturnsText(ImagecodecsAdapter):
    """Returns the stream as base64 text, not bytes."""

    name = "wrong-encode-returns-text"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        import base64

        return base64.b64encode(super().encode(parsed, chunk)).decode("ascii")  # type: ignore[return-value]


class DecodesZeros(ImagecodecsAdapter):
    """Returns an all-zero chunk of the right shape for colour streams (a decoder that silently gives up)."""

    name = "wrong-decodes-zeros"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        return np.zeros_like(out) if out.ndim == 3 and out.shape[2] == 3 else out


class SwapsOneColumn(ImagecodecsAdapter):
    """Writes a one-column chunk as a one-row frame and swaps it back when decoding.

    Its own round trip is exact; only the frame it writes shows the swap.
    """

    name = "wrong-swaps-one-column"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.ndim in (2, 3) and chunk.shape[1] == 1 and chunk.dtype == np.uint8:
            chunk = np.ascontiguousarray(np.swapaxes(chunk, 0, 1))
        return super().encode(parsed, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if len(chunk_shape) in (2, 3) and chunk_shape[1] == 1:
            swapped = (1, chunk_shape[0], *chunk_shape[2:])
            return np.ascontiguousarray(np.swapaxes(super().decode(parsed, data, swapped), 0, 1))
        return super().decode(parsed, data, chunk_shape)


class CrashesOnWrongDtype(ImagecodecsAdapter):
    """Raises RuntimeError (not a rejection) on a chunk of another dtype: the implementation's error."""

    name = "wrong-crashes-on-dtype"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.dtype != np.uint8:
            raise RuntimeError(f"no buffer format for {chunk.dtype}")  # the fault under test
        return super().encode(parsed, chunk)


class NonMonotoneStep(_OtherQuality):
    """Writes quality 55 with quality 40's tables: the ends of a sweep are right, one step up loses."""

    name = "wrong-non-monotone-step"

    def _quality(self, quality: int) -> int:
        return 40 if quality == 55 else quality  # the fault under test


class WritesLumaOnly(ImagecodecsAdapter):
    """Writes a ycbcr chunk as a 1-component stream of its luma: the colour is gone."""

    name = "wrong-writes-luma-only"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        assert isinstance(parsed, JpegConfig)
        if (parsed.encoded_color_space == "ycbcr" and isinstance(chunk, np.ndarray) and chunk.ndim == 3 and chunk.dtype == np.uint8
                and chunk.shape[-1] == 3 and min(chunk.shape[:2]) >= 16 and max(chunk.shape[:2]) <= 65500):
            return self._encode_gray(np.ascontiguousarray(color.rgb_to_ycbcr(chunk)[..., 0]), parsed.quality)  # the fault under test
        return super().encode(parsed, chunk)


class RefusesOmittedSubsampling(ImagecodecsAdapter):
    """Refuses a grayscale or rgb configuration without ``subsampling``, as zarrs_jpeg 0.2.0 does (JPEG-SUB-05)."""

    name = "wrong-refuses-omitted-subsampling"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(cfg, Mapping) and cfg.get("encoded_color_space") in ("grayscale", "rgb") and "subsampling" not in cfg:
            raise ConfigError("JPEG-SUB-04", "missing field 'subsampling'")
        return super().parse(codec)


class _IgnoresRule(ImagecodecsAdapter):
    """Accepts the invalid configurations that one parse rule rejects, as if the rule were not there.

    ``rule`` says which of core's rejections to let through (with ``subsampling_given``, only
    where ``subsampling`` is a list); what is accepted is never used to encode (no suite
    encodes an invalid configuration).
    """

    rule = ""
    subsampling_given = False

    def _accepts(self, cfg: Mapping[str, Any]) -> bool:
        return not self.subsampling_given or isinstance(cfg.get("subsampling"), list)

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        try:
            return super().parse(codec)
        except ConfigError as exc:
            if exc.requirement == self.rule and isinstance(codec, Mapping) and isinstance(codec.get("configuration"), Mapping) \
                    and self._accepts(codec["configuration"]):
                return JpegConfig(90, "grayscale", "grayscale", ((1, 1),))  # the fault under test
            raise


class DefaultsQuality(_IgnoresRule):
    """Takes a configuration without ``quality`` as quality 90 (JPEG-Q-05: no default when parsing)."""

    name, rule = "wrong-defaults-quality", "JPEG-Q-05"


class AnyEncodedColorSpaceName(_IgnoresRule):
    """Accepts any spelling of ``encoded_color_space`` (JPEG-ECS-01)."""

    name, rule = "wrong-any-encoded-color-space", "JPEG-ECS-01"


class DefaultsEncodedColorSpace(_IgnoresRule):
    """Takes a configuration without ``encoded_color_space`` as grayscale (JPEG-ECS-07: required, no default)."""

    name, rule = "wrong-defaults-encoded-color-space", "JPEG-ECS-07"


class AnyColorCombination(_IgnoresRule):
    """Accepts any decoded x encoded combination, not only the spec's four (JPEG-DCS-04)."""

    name, rule = "wrong-any-color-combination", "JPEG-DCS-04"


class AnyFactors(_IgnoresRule):
    """Accepts sampling factors outside 1-4, of any shape (JPEG-SUB-01)."""

    name, rule, subsampling_given = "wrong-any-factors", "JPEG-SUB-01", True


class SubsampledChroma(_IgnoresRule):
    """Accepts chroma factors other than [1, 1] (JPEG-SUB-03)."""

    name, rule = "wrong-subsampled-chroma", "JPEG-SUB-03"


class AnyDefaultSubsampling(_IgnoresRule):
    """Accepts a grayscale or rgb ``subsampling`` that differs from its default (JPEG-SUB-07)."""

    name, rule, subsampling_given = "wrong-any-default-subsampling", "JPEG-SUB-07", True


class _EncodesAnyway(ImagecodecsAdapter):
    """Encodes chunks the spec rejects by first making them into ones it accepts (``_repair``)."""

    def _repair(self, parsed: JpegConfig, chunk: np.ndarray) -> np.ndarray | None:
        return None

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(parsed, JpegConfig) and isinstance(chunk, np.ndarray) and chunk.dtype == np.uint8:
            repaired = self._repair(parsed, chunk)
            if repaired is not None:
                return super().encode(parsed, repaired)  # the fault under test
        return super().encode(parsed, chunk)


class FillsComponents(_EncodesAnyway):
    """Makes a chunk's component count fit the configuration: gray repeated into three, colour averaged into one (JPEG-CFG-02)."""

    name = "wrong-fills-components"

    def _repair(self, parsed: JpegConfig, chunk: np.ndarray) -> np.ndarray | None:
        channels = chunk.shape[2] if chunk.ndim == 3 else 1
        if chunk.ndim not in (2, 3) or channels not in (1, 3) or min(chunk.shape[:2]) == 0 or channels == parsed.components:
            return None
        plane = chunk if chunk.ndim == 2 else chunk[..., 0] if channels == 1 else chunk.mean(axis=2).astype(np.uint8)
        return np.ascontiguousarray(np.repeat(plane[..., None], 3, axis=2) if parsed.components == 3 else plane)


class KeepsThreeChannels(_EncodesAnyway):
    """Encodes the first channels of a chunk with 2, 4 or more channels (JPEG-SHP-05)."""

    name = "wrong-keeps-three-channels"

    def _repair(self, parsed: JpegConfig, chunk: np.ndarray) -> np.ndarray | None:
        if chunk.ndim != 3 or chunk.shape[2] in (1, 3) or min(chunk.shape[:2]) == 0:
            return None
        wanted = parsed.components
        return np.ascontiguousarray(chunk[..., :1] if wanted == 1 or chunk.shape[2] < 3 else chunk[..., :3])


class CropsToTheLimit(_EncodesAnyway):
    """Crops a side over 65535 to 65500 and encodes the rest (JPEG-DIM-02)."""

    name = "wrong-crops-to-the-limit"

    def _repair(self, parsed: JpegConfig, chunk: np.ndarray) -> np.ndarray | None:
        if chunk.ndim < 2 or max(chunk.shape[:2]) <= 65535:
            return None
        return np.ascontiguousarray(chunk[:65500, :65500])


class RefusesChannelAxisOfOne(ImagecodecsAdapter):
    """Refuses an (H, W, 1) chunk, which the spec takes as grayscale (JPEG-SHP-03)."""

    name = "wrong-refuses-channel-axis-of-one"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.ndim == 3 and chunk.shape[2] == 1:
            raise ValueError("a chunk of shape (H, W, 1) is not supported")  # the fault under test
        return super().encode(parsed, chunk)


class SubsamplesRgb(ImagecodecsAdapter):
    """Writes rgb streams with the first component sampled 2x2 and the others 1x1: rgb is never subsampled (JPEG-SUB-09)."""

    name = "wrong-subsamples-rgb"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        from zarr_jpeg_conformance.core.chunk import check_chunk
        from zarr_jpeg_conformance.core.scans import quant_tables
        from zarr_jpeg_conformance.judging.own_tables import encode_with_tables

        if not isinstance(parsed, JpegConfig) or parsed.encoded_color_space != "rgb":
            return super().encode(parsed, chunk)
        image = check_chunk(parsed, chunk)
        luma, _ = quant_tables(parsed.quality)
        return encode_with_tables(parsed, image, [luma] * 3, ((2, 2), (1, 1), (1, 1)))


class DefaultsDecodedToYcbcr(ImagecodecsAdapter):
    """Takes an omitted decoded_color_space of a ycbcr configuration as ycbcr (passthrough), not rgb (JPEG-DCS-02)."""

    name = "wrong-defaults-decoded-to-ycbcr"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = super().parse(codec)
        if config.encoded_color_space == "ycbcr" and "decoded_color_space" not in codec.get("configuration", {}):
            return JpegConfig(config.quality, "ycbcr", "ycbcr", config.subsampling)
        return config
