"""Each party by what it produced: a stream read back against its own tables, a decode against its stream's expected decodes."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.scans import quant_tables
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.decode_tolerances import check_decode
from zarr_jpeg_conformance.judging.legal_decoders import libjpeg_turbo_decode
from zarr_jpeg_conformance.judging.own_tables import encode_with_tables, own_tables
from zarr_jpeg_conformance.judging.read_back import check_read_back, kept_requirement
from zarr_jpeg_conformance.judging.tolerances import OWN_TABLES_MARGIN_DB
from zarr_jpeg_conformance.judging.verdict import Judge, Outcome

pytest.importorskip("imagecodecs")
pytest.importorskip("PIL")


def _config(mode: str, quality: int = 90) -> JpegConfig:
    return parse_codec(MODE[mode].codec(quality))


def _judge() -> Judge:
    return Judge("impl", "case", [], "MUST", roots={})


def _written(config: JpegConfig, chunk: np.ndarray, quality: int | None = None) -> bytes:
    """A right stream of ``chunk`` with libjpeg's tables of ``quality`` (the configuration's by default)."""
    luma, chroma = quant_tables(quality or config.quality)
    tables = [luma] if config.components == 1 else [luma, chroma, chroma]
    return encode_with_tables(config, chunk, tables)


def _verdict(check: Any) -> tuple[Outcome, str | None, str]:
    judge = _judge()
    with contextlib.suppress(pytest.fail.Exception):  # a failed check ends its test; the verdict is what it left
        check(judge)
    return judge.outcome, judge.finding, "\n".join(judge.messages)


def test_own_tables_are_read_per_component() -> None:
    config = _config("ycbcr-420")
    chunk = make_image("natural", 40, 56, channels=3)
    luma, chroma = quant_tables(37)
    tables, factors = own_tables(encode_with_tables(config, chunk, [luma, chroma, luma]))
    assert factors == ((2, 2), (1, 1), (1, 1))
    assert [t.tolist() for t in tables] == [luma.tolist(), chroma.tolist(), luma.tolist()]


@pytest.mark.parametrize("mode", ["gray", "ycbcr-444", "ycbcr-420", "ycbcr-440", "rgb", "passthrough-420", "ycbcr-411"])
@pytest.mark.parametrize("quality", [5, 90])
def test_a_right_stream_passes_whatever_its_tables(mode: str, quality: int) -> None:
    """Tables of quality 5 for quality 90 are the encoder's choice (JPEG-Q-03): they lose what they lose on both sides."""
    config = _config(mode)
    chunk = make_image("natural", 40, 56, channels=MODE[mode].channels)
    data = _written(config, chunk, quality)
    outcome, _, messages = _verdict(lambda j: check_read_back(j, data, config, chunk))
    assert outcome is Outcome.PASS, messages


@pytest.mark.parametrize("mode", ["ycbcr-420", "ycbcr-422", "ycbcr-411", "passthrough-420"])
def test_chroma_kept_as_one_sample_per_block_is_legal(mode: str) -> None:
    """T.81 leaves chroma downsampling to the encoder: the first sample of each block (the jpeg-encoder crate) as
    well as the block's mean. On chroma-rich "gradient" the two differ by far more than the margin."""
    config = _config(mode)
    chunk = make_image("gradient", 64, 96, channels=3)
    luma, chroma = quant_tables(90)
    data = encode_with_tables(config, chunk, [luma, chroma, chroma], point=True)
    mean = encode_with_tables(config, chunk, [luma, chroma, chroma])
    lost = [psnr(chunk, libjpeg_turbo_decode(d, config, chunk.shape)) for d in (data, mean)]
    assert lost[1] - lost[0] > OWN_TABLES_MARGIN_DB  # the case this test is about
    outcome, _, messages = _verdict(lambda j: check_read_back(j, data, config, chunk))
    assert outcome is Outcome.PASS, messages


