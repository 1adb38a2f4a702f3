"""core.limits and the pre-decode checks built on it: the entropy floor, the scan rules, the limits.

Each bound has a legal stream at its edge that passes and a stream one step beyond that
fails; the legal edges are streams real encoders write (a flat image with optimized tables
sits exactly on the entropy floor; libjpeg's default progression; one scan per coefficient).
"""

from __future__ import annotations

import dataclasses
import io
import random
from pathlib import Path
from typing import Any

import imagecodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from zarr_jpeg_conformance.core import limits
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.errors import StreamError
from zarr_jpeg_conformance.core.markers import Component, StreamInfo, inspect, inspect_headers, inspect_rest
from zarr_jpeg_conformance.core.stream import plan_decode
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.streams import stream_cases
from zarr_jpeg_conformance.fixturegen.flat import (
    progressive_flat,
    progressive_repeats,
    sequential_flat,
    sequential_repeats,
)
from zarr_jpeg_conformance.tools.fuzz import mutate

ROOT = Path(__file__).resolve().parents[1]
GRAY = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})
C420 = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}})
C444 = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}})
CORPUS = sorted((ROOT / "fixtures" / "streams").rglob("*.jpg"))


def _rejects(config: Any, data: bytes, shape: tuple[int, ...], requirement: str) -> StreamError:
    with pytest.raises(StreamError) as exc:
        plan_decode(config, data, shape)
    assert exc.value.requirement == requirement, str(exc.value)
    return exc.value


def _entropy(data: bytes) -> int:
    info = inspect(data)
    assert info.entropy_start is not None
    return len(data) - info.entropy_start - 2


# ----------------------------------------------------------------------------- the entropy floor


def test_blocks_follow_t81_a11() -> None:
    # 4:2:0 at 37x53: luma 53x37 samples = 7x5 blocks; chroma ceil(53/2) x ceil(37/2) = 27x19 = 4x3 blocks.
    comps = (Component(1, 2, 2, 0), Component(2, 1, 1, 1), Component(3, 1, 1, 1))
    assert limits.blocks(37, 53, comps) == (35, 12, 12)
    assert limits.blocks(8, 8, (Component(1, 1, 1, 0),)) == (1,)


@pytest.mark.parametrize(
    ("shape", "subsampling", "config"),
    [((64, 64), None, GRAY), ((48, 80, 3), "420", C420), ((40, 24, 3), "444", C444)],
    ids=["gray", "420", "444"],
)
def test_a_flat_image_with_optimized_tables_sits_exactly_on_the_floor(shape: tuple[int, ...], subsampling: str | None, config: Any) -> None:
    """libjpeg codes a flat block in 2 bits with optimized tables: the floor is tight, and still met."""
    kwargs = {"subsampling": subsampling} if subsampling else {}
    data = bytes(imagecodecs.jpeg8_encode(np.full(shape, 128, np.uint8), level=90, optimize=True, **kwargs))
    info = inspect(data)
    assert _entropy(data) == limits.entropy_floor(info.sof or 0, shape[0], shape[1], info.components)
    plan_decode(config, data, shape)
    # One entropy-coded byte fewer is a stream no encoder can write for this frame.
    _rejects(config, data[:-3] + data[-2:], shape, "JPEG-X-07")


def test_a_forged_frame_over_a_small_stream_is_truncated() -> None:
    small = bytes(imagecodecs.jpeg8_encode(make_image("natural", 16, 16, 3, 0), level=90, subsampling="420"))
    sof = small.index(b"\xff\xc0")
    forged = small[: sof + 5] + (16000).to_bytes(2, "big") * 2 + small[sof + 9 :]
    error = _rejects(C420, forged, (16000, 16000, 3), "JPEG-X-07")
    assert "6000000 blocks" in str(error) and "1500000 bytes" in str(error) and "JPEG-X-13" in str(error)
    plan_decode(C420, small, (16, 16, 3))  # the same stream under its own frame


def test_arithmetic_coding_has_no_floor() -> None:
    comps = (Component(1, 1, 1, 0),)
    assert limits.entropy_floor(0xC9, 4096, 4096, comps) == limits.entropy_floor(0xCA, 4096, 4096, comps) == 0
    assert limits.entropy_floor(0xC2, 4096, 4096, comps) == 4096 * 4096 // 64 // 8
    assert limits.entropy_floor(0xC0, 4096, 4096, comps) == 4096 * 4096 // 64 * 2 // 8


