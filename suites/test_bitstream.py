"""Bitstream: what the encoder writes, read from the markers rather than trusted to a decoder.

Every stream written anywhere in the suites is checked for the MUSTs every stream meets
(``judging.written``); this suite adds the range of qualities (quality 1 is where libjpeg
needs 16-bit tables unless forced to baseline, backends.md 11.6), the SHOULDs on the JFIF
marker, and every optional factor set an implementation accepts when parsing: once
accepted, exactly those factors must be written (JPEG-X-04).
"""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.modes import MODES
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import Calls, case_params, level_mark
from zarr_jpeg_conformance.judging.read_back import check_samples
from zarr_jpeg_conformance.judging.written import check_jfif, check_written

pytestmark = pytest.mark.roles("encode")

QUALITIES = [1, 50, 90, 100]
#: Not square, not MCU-aligned: a swapped (H, W) or a padded size shows in the SOF.
HEIGHT, WIDTH = 40, 72


def _params() -> list[object]:
    return [
        pytest.param(m, q, id=f"{m.id}-q{q}", marks=level_mark(m.level))
        for m in MODES
        for q in QUALITIES
    ]


@pytest.mark.parametrize(("mode", "quality"), _params())
def test_stream_structure(impl, mode, quality, judge) -> None:
    """SOF0, 8-bit samples and tables, (H, W), component count, factors, colour markers."""
    for r in mode.requirements:
        judge.cite(r)
    chunk = make_image("natural", HEIGHT, WIDTH, channels=mode.channels)
    if mode.channels == 1:
        chunk = chunk[:, :, 0]
    calls = Calls(judge, impl, mode.codec(quality), chunk.shape)
    what = f"encode at quality {quality}"
    data = calls.write(chunk, what)
    judge.metrics.update(bytes=len(data), quality=quality)
    with judge.explaining(lambda: calls.written_cause(data, chunk)):
        info = check_written(judge, data, calls.config, chunk.shape, what)
        check_jfif(judge, info, calls.config)
        check_samples(judge, data, calls.config, chunk, what,
                      defaults=lambda: roots.written_with_defaults(impl, calls.codec, chunk))


#: Every optional factor set of the configuration corpus, including factor 3 and the sets
#: whose MCU exceeds T.81's 10 blocks (written as non-interleaved scans).
OPTIONAL_FACTORS = [c for c in config_cases() if c.valid and "JPEG-X-04" in c.requirements]


@pytest.mark.parametrize("case", case_params(OPTIONAL_FACTORS))
def test_optional_factors_written_exactly(impl, case, judge) -> None:
    """An optional factor set accepted at parse is written exactly, as a baseline stream, at an unaligned size."""
    judge.cite("JPEG-X-04")
    # 41x75 is a multiple of no MCU size of these sets (8, 16, 24, 32): partial MCUs at both edges.
    chunk = make_image("natural", HEIGHT + 1, WIDTH + 3, channels=3)
    calls = Calls(judge, impl, case.codec, chunk.shape)
    data = calls.encode(chunk)
    judge.metrics.update(bytes=len(data))
