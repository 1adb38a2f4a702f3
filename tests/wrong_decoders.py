"""Deliberately wrong decode-only adapters, each with one fault real decoders have.

tests/test_decode_suites_bite.py runs suites/test_decode_streams.py against each of them
and requires the fault to be caught, citing the requirement it breaks. They build on the
imagecodecs adapter (libjpeg-turbo, with the shared core's checks), so that everything
except the one fault is right.
"""

from __future__ import annotations

import time
from typing import Any

import imagecodecs
import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.markers import inspect


class _DecodeOnly(ImagecodecsAdapter):
    roles = frozenset({"decode"})


class IgnoresApp14(_DecodeOnly):
    """Applies the inverse YCbCr transform to every 3-component stream (jpeg-js, neuroglancer's jpgjs)."""

    name = "wrong-ignores-app14"

    def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
        if plan.components == 3:
            return imagecodecs.jpeg8_decode(data, colorspace="YCbCr", outcolorspace="RGB")
        return super()._decode_pixels(data, plan, mode)


class ReturnsTruncated(_DecodeOnly):
    """Returns what it could decode of a stream cut short, the rest grey (imagecodecs, PyTurboJPEG)."""

    name = "wrong-returns-truncated"
    _received = b""

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        # The checks see a complete stream; the library gets the stream as received.
        self._received = bytes(data)
        return super().decode(parsed, data if data.endswith(b"\xff\xd9") else data + b"\xff\xd9", chunk_shape)

    def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
        return super()._decode_pixels(self._received, plan, mode)


class Transposes(_DecodeOnly):
    """Hands back the decoded image with its axes swapped (a writer's (W, H) read as (H, W))."""

    name = "wrong-transposes"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        return np.ascontiguousarray(np.swapaxes(out, 0, 1)).reshape(chunk_shape)


class SizesFromHeader(_DecodeOnly):
    """Allocates the frame the header declares, decodes into it, then crops or pads it to the chunk."""

    name = "wrong-sizes-from-header"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.height is None or info.width is None or not info.components:
            raise ValueError("no frame header")
        frame_shape = (info.height, info.width, len(info.components))
        frame = np.zeros(frame_shape, np.uint8)  # trusted: 4.3 GB for a forged 65535x65535 header
        if frame.size <= 1 << 22:
            frame[...] = np.asarray(imagecodecs.jpeg8_decode(data)).reshape(frame_shape)
        out = np.zeros(chunk_shape, np.uint8).reshape(chunk_shape[0], chunk_shape[1], -1)
        h, w, c = (min(a, b) for a, b in zip(out.shape, frame_shape, strict=True))
        out[:h, :w, :c] = frame[:h, :w, :c]
        return out.reshape(chunk_shape)


class PrefillsHeaderFrame(_DecodeOnly):
    """Fills an output buffer for the frame the header declares (up to 100 MiB) before it checks the frame against the chunk.

    The memory is touched, as a decoder that clears its output or decodes into it touches it,
    so it shows in a harness process's resident set as well as to tracemalloc.
    """

    name = "wrong-prefills-header-frame"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.height and info.width and info.components:
            claimed = info.height * info.width * len(info.components)
            np.full(min(claimed, 100 << 20), 128, np.uint8)
        return super().decode(parsed, data, chunk_shape)


class AnyFactorization(_DecodeOnly):
    """Reshapes the raster to the chunk whenever the sample counts agree (neuroglancer precomputed).

    Legal: the decoding steps reshape the samples to the chunk shape (JPEG-DEC-03; JPEG-X-08 lets a decoder reject instead).
    """

    name = "wrong-any-factorization"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.height and info.width and info.height * info.width == chunk_shape[0] * chunk_shape[1]:
            stream_shape = (info.height, info.width, *chunk_shape[2:])
            return super().decode(parsed, data, stream_shape).reshape(chunk_shape)
        return super().decode(parsed, data, chunk_shape)


class RejectsBaselineVariants(_DecodeOnly):
    """Accepts only the simplest baseline layout: no restarts, one scan, no COM or extra APPn."""

    name = "wrong-rejects-baseline-variants"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.restart_interval or len(info.scans) > 1 or info.comments or set(info.app_segments) - {0xE0, 0xEE}:
            raise ValueError("only single-scan streams without restarts, COM or other APPn are supported")
        return super().decode(parsed, data, chunk_shape)


class RefusesEveryStream(_DecodeOnly):
    """Accepts every configuration when parsing and then refuses every stream it is given to decode (for the cross
    suite's meta-test, tests/test_store_and_cross_bite.py: a refusal fails only where decoding is required)."""

    name = "wrong-refuses-every-stream"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        raise ValueError("this decoder decodes no stream")


class HangsOnGarbage(_DecodeOnly):
    """Loops (here: sleeps) on input that does not start with SOI."""

    name = "wrong-hangs"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            time.sleep(30)
        return super().decode(parsed, data, chunk_shape)