@pytest.mark.parametrize(("mode", "fault", "requirement"), [
    ("ycbcr-420", lambda c: c[..., ::-1], "JPEG-ENC-03"),
    ("rgb", lambda c: c[..., ::-1], "JPEG-ENC-03"),
    ("ycbcr-444", color.ycbcr_to_rgb, "JPEG-ECS-04"),  # the RGB stored unconverted
    ("rgb", color.rgb_to_ycbcr, "JPEG-ECS-05"),  # converted, labelled rgb
    ("passthrough-444", color.rgb_to_ycbcr, "JPEG-DCS-03"),  # the YCbCr input converted as if RGB
    ("gray", lambda c: np.ascontiguousarray(c.swapaxes(0, 1)), "JPEG-DIM-01"),  # a square chunk transposed
])
def test_a_wrong_stream_is_charged_to_its_encoder_under_the_fault(mode: str, fault: Any, requirement: str) -> None:
    config = _config(mode)
    chunk = make_image("natural", 48, 48, channels=MODE[mode].channels)
    data = _written(config, np.ascontiguousarray(fault(chunk)))
    outcome, finding, messages = _verdict(lambda j: check_read_back(j, data, config, chunk))
    assert (outcome, finding) == (Outcome.FAIL, requirement), messages


def test_a_chunk_read_in_memory_order_is_charged_to_c_order() -> None:
    config = _config("gray")
    chunk = np.asfortranarray(make_image("natural", 40, 56, channels=1)[:, :, 0])
    data = _written(config, np.ravel(chunk, order="K").reshape(chunk.shape))
    outcome, finding, messages = _verdict(lambda j: check_read_back(j, data, config, chunk))
    assert (outcome, finding) == (Outcome.FAIL, "JPEG-ENC-02"), messages


def test_an_undiagnosed_loss_cites_what_the_configuration_keeps() -> None:
    config = _config("ycbcr-444")
    chunk = make_image("natural", 40, 56, channels=3)
    data = _written(config, np.ascontiguousarray(np.roll(chunk, 7, axis=1)))
    outcome, finding, messages = _verdict(lambda j: check_read_back(j, data, config, chunk))
    assert (outcome, finding) == (Outcome.FAIL, kept_requirement(config)) and "cannot tell" not in messages
    assert "no classic fault explains" in messages


def test_a_chunk_the_reference_cannot_write_is_said_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sides of 65501-65535 (JPEG-X-03): libjpeg under the reference encoder cannot write them; the record says so."""
    from zarr_jpeg_conformance.judging import read_back

    def cannot(config: JpegConfig, chunk: np.ndarray, data: bytes, *, point: bool = False) -> bytes:
        raise LookupError("the reference encoder cannot write a 8x65501 chunk")

    monkeypatch.setattr(read_back, "rewritten", cannot)
    config = _config("gray")
    chunk = make_image("natural", 16, 16, channels=1)[:, :, 0]
    judge = _judge()
    check_read_back(judge, _written(config, chunk), config, chunk)
    assert judge.outcome is Outcome.PASS and "not judged: the reference encoder cannot" in str(judge.metrics["read_back"])


@pytest.mark.parametrize(("fault", "requirement"), [
    (lambda out: out[..., ::-1], "JPEG-DEC-02"),
    (lambda out: color.rgb_to_ycbcr(color.ycbcr_to_rgb(out)), "JPEG-DCS-03"),
    (lambda out: np.full_like(out, 128), "JPEG-DEC-01"),
])
def test_a_decode_is_judged_by_its_stream_not_by_the_chunk(fault: Any, requirement: str) -> None:
    config = _config("passthrough-444", 100)
    chunk = make_image("noise", 32, 48, channels=3, seed=7)
    data = _written(config, chunk, 20)  # a poor stream: its right decode is still right
    right = libjpeg_turbo_decode(data, config, chunk.shape)
    assert _verdict(lambda j: check_decode(j, right, data, config, "decode"))[0] is Outcome.PASS
    outcome, finding, messages = _verdict(lambda j: check_decode(j, np.ascontiguousarray(fault(right)), data, config, "decode"))
    assert (outcome, finding) == (Outcome.FAIL, requirement), messages


def test_a_decode_refused_for_the_chunks_shape_is_probed_with_its_sides_swapped() -> None:
    def transposed(parsed: object, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        if shape != (56, 40):
            raise ValueError("the stream's frame does not fit the chunk")
        return np.zeros(shape, np.uint8)

    assert roots.decode_diagnosis(transposed, None, b"", (40, 56))[0] == "JPEG-DIM-01"
    assert roots.decode_diagnosis(transposed, None, b"", (48, 48)) is None  # nothing to swap
    assert roots.decode_diagnosis(lambda p, d, s: (_ for _ in ()).throw(ValueError("no")), None, b"", (40, 56)) is None
