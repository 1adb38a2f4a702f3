"""Encoder and decoder accuracy (judging/encoder_accuracy.py, judging/decoder_accuracy.py), each bound from both sides.

For each bound: a legal variant on the right side of it, a wrong one on the other, both made here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.modes import MODE
from zarr_jpeg_conformance.judging import decoder_accuracy as dec
from zarr_jpeg_conformance.judging import encoder_accuracy as enc
from zarr_jpeg_conformance.judging.t81.reading import reading

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline_writer import Options, Writer


def _stream(mode: str, quality: int = 90, shape: tuple[int, int] = (40, 56), kind: str = "natural",
            **options: object) -> tuple[object, np.ndarray, bytes]:
    config = parse_codec(MODE[mode].codec(quality))
    image = make_image(kind, *shape, channels=MODE[mode].channels)
    chunk = image if config.components == 3 else image[:, :, 0]
    if mode == "rgb":
        options = {**options, "jfif": False, "adobe": 0}
    data = Writer(Options(**options)).write(chunk, config.encoded_color_space, config.decoded_color_space,  # type: ignore[arg-type]
                                             list(config.subsampling), quality)
    return config, chunk, data


def _misses(config: object, chunk: np.ndarray, data: bytes) -> tuple[int, int]:
    coefficients = reading(data).coefficients
    assert coefficients is not None
    results = enc.judge_coefficients(coefficients, enc.samples_of(config, chunk))  # type: ignore[arg-type]
    return sum(r.misses for r in results), sum(r.inaccurate for r in results)


# ------------------------------------------------------------------ encoders


@pytest.mark.parametrize("mode", ["gray", "ycbcr-444", "ycbcr-420", "ycbcr-422", "rgb", "passthrough-420"])
@pytest.mark.parametrize("options", [{}, {"padding": "zero"}, {"padding": "mirror"}, {"quantizer": "deadzone"},
                                     {"downsample": "point"}, {"downsample": "triangle"}, {"overshoot": 8}],
                         ids=["libjpeg-like", "zero-padding", "mirror-padding", "deadzone", "point-chroma", "triangle-chroma",
                              "deringing"])
def test_a_legal_encoder_misses_no_block(mode: str, options: dict[str, object]) -> None:
    assert _misses(*_stream(mode, shape=(37, 53), **options)) == (0, 0)


@pytest.mark.parametrize("mode", ["gray", "rgb", "ycbcr-420"])
@pytest.mark.parametrize("quality", [50, 90])
def test_deringing_saturated_samples_is_legal_under_coarse_tables(mode: str, quality: int) -> None:
    """mozjpeg raises the samples at 255 of a block by up to 31 (a decoder clamps them back); under q50's steps the
    stream's coefficients are explained by values past 255 only after those short of it are pinned at the end."""
    assert _misses(*_stream(mode, quality, (64, 96), "fluorescence", overshoot=31, overshoot_varies=True)) == (0, 0)


@pytest.mark.parametrize("mode", ["gray", "rgb"])
def test_raising_samples_below_the_end_is_not_deringing(mode: str) -> None:
    """The same raise given to every sample from 200 up changes what a decoder shows: no witness past 255 explains it."""
    assert _misses(*_stream(mode, 90, (64, 96), "fluorescence", overshoot=31, overshoot_from=200))[0] > 0


@pytest.mark.parametrize(("options", "mode", "cause"), [
    ({"level_shift": 127}, "gray", "level-shifted by 127"),
    ({"matrix": "bt709"}, "ycbcr-444", "BT.709"),
    ({"swap_chroma": True}, "ycbcr-420", "Cb and Cr"),
    ({"table_order": "natural"}, "gray", "natural (row-major) order"),
    ({"wrap": True}, "ycbcr-420", "modulo 256"),
])
def test_a_wrong_encoder_misses_blocks_and_its_cause_is_named(options: dict[str, object], mode: str, cause: str) -> None:
    config, chunk, data = _stream(mode, 95, (48, 64), "gamut" if options.get("wrap") else "natural", **options)
    coefficients = reading(data).coefficients
    assert coefficients is not None
    samples = enc.samples_of(config, chunk)  # type: ignore[arg-type]
    results = enc.judge_coefficients(coefficients, samples)
    assert sum(r.misses for r in results) > 0
    found = enc.explain(config, chunk, samples, coefficients, results)  # type: ignore[arg-type]
    assert found is not None and cause in found.words, found