class SpinsOnGarbage(_DecodeOnly):
    """Works for seconds (a busy loop holding the GIL now and then) on input that does not start with SOI."""

    name = "wrong-spins"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            end = time.process_time() + 3.0
            while time.process_time() < end:
                pass
        return super().decode(parsed, data, chunk_shape)


class CrashesOnGarbage(_DecodeOnly):
    """Raises IndexError, not a rejection, on input that does not start with SOI."""

    name = "wrong-crashes-on-garbage"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            raise IndexError("marker table lookup out of range")
        return super().decode(parsed, data, chunk_shape)


# ---------------------------------------------------------------- decoders on either side of the bands


def _case_of(data: bytes, parsed: object, chunk_shape: tuple[int, ...]) -> Any:
    """The stream case being decoded (the pinned decoders need its expected decodes).

    Several cases share a stream under other configurations, so the decoded colour space and
    the chunk shape tell them apart.
    """
    from zarr_jpeg_conformance.core.config import parse_codec
    from zarr_jpeg_conformance.corpus.streams import stream_cases

    decoded = getattr(parsed, "decoded_color_space", None)
    for case in stream_cases():
        if (case.has_expected and tuple(case.chunk_shape) == tuple(chunk_shape)
                and parse_codec(case.codec).decoded_color_space == decoded and case.data() == bytes(data)):
            return case
    return None


class _FromFaults(_DecodeOnly):
    """Decodes as a function of fixturegen.decoder_faults does; streams it cannot decode go to libjpeg-turbo."""

    fault = ""

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from zarr_jpeg_conformance.fixturegen import decoder_faults

        super().decode(parsed, data, chunk_shape)  # the core's checks, as any decoder here
        decode = {**decoder_faults.LEGAL, **decoder_faults.WRONG}[self.fault]
        try:
            return decode(bytes(data), parsed, tuple(chunk_shape))  # type: ignore[arg-type]
        except LookupError:
            return super().decode(parsed, data, chunk_shape)


class LimitedRange(_FromFaults):
    """Reads YCbCr as studio range (BT.601 16-235), a video decoder's habit."""

    name, fault = "wrong-limited-range", "limited_range"


class ShiftedChroma(_FromFaults):
    """Puts each chroma sample one sample too far right and down."""

    name, fault = "wrong-shifted-chroma", "shifted_chroma"


class WrongPhase(_FromFaults):
    """Upsamples with the triangle filter's neighbours on the wrong side."""

    name, fault = "wrong-upsampling-phase", "wrong_phase"


class EdgeRule(_FromFaults):
    """Gives the last row and column of an odd size the chroma sample before the one that covers them."""

    name, fault = "wrong-edge-rule", "edge_rule"


class FastIdct(_FromFaults):
    """Decodes with libjpeg-turbo's fast integer IDCT."""

    name, fault = "wrong-fast-idct", "fast_idct"


class Bt709(_FromFaults):
    """Converts YCbCr to RGB by the BT.709 matrix (a video decoder's)."""

    name, fault = "wrong-bt709", "bt709"


class WrapsAt256(_FromFaults):
    """Converts YCbCr to RGB modulo 256 instead of clamping."""

    name, fault = "wrong-wraps-at-256", "wraps"


class SwapsChroma(_FromFaults):
    """Reads Cb as Cr and Cr as Cb."""

    name, fault = "wrong-swaps-chroma", "swapped_chroma"


class PlusOne(_FromFaults):
    """Returns every sample one level too bright (a level shift of 127)."""

    name, fault = "wrong-plus-one", "plus_one"


class BicubicChroma(_FromFaults):
    """Legal: interpolates chroma by Catmull-Rom, sited as JFIF sites it (sharper than libjpeg's triangle filter)."""

    name, fault = "legal-bicubic-chroma", "bicubic"


class TruncatesConversion(_FromFaults):
    """Legal: repeats chroma and truncates the results of T.871's conversion instead of rounding them (jpeg-js)."""

    name, fault = "legal-truncates-conversion", "truncates"


class App14BeforeFrameOnly(_DecodeOnly):
    """Reads the APP14 marker only where it stands before the frame header: one after it is missed, RGB taken for YCbCr."""

    name = "wrong-app14-before-frame-only"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        data = bytes(data)
        frame = data.find(b"\xff\xc0")
        adobe = data.find(b"\xff\xee")
        if 0 < frame < adobe and data[adobe + 4:adobe + 9] == b"Adobe":
            import imagecodecs

            return np.asarray(imagecodecs.jpeg8_decode(data, colorspace="YCbCr", outcolorspace="RGB")).reshape(chunk_shape)
        return super().decode(parsed, data, chunk_shape)


class RepeatsChroma(_FromFaults):
    """Legal: repeats each chroma sample instead of interpolating (Go, the JavaScript decoders)."""

    name, fault = "legal-repeats-chroma", "repeat"