# ----------------------------------------------------------------------------- the scan rules (JPEG-X-14)


def _with_scans(sof: int, scans: list[tuple[tuple[int, ...], tuple[int, int, int, int]]], components: int = 3) -> StreamInfo:
    base = inspect(sequential_flat(16, 16, [1, 2, 3]))
    return dataclasses.replace(
        base, sof=sof, components=base.components[:components],
        scans=tuple(ids for ids, _ in scans), scan_parameters=tuple(p for _, p in scans),
    )  # fmt: skip


DC, DC_SA, DC_REFINE = (0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0)
LEGAL_PROGRESSIONS = {
    # libjpeg's default script for YCbCr (jcparam.c jpeg_simple_progression), as Pillow writes it
    "libjpeg-default": [((1, 2, 3), DC_SA), ((1,), (1, 5, 0, 2)), ((3,), (1, 63, 0, 1)), ((2,), (1, 63, 0, 1)),
                        ((1,), (6, 63, 0, 2)), ((1,), (1, 63, 2, 1)), ((1, 2, 3), DC_REFINE), ((3,), (1, 63, 1, 0)),
                        ((2,), (1, 63, 1, 0)), ((1,), (1, 63, 1, 0))],
    "one-scan-per-coefficient": [((1, 2, 3), DC)] + [((c,), (k, k, 0, 0)) for c in (1, 2, 3) for k in range(1, 64)],
    "dc-only": [((1,), DC), ((2, 3), DC)],
    "thirteen-refinements": [((1, 2, 3), (0, 0, 0, 13))] + [((1, 2, 3), (0, 0, a + 1, a)) for a in range(12, -1, -1)],
    # Bands in any order: a lower band sent between the first pass of a higher one and its refinement.
    "refinement-after-a-lower-band": [((1, 2, 3), DC), ((1,), (6, 10, 0, 1)), ((1,), (1, 5, 0, 0)), ((1,), (6, 10, 1, 0))],
}  # fmt: skip
ILLEGAL_PROGRESSIONS = {
    "ac-before-dc": ([((1,), (1, 63, 0, 0)), ((1, 2, 3), DC)], "before its first DC scan"),
    "repeated-ac-first-scan": ([((1, 2, 3), DC), ((1,), (1, 63, 0, 0)), ((1,), (1, 63, 0, 0))], "that an earlier scan sent"),
    "overlapping-bands": ([((1, 2, 3), DC), ((1,), (1, 10, 0, 0)), ((1,), (10, 20, 0, 0))], "that an earlier scan sent"),
    "repeated-dc-first-scan": ([((1, 2, 3), DC), ((1,), DC)], "that an earlier scan sent"),
    "refinement-of-unsent": ([((1, 2, 3), DC), ((1,), (1, 63, 1, 0))], "not known down to bit 1"),
    "refinement-repeated": ([((1, 2, 3), DC_SA), ((1, 2, 3), DC_REFINE), ((1, 2, 3), DC_REFINE)], "not known down to bit 1"),
    "refinement-by-two-bits": ([((1, 2, 3), (0, 0, 0, 2)), ((1, 2, 3), (0, 0, 2, 0))], "Al = Ah - 1"),
    "dc-and-ac-together": ([((1, 2, 3), (0, 5, 0, 0))], "invalid spectral band"),
    "band-past-63": ([((1, 2, 3), DC), ((1,), (1, 64, 0, 0))], "invalid spectral band"),
    "interleaved-ac": ([((1, 2, 3), DC), ((1, 2), (1, 63, 0, 0))], "interleaves AC"),
    "al-past-13": ([((1, 2, 3), (0, 0, 0, 14))], "Al = Ah - 1"),
}  # fmt: skip


@pytest.mark.parametrize("name", LEGAL_PROGRESSIONS)
def test_legal_progressions_pass(name: str) -> None:
    assert limits.scan_problem(_with_scans(0xC2, LEGAL_PROGRESSIONS[name])) is None
    assert limits.scan_problem(_with_scans(0xCA, LEGAL_PROGRESSIONS[name])) is None  # arithmetic, same rules


@pytest.mark.parametrize("name", ILLEGAL_PROGRESSIONS)
def test_illegal_progressions_fail(name: str) -> None:
    scans, words = ILLEGAL_PROGRESSIONS[name]
    problem = limits.scan_problem(_with_scans(0xC2, scans))
    assert problem is not None and words in problem