def test_the_dct_arithmetic_bound_holds_the_dc_exactly() -> None:
    """16 coefficient units of AC arithmetic pass the MUST tier and fail T.83's; none is allowed on the DC."""
    config, chunk, data = _stream("gray", 100)
    coefficients = reading(data).coefficients
    assert coefficients is not None
    ac = coefficients.quantized[0].copy()
    ac[0, 0, 0, 1] += 10  # Q = 1 at quality 100: ten steps, ten units
    coefficients.quantized[0] = ac
    (result,) = enc.judge_coefficients(coefficients, enc.samples_of(config, chunk))  # type: ignore[arg-type]
    assert result.misses == 0 and result.inaccurate == 1
    ac[0, 0, 0, 0] += 3
    (result,) = enc.judge_coefficients(coefficients, enc.samples_of(config, chunk))  # type: ignore[arg-type]
    assert result.misses == 1


# ------------------------------------------------------------------ decoders


def _decoded(mode: str, how: str = "repeat") -> tuple[object, bytes, np.ndarray]:
    config, _chunk, data = _stream(mode, 75)
    coefficients = reading(data).coefficients
    assert coefficients is not None
    stored = str(reading(data).stream.stored_color_space)
    out = dec.exact_decode(coefficients, stored, config.decoded_color_space, _chunk.shape, how)  # type: ignore[attr-defined]
    return config, data, out


@pytest.mark.parametrize("mode", ["gray", "ycbcr-444", "ycbcr-420", "ycbcr-422", "ycbcr-440", "rgb", "passthrough-420"])
@pytest.mark.parametrize("how", ["repeat", "triangle"])
def test_an_exact_decode_with_any_upsampler_is_legal(mode: str, how: str) -> None:
    config, data, out = _decoded(mode, how)
    accuracy = dec.accuracy_of(out, data, config)  # type: ignore[arg-type]
    assert accuracy is not None and not dec.problems(accuracy, MODE[mode].encoded == "ycbcr" and MODE[mode].decoded == "rgb")


@pytest.mark.parametrize(("change", "words"), [
    (lambda out: np.clip(out.astype(np.int16) + 1, 0, 255).astype(np.uint8), "on average"),
    (lambda out: np.clip(out.astype(np.int16) + np.where(np.arange(out.size).reshape(out.shape) % 97 == 0, 3, 0), 0,
                         255).astype(np.uint8), "T.83's decoder accuracy"),
    (lambda out: np.ascontiguousarray(out[..., ::-1]), "outside every value"),
])
def test_a_wrong_decode_breaks_an_invariant_named_in_words(change: object, words: str) -> None:
    config, data, out = _decoded("ycbcr-444")
    accuracy = dec.accuracy_of(change(out), data, config)  # type: ignore[arg-type, operator]
    assert accuracy is not None
    assert any(words in p for p in dec.problems(accuracy, True)), dec.problems(accuracy, True)


def test_chroma_moved_by_a_sample_is_not_where_the_stream_stores_it() -> None:
    config, data, out = _decoded("ycbcr-420", "triangle")
    moved = out.copy()
    moved[:, 2:] = out[:, :-2]  # one chroma sample to the right, luma with it
    accuracy = dec.accuracy_of(moved, data, config)  # type: ignore[arg-type]
    assert accuracy is not None and dec.problems(accuracy, True)


def test_a_decode_that_does_not_fill_the_frame_is_not_measured() -> None:
    config, data, out = _decoded("gray")
    assert dec.accuracy_of(out[:-1], data, config) is None  # type: ignore[arg-type]
