"""Large chunks are judged on windows (judging.windows): a legal codec passes across the windows' edges, a fault in
any window fails, and where it is is said in the whole image's samples."""

from __future__ import annotations

import numpy as np
import pytest
import turbojpeg

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.judging import decoder_accuracy as dec
from zarr_jpeg_conformance.judging import encoder_accuracy as enc
from zarr_jpeg_conformance.judging.t81.reading import reading
from zarr_jpeg_conformance.judging.windows import MARGIN_MCUS, WINDOW_MCUS, windows

TJ = turbojpeg.TurboJPEG()
CONFIG = parse_codec({"name": "jpeg", "configuration": {"quality": 75, "encoded_color_space": "ycbcr",
                                                        "subsampling": [[2, 2], [1, 1], [1, 1]]}})
#: 16 rows by 40 000 columns: 2 500 MCUs of 16x16, judged on three windows of 32.
IMAGE = make_image("natural", 16, 40000, channels=3)


@pytest.fixture(scope="module")
def stream() -> bytes:
    return bytes(TJ.encode(IMAGE, quality=75, pixel_format=turbojpeg.TJPF_RGB, jpeg_subsample=turbojpeg.TJSAMP_420))


def test_the_windows_are_the_start_the_middle_and_the_end_with_margins_inside_the_image() -> None:
    cuts = windows(16, 40000, (16, 16))
    assert cuts is not None and [(w.judged_start, w.judged_stop) for w in cuts] == [
        (0, WINDOW_MCUS * 16), ((2500 - WINDOW_MCUS) // 2 * 16, ((2500 - WINDOW_MCUS) // 2 + WINDOW_MCUS) * 16),
        ((2500 - WINDOW_MCUS) * 16, 40000)]
    assert cuts[0].start == 0 and cuts[2].stop == 40000, "no margin past the image's edges"
    assert cuts[1].start == cuts[1].judged_start - MARGIN_MCUS * 16
    assert windows(64, 96, (16, 16)) is None, "a small chunk is judged whole"
    # Up to 2^18 samples a chunk is judged whole, however long and thin; one MCU column more, on windows.
    assert windows(64, 4096, (16, 16)) is None and windows(64, 4096 + 16, (16, 16)) is not None


@pytest.mark.parametrize("fancy", [True, False], ids=["triangle-upsampling", "replicated-chroma"])
def test_a_legal_decode_passes_across_the_windows_edges(stream: bytes, fancy: bool) -> None:
    flags = 0 if fancy else turbojpeg.TJFLAG_FASTUPSAMPLE
    out = TJ.decode(stream, pixel_format=turbojpeg.TJPF_RGB, flags=flags)
    accuracy = dec.accuracy_of(out, stream, CONFIG)
    assert accuracy is not None and not dec.problems(accuracy, convert=True), dec.problems(accuracy, convert=True)


@pytest.mark.parametrize("columns", [slice(39990, 40000), slice(20000, 20010), slice(3, 13), slice(32 * 16 - 10, 32 * 16)],
                         ids=["end", "middle", "start", "last-mcu-of-the-first-window-of-32"])
def test_a_decode_wrong_in_any_window_fails_and_is_placed_in_the_whole_image(stream: bytes, columns: slice) -> None:
    out = np.array(TJ.decode(stream, pixel_format=turbojpeg.TJPF_RGB))
    out[:, columns] = 255 - out[:, columns]
    accuracy = dec.accuracy_of(out, stream, CONFIG)
    assert accuracy is not None and dec.problems(accuracy, convert=True)
    assert accuracy.wrong is not None and accuracy.wrong[:, columns].any() and accuracy.component_at is not None
    assert columns.start <= accuracy.component_at[2] < columns.stop


def test_a_legal_encoder_misses_no_block_of_any_window_and_a_wrong_block_is_placed(stream: bytes) -> None:
    coefficients = reading(stream).coefficients
    assert coefficients is not None
    samples = enc.samples_of(CONFIG, IMAGE)
    results = enc._judged(coefficients, CONFIG, IMAGE, samples)
    assert sum(r.misses for r in results) == 0 and 0 < sum(r.blocks for r in results) < 0.05 * 3 * 2500 * 4
    coefficients.quantized[0][1, 4999, 0, 0] += 6  # the DC of the last luma block of the second row: the end window
    results = enc._judged(coefficients, CONFIG, IMAGE, samples)
    assert results[0].misses == 1 and results[0].worst is not None and (results[0].worst.row, results[0].worst.col) == (1, 4999)


def test_an_upsampler_reaching_across_a_windows_edge_is_judged_with_what_it_saw() -> None:
    """Chroma that steps at every MCU's edge: libjpeg's triangle filter blends each edge sample with the next MCU's,
    which a window cut without its margin would not hold."""
    stripes = np.where((np.arange(40000) // 16 % 2)[None, :, None] == 0, [[[230, 30, 40]]], [[[20, 60, 220]]])
    image = np.ascontiguousarray(np.broadcast_to(stripes, (16, 40000, 3))).astype(np.uint8)
    data = bytes(TJ.encode(image, quality=95, pixel_format=turbojpeg.TJPF_RGB, jpeg_subsample=turbojpeg.TJSAMP_420))
    accuracy = dec.accuracy_of(TJ.decode(data, pixel_format=turbojpeg.TJPF_RGB), data, CONFIG)
    assert accuracy is not None and not dec.problems(accuracy, convert=True), dec.problems(accuracy, convert=True)


def test_the_bias_of_a_decode_judged_on_windows_is_the_bias_of_those_samples_judged_at_once(stream: bytes) -> None:
    """A decode shifted in its middle window only: the windows' biases join into the mean over every judged sample
    (each window weighted by the samples it judged, not by the margin it read), as one measure of them would say."""
    cuts = windows(16, 40000, (16, 16))
    assert cuts is not None
    out = np.array(TJ.decode(stream, pixel_format=turbojpeg.TJPF_RGB)).astype(int)
    out[:, cuts[1].judged_start:cuts[1].judged_stop] += 3
    out = np.clip(out, 0, 255).astype(np.uint8)
    joined = dec.accuracy_of(out, stream, CONFIG)
    judged = np.zeros((16, 40000), bool)
    for w in cuts:
        judged[:, w.judged_start:w.judged_stop] = True
    coefficients = reading(stream).coefficients
    assert joined is not None and coefficients is not None
    at_once = dec.measure(out, coefficients, "ycbcr", CONFIG.decoded_color_space, judged=judged)
    assert joined.bias == pytest.approx(at_once.bias, abs=1e-6) and 0.5 < joined.bias < 1.5, (joined.bias, at_once.bias)
