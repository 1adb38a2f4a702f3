"""The MUSTs every written stream meets (judging/written.py), judged on streams made to break one of them."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarr_jpeg_conformance.backends import load_backend
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.judging.written import check_written

YCBCR = {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}


class Judge:
    """What check_written asks of a judge: the rules it cites and those whose condition fails."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.cited: list[str] = []

    def require(self, condition: Any, requirement: str, observed: str) -> None:
        self.cited.append(requirement)
        if not condition:
            self.failed.append(requirement)

    def cite(self, requirement: str) -> None:
        self.cited.append(requirement)


def _judged(configuration: dict[str, Any], cut: int = 0) -> Judge:
    config = parse_codec({"name": "jpeg", "configuration": configuration})
    image = np.random.default_rng(1).integers(0, 256, (16, 16, config.components), np.uint8)
    data = load_backend("pillow").encode(config, image)
    judge = Judge()
    check_written(judge, data[: len(data) - cut], config, (16, 16, config.components) if config.components == 3 else (16, 16))
    return judge


def test_a_stream_cut_short_is_no_complete_jpeg_stream() -> None:
    assert _judged(YCBCR).failed == [] and set(_judged(YCBCR, cut=2).failed) == {"JPEG-FMT-01"}


def test_only_a_three_component_encode_cites_the_encoders_colour_step() -> None:
    assert "JPEG-ENC-03" in _judged(YCBCR).cited
    assert "JPEG-ENC-03" not in _judged({"quality": 90, "encoded_color_space": "grayscale"}).cited


def test_a_ycbcr_stream_must_read_as_ycbcr_by_both_rules() -> None:
    """JFIF decoders go by JFIF and component IDs, the spec's rule by APP14: a ycbcr stream that only one of them
    reads as YCbCr (APP14 transform 0 beside JFIF, or an Adobe marker of transform 0 alone) is not marked as YCbCr."""
    import struct

    config = parse_codec({"name": "jpeg", "configuration": YCBCR})
    image = np.random.default_rng(1).integers(0, 256, (16, 16, 3), np.uint8)
    data = load_backend("pillow").encode(config, image)
    payload = b"Adobe" + struct.pack(">HHHB", 100, 0, 0, 0)
    marked = data[:2] + b"\xff\xee" + struct.pack(">H", len(payload) + 2) + payload + data[2:]
    for stream, failed in ((data, []), (marked, ["JPEG-ECS-04"])):
        judge = Judge()
        check_written(judge, stream, config, (16, 16, 3))
        assert judge.failed == failed