def test_sequential_frames_code_each_component_once() -> None:
    for scans in ([(1, 2, 3)], [(1,), (2,), (3,)], [(1,), (2, 3)], [(3,), (1,), (2,)]):
        assert limits.scan_problem(_with_scans(0xC0, [(s, (0, 63, 0, 0)) for s in scans])) is None
    # Some baseline files write zeros for Ss, Se, Ah, Al; libjpeg only warns, and so it passes here.
    assert limits.scan_problem(_with_scans(0xC0, [((1, 2, 3), (0, 0, 0, 0))])) is None
    problem = limits.scan_problem(_with_scans(0xC1, [((1,), DC), ((2,), DC), ((3,), DC), ((1,), DC)]))
    assert problem is not None and "coded in scans 1 and 4" in problem


def test_libjpegs_own_progressions_pass_the_checks() -> None:
    """Pillow's progressive streams (libjpeg's default script), colour and grayscale, decode plans."""
    image = make_image("natural", 48, 80, 3, 0)
    for mode, config, shape in (("RGB", C420, (48, 80, 3)), ("L", GRAY, (48, 80))):
        buf = io.BytesIO()
        Image.fromarray(image if mode == "RGB" else image[:, :, 0]).save(buf, "JPEG", quality=90, progressive=True)
        plan = plan_decode(config, buf.getvalue(), shape)
        assert plan.info.sof == 0xC2 and len(plan.info.scans) == (10 if mode == "RGB" else 6)


def test_repeated_scans_are_rejected_before_decoding() -> None:
    error = _rejects(GRAY, progressive_repeats(64, 64, 3), (64, 64), "JPEG-X-14")
    assert "scan 3" in str(error)
    _rejects(C444, sequential_repeats(64, 64, 1), (64, 64, 3), "JPEG-X-14")
    plan_decode(GRAY, progressive_repeats(64, 64, 0), (64, 64))  # the same stream without the repeats
    plan_decode(C444, sequential_repeats(64, 64, 0), (64, 64, 3))


def test_an_arithmetic_progressive_frame_is_walked_like_a_huffman_one() -> None:
    """SOF10's first scan may hold every component, like a sequential frame's, yet more scans follow it."""
    huffman = progressive_repeats(64, 64, 3)
    assert huffman.count(b"\xff\xc2") == 1
    arithmetic = huffman.replace(b"\xff\xc2", b"\xff\xca")
    assert inspect(arithmetic).sof == 0xCA and inspect(arithmetic).scans[0] == (1,)
    assert "scan 3" in str(_rejects(GRAY, arithmetic, (64, 64), "JPEG-X-14"))


# ----------------------------------------------------------------------------- the limits (JPEG-X-15)


def test_a_component_may_take_part_in_64_scans_not_65() -> None:
    bands = [(k, k) for k in range(1, 64)]  # with the DC scan: 64 scans, one per coefficient
    plan_decode(GRAY, progressive_flat(64, 64, bands), (64, 64))
    info = _with_scans(0xC2, [((1,), DC)] + [((1,), (k, k, 0, 0)) for k in range(1, 64)], components=1)
    assert limits.limit_problem(info) is None
    refined = dataclasses.replace(info, scans=(*info.scans, (1,)), scan_parameters=(*info.scan_parameters, (5, 5, 0, 0)))
    assert limits.scan_problem(refined) is not None  # a 65th scan that brings nothing new breaks the rules too
    legal_65 = _with_scans(0xC2, [((1,), DC_SA), ((1,), DC_REFINE)] + [((1,), (k, k, 0, 0)) for k in range(1, 64)], components=1)
    assert limits.scan_problem(legal_65) is None
    problem = limits.limit_problem(legal_65)
    assert problem is not None and "65 scans" in problem


def _with_comments(data: bytes, count: int) -> bytes:
    return data[:2] + b"\xff\xfe\x00\x02" * count + data[2:]


