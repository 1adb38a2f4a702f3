"""The encoding modes the suites exercise, as codec objects, with their requirement IDs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def codec(quality: int, encoded: str, decoded: str | None = None, subsampling: Any = None) -> dict[str, Any]:
    """A codec object ``{"name": "jpeg", "configuration": ...}``; members given as None are left out."""
    cfg: dict[str, Any] = {"quality": quality, "encoded_color_space": encoded}
    if decoded is not None:
        cfg["decoded_color_space"] = decoded
    if subsampling is not None:
        cfg["subsampling"] = [list(f) for f in subsampling]
    return {"name": "jpeg", "configuration": cfg}


@dataclass(frozen=True)
class Mode:
    """One way of storing a chunk: a configuration and what it exercises."""

    id: str
    encoded: str
    decoded: str
    subsampling: tuple[tuple[int, int], ...] | None
    requirements: tuple[str, ...]
    #: MUST for what every implementation supports, MAY for optional features.
    level: str

    @property
    def channels(self) -> int:
        return 1 if self.encoded == "grayscale" else 3

    @property
    def fidelity_requirement(self) -> str:
        """The requirement a fidelity miss in this mode breaks: what the encoder must keep of the samples."""
        if self.encoded == "grayscale":
            return "JPEG-ECS-03"  # stored as-is
        if self.encoded == "rgb":
            return "JPEG-ECS-05"  # stored as-is, no conversion
        return "JPEG-DCS-03"  # the conversion of the table, and its inverse

    def codec(self, quality: int) -> dict[str, Any]:
        decoded = self.decoded if self.decoded != ("grayscale" if self.encoded == "grayscale" else "rgb") else None
        return codec(quality, self.encoded, decoded, self.subsampling)


_C = ((1, 1), (1, 1))
MODES: tuple[Mode, ...] = (
    Mode("gray", "grayscale", "grayscale", None, ("JPEG-ECS-03", "JPEG-ECS-08"), "MUST"),
    Mode("ycbcr-444", "ycbcr", "rgb", ((1, 1), *_C), ("JPEG-ECS-04", "JPEG-SUB-08"), "MUST"),
    Mode("ycbcr-422", "ycbcr", "rgb", ((2, 1), *_C), ("JPEG-ECS-04", "JPEG-SUB-08"), "MUST"),
    Mode("ycbcr-440", "ycbcr", "rgb", ((1, 2), *_C), ("JPEG-ECS-04", "JPEG-SUB-08"), "MUST"),
    Mode("ycbcr-420", "ycbcr", "rgb", ((2, 2), *_C), ("JPEG-ECS-04", "JPEG-SUB-08"), "MUST"),
    Mode("rgb", "rgb", "rgb", None, ("JPEG-ECS-05", "JPEG-ECS-09"), "MAY"),
    Mode("passthrough-444", "ycbcr", "ycbcr", ((1, 1), *_C), ("JPEG-DCS-03", "JPEG-DCS-05"), "MAY"),
    Mode("passthrough-420", "ycbcr", "ycbcr", ((2, 2), *_C), ("JPEG-DCS-03", "JPEG-DCS-05"), "MAY"),
    Mode("ycbcr-411", "ycbcr", "rgb", ((4, 1), *_C), ("JPEG-X-04",), "MAY"),
    Mode("ycbcr-42", "ycbcr", "rgb", ((4, 2), *_C), ("JPEG-X-04",), "MAY"),
    Mode("ycbcr-44", "ycbcr", "rgb", ((4, 4), *_C), ("JPEG-X-04",), "MAY"),
)
MODE = {m.id: m for m in MODES}