class FloatIdct(_FromFaults):
    """Legal: djpeg's floating-point IDCT."""

    name, fault = "legal-float-idct", "float_idct"


class _Pinned(_DecodeOnly):
    """Lands at a set distance from the exact reconstruction (or, for a stream whose coefficients cannot be read,
    outside the span of the expected decodes), to pin the bounds a decode is judged by.

    ``extra_max``: levels past the largest distance allowed (0: exactly at the bound, 1: just past it);
    ``extra_mean``: the same for the mean, in levels.
    """

    extra_max = 0
    extra_mean = 0.0

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from zarr_jpeg_conformance.judging.decoder_accuracy import BOUNDS, applies, exact_planes
        from zarr_jpeg_conformance.judging.t81.reading import reading

        found = reading(bytes(data))
        judged_exactly = applies(found.coefficients, parsed, found.stream.stored_color_space, int(np.prod(chunk_shape)))  # type: ignore[arg-type]
        if not judged_exactly:
            return self._by_span(parsed, data, chunk_shape)
        if found.coefficients is not None and len(found.coefficients.frame.components) == 3:
            # Colour decodes are pinned by no decoder here: the exact decode, legal by construction.
            from zarr_jpeg_conformance.judging.decoder_accuracy import exact_decode

            stored = str(found.stream.stored_color_space)
            return exact_decode(found.coefficients, stored, parsed.decoded_color_space, tuple(chunk_shape))  # type: ignore[attr-defined]
        if found.coefficients is not None and len(found.coefficients.frame.components) == 1:
            exact = exact_planes(found.coefficients)[0].ravel()
            flat = np.rint(exact)
            # The largest: one sample as far from the exact value as the bound allows, or one level further.
            room = np.flatnonzero(exact + BOUNDS.component + self.extra_max <= 255)
            if room.size == 0:
                return super().decode(parsed, data, chunk_shape)
            flat[room[0]] = np.floor(exact[room[0]] + BOUNDS.component) + self.extra_max
            # The mean: samples one level up (each within the largest) until the mean of (decoded - exact rounded)
            # reaches the bound (and past it by extra_mean).
            target = int(np.floor((BOUNDS.bias + self.extra_mean) * flat.size)) - int(flat[room[0]] - np.rint(exact[room[0]]))
            ones = [i for i in np.flatnonzero(np.rint(exact) + 1 <= 255) if i != room[0]][:max(target, 0)]
            flat[ones] = np.rint(exact[ones]) + 1
            return flat.astype(np.uint8).reshape(chunk_shape)
        return self._by_span(parsed, data, chunk_shape)

    def _by_span(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from zarr_jpeg_conformance.judging.decode_tolerances import FAMILIES

        case = _case_of(data, parsed, chunk_shape)
        if case is None:
            return super().decode(parsed, data, chunk_shape)
        refs = case.references()  # no decoding at all: placed by the expected decodes alone
        slack_max, slack_mean = FAMILIES[str(case.tolerance)].bounds(len(refs))
        hi = np.max(np.stack([r.astype(np.int16) for r in refs]), axis=0).ravel()
        flat = np.minimum(hi, 255).astype(np.int16).copy()  # on the span's upper edge: 0 outside
        room = np.flatnonzero(hi + slack_max + self.extra_max <= 255)
        if room.size == 0:
            return refs[0]
        flat[room[0]] = hi[room[0]] + slack_max + self.extra_max
        # The mean: more samples moved by one level, up to the bound (and past it by extra_mean).
        target = (slack_mean + self.extra_mean) * flat.size - (slack_max + self.extra_max)
        ones = room[1 : 1 + max(int(np.floor(target)), 0)]
        if self.extra_mean <= 0 and len(ones) and (slack_max + self.extra_max + len(ones)) / flat.size > slack_mean:
            ones = ones[:-1]
        flat[ones] = np.minimum(hi[ones] + 1, 255)
        return flat.astype(np.uint8).reshape(chunk_shape)


class AtTheBounds(_Pinned):
    """Legal by construction: exactly at each bound's largest and mean distance."""

    name = "legal-at-the-bounds"


class PastTheMax(_Pinned):
    """One sample one level past the largest distance allowed."""

    name, extra_max = "wrong-past-the-max", 1


class PastTheMean(_Pinned):
    """Every distance within the largest, the mean a little past the bound."""

    name, extra_mean = "wrong-past-the-mean", 0.02


class RgbOnlyUnderRgb(_DecodeOnly):
    """Accepts rgb configurations, but refuses rgb streams unless the configuration says rgb (breaks JPEG-DEC-01)."""

    name = "wrong-rgb-only-under-rgb"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if inspect(data).stored_color_space == "rgb" and getattr(parsed, "encoded_color_space", None) != "rgb":
            raise ValueError("an rgb stream under a configuration that is not rgb")
        return super().decode(parsed, data, chunk_shape)