def test_a_stream_may_have_max_markers_not_one_more() -> None:
    data = bytes(imagecodecs.jpeg8_encode(make_image("natural", 48, 80, 3, 0), level=90, subsampling="420"))
    room = limits.MAX_MARKERS - inspect(data).markers
    assert inspect(_with_comments(data, room)).markers == limits.MAX_MARKERS
    plan_decode(C420, _with_comments(data, room), (48, 80, 3))
    _rejects(C420, _with_comments(data, room + 1), (48, 80, 3), "JPEG-X-15")
    # Markers between scans count too: the third scan of a planar stream, after 1024 COM segments.
    planar = sequential_flat(16, 16, [1, 2, 3])
    cut = planar.rindex(b"\xff\xda")
    _rejects(C444, planar[:cut] + b"\xff\xfe\x00\x02" * limits.MAX_MARKERS + planar[cut:], (16, 16, 3), "JPEG-X-15")


def test_max_markers_stops_the_walk() -> None:
    data = _with_comments(sequential_flat(16, 16, [1, 2, 3]), 100_000)
    info = inspect(data, max_markers=10)
    assert info.markers == 11 and any("more than 10 markers" in p for p in info.problems)
    assert inspect(data).markers == 100_000 + 7  # the comments, DQT, SOF, 2 DHT, 3 SOS


# ----------------------------------------------------------------------------- the walk after the headers


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_inspect_rest_completes_the_header_walk(path: Path) -> None:
    data = path.read_bytes()
    assert inspect_rest(data, inspect_headers(data)) == inspect(data)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(which=st.integers(0, len(CORPUS) - 1), seed=st.integers(0, 2**32 - 1))
def test_inspect_rest_completes_the_header_walk_of_mutated_streams(which: int, seed: int) -> None:
    data = mutate(CORPUS[which].read_bytes(), random.Random(seed))
    assert inspect_rest(data, inspect(data, entropy=False)) == inspect(data)


# ----------------------------------------------------------------------------- the corpus


def test_every_stream_the_corpus_decodes_passes_the_checks() -> None:
    """No legal stream trips a bound: restart intervals, progressive, non-interleaved, APPn/COM, arithmetic."""
    checked = 0
    for case in stream_cases():
        if case.expect == "reject":
            continue
        try:
            plan_decode(parse_codec(case.codec), case.data(), case.chunk_shape)
        except StreamError as exc:
            assert exc.requirement not in ("JPEG-X-07", "JPEG-X-14") and (exc.requirement != "JPEG-X-15" or "many-markers" in case.id), (
                f"{case.id}: {exc}"
            )
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("case_id", "requirement"),
    [("stream.malformed.forged-small", "JPEG-X-07"), ("stream.malformed.progressive-repeated-scans", "JPEG-X-14"),
     ("stream.malformed.sequential-repeated-scans", "JPEG-X-14"), ("stream.malformed.many-markers", "JPEG-X-15")],
)  # fmt: skip
def test_the_corpus_cases_are_rejected_for_their_reason(case_id: str, requirement: str) -> None:
    case = next(c for c in stream_cases() if c.id == case_id)
    _rejects(parse_codec(case.codec), case.data(), case.chunk_shape, requirement)
    assert requirement == case.requirements[0]


def test_a_limit_of_jpeg_x_15_is_cited_when_a_plan_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the marker count: a component in more scans than the limit is refused citing JPEG-X-15
    (with the limit lowered to 4, five legal progressive scans are one too many)."""
    monkeypatch.setattr(limits, "MAX_SCANS_PER_COMPONENT", 4)
    data = progressive_flat(64, 64, [(1, 1), (2, 2), (3, 3), (4, 63)])
    error = _rejects(GRAY, data, (64, 64), "JPEG-X-15")
    assert "takes part in 5 scans, more than 4" in str(error)


@pytest.mark.parametrize("sof", [0xC0, 0xC1, 0xC9])
def test_every_8_bit_sequential_dct_process_is_planned_and_no_other(sof: int) -> None:
    """The header says what a decoder may read (JPEG-X-09): baseline, extended and arithmetic
    sequential frames of one scan are planned (progressive ones: test_libjpegs_own_progressions...);
    lossless (SOF3) and hierarchical (SOF5) frames are refused."""
    image = make_image("natural", 48, 80, 1, 0)[:, :, 0]
    data = bytes(imagecodecs.jpeg8_encode(image, level=90))
    at = data.index(b"\xff\xc0")
    assert plan_decode(GRAY, data[: at + 1] + bytes([sof]) + data[at + 2 :], (48, 80)).info.sof == sof
    for other in (0xC3, 0xC5):
        _rejects(GRAY, data[: at + 1] + bytes([other]) + data[at + 2 :], (48, 80), "JPEG-X-09")
