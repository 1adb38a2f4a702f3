"""The judge's reading of T.81 (judging/t81): every offence found on streams made to break one rule, none on the corpus.

libjpeg-turbo accepts every broken stream here; the reading is what says they are broken.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.streams import cases_of
from zarr_jpeg_conformance.judging.t81 import dct, entropy, syntax
from zarr_jpeg_conformance.judging.t81.reading import reading

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline_writer import Options, Writer

IMAGE = np.random.default_rng(3).integers(0, 256, (24, 40), np.uint8)


def _written(**options: object) -> bytes:
    """A grayscale stream with these options; for zero pad bits, of an image whose entropy-coded data has pad bits."""
    for seed in range(20):
        image = IMAGE if not seed else np.random.default_rng(seed).integers(0, 256, (24, 40), np.uint8)
        data = Writer(Options(**options)).write(image, "grayscale", "grayscale", [(1, 1)], 90)  # type: ignore[arg-type]
        if options.get("pad_bit", 1) or data != Writer(Options()).write(image, "grayscale", "grayscale", [(1, 1)], 90):
            return data
    raise AssertionError("no image of twenty has pad bits")


def _offences(data: bytes) -> list[syntax.Offence]:
    return reading(data).offences


def test_every_baseline_stream_of_the_corpus_reads_without_an_offence() -> None:
    for case in cases_of("reference") + cases_of("foreign"):
        found = reading(case.data())
        if found.stream.frame is not None and found.stream.frame.marker == 0xC0 and found.stream.frame.precision == 8:
            assert found.coefficients is not None and not found.offences, (case.id, [str(o) for o in found.offences])


def test_the_coefficients_decode_to_libjpeg_turbos_samples_within_its_idct() -> None:
    import imagecodecs

    for case in cases_of("reference"):
        found = reading(case.data())
        if found.coefficients is None or len(found.coefficients.frame.components) != 1:
            continue
        coefficients = found.coefficients
        samples = dct.from_blocks(dct.inverse(coefficients.dequantized(0))) + dct.LEVEL_SHIFT
        frame = coefficients.frame
        exact = np.clip(np.rint(samples[:frame.height, :frame.width]), 0, 255)
        decoded = np.asarray(imagecodecs.jpeg8_decode(case.data())).reshape(exact.shape)
        assert np.abs(exact - decoded).max() <= 1, case.id


@pytest.mark.parametrize(("options", "clause", "words"), [
    ({"pad_bit": 0}, "F.1.2.3", "pad bits are 1-bits"),
    ({"restart": 2, "rst_after_last": True}, "B.2.4.4", "a restart marker follows the last MCU"),
    ({"restart": 2, "restart_slip": 1}, "B.2.4.4", "restart marker(s) where"),
    ({"se": 64}, "B.2.3", "Se = 64"),
])
def test_a_stream_libjpeg_accepts_breaks_t81_and_says_where(options: dict[str, object], clause: str, words: str) -> None:
    import imagecodecs

    data = _written(**options)
    imagecodecs.jpeg8_decode(data)  # libjpeg-turbo takes it
    offences = _offences(data)
    assert any(clause in o.clause and words in o.text and o.requirement == syntax.FMT for o in offences), offences
    assert not _offences(_written(**{k: v for k, v in options.items() if k == "restart"}))


def test_a_third_huffman_table_is_not_baseline() -> None:
    data = Writer(Options(chroma_huffman_id=2)).write(np.zeros((16, 16, 3), np.uint8), "ycbcr", "rgb", [(2, 2), (1, 1), (1, 1)], 90)
    found = [o for o in _offences(data) if o.requirement == syntax.GEN]
    assert found and "tables 0 and 1" in found[0].text


def test_what_t81_allows_reads_clean() -> None:
    for options in ({"optimized": True}, {"tables_after_frame": True}, {"restart": 1}, {"restart": 7}, {"padding": "zero"}):
        assert not _offences(_written(**options)), options


def test_fill_bytes_before_a_marker_are_allowed_and_other_bytes_between_segments_are_not() -> None:
    data = _written()
    sos = data.index(b"\xff\xda")
    assert not _offences(data[:sos] + b"\xff\xff\xff" + data[sos:])
    offences = _offences(data[:sos] + b"\x00\x01" + data[sos:])
    assert offences and offences[0].clause == "B.1.1.2" and offences[0].offset == sos


def test_a_frame_a_scan_and_tables_out_of_place_are_each_named() -> None:
    data = _written()
    assert any("no EOI" in o.text for o in _offences(data[:-2]))
    assert any("after the EOI" in o.text for o in _offences(data + b"junk"))
    assert any("SOI" in o.text for o in _offences(b"junk" + data))
    assert any("DNL" in o.text for o in _offences(data[:-2] + b"\xff\xdc\x00\x04\x00\x18" + data[-2:]))


def test_bad_tables_are_named() -> None:
    assert syntax.code_problem(tuple([2] + [0] * 15)) is not None  # two 1-bit codes: the all-1 code is taken
    assert syntax.code_problem(tuple([1, 1] + [0] * 14)) is None
    data = bytearray(_written())
    dqt = data.index(b"\xff\xdb")
    data[dqt + 5 + 10] = 0  # a quantization value of 0
    assert any("value(s) 0" in o.text for o in _offences(bytes(data)))


def test_work_follows_what_is_stored() -> None:
    """A frame header claiming 65535x65535 over 800 bytes of data is not decoded block by block."""
    data = bytearray(_written())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = b"\xff\xff\xff\xff"
    with pytest.raises(entropy.Undecodable, match="cannot hold them"):
        entropy.decode(syntax.read(bytes(data)), bytes(data))


def test_garbage_never_raises() -> None:
    rng = np.random.default_rng(0)
    data = _written()
    for _ in range(200):
        cut = bytearray(data[: int(rng.integers(0, len(data)))])
        for i in rng.integers(0, max(len(cut), 1), 3):
            if cut:
                cut[int(i)] = int(rng.integers(0, 256))
        reading(bytes(cut))  # never raises


def test_the_dct_is_orthonormal_and_its_own_inverse() -> None:
    block = np.random.default_rng(1).normal(size=(4, 8, 8))
    assert np.allclose(dct.inverse(dct.forward(block)), block)
    assert np.allclose(dct.BASIS @ dct.BASIS.T, np.eye(8))
    assert dct.forward(np.ones((8, 8)))[0, 0] == pytest.approx(8.0)
