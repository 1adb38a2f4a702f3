"""What every stream an implementation writes must be, checked wherever one is written.

The encoding steps fix the stream for every chunk, not only for the bitstream suite's:
a baseline frame (SOF0, 8-bit samples, 8-bit quantization tables), the chunk's (H, W),
the component count and the sampling factors of the configuration, the colour-space
markers of its ``encoded_color_space``, a complete stream ending in EOI, and every rule of
T.81's syntax, read from the bytes by ``judging.t81`` (markers, segment lengths, headers, table
ids, restart markers, pad bits, the MCU count: a decoder that accepts a stream proves nothing). Checking them on
every stream of every suite, at every size and quality, catches an encoder that changes
behaviour for large chunks or for chunks smaller than one MCU. Only MUSTs are checked
here; the bitstream suite adds the SHOULDs about JFIF (JPEG-X-05, JPEG-X-06), which would
otherwise warn once per stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.config import JpegConfig
from ..core.markers import StreamInfo, inspect
from .t81.reading import Reading, reading
from .t81.syntax import FMT, GEN, Offence, listed


def check_written(judge: Any, data: bytes, config: JpegConfig, chunk_shape: Sequence[int], what: str = "encode") -> StreamInfo:
    """Judge one written stream against the MUSTs every stream meets; returns what it declares."""
    info = inspect(data)
    where = f"the stream {what} wrote for a {'x'.join(map(str, chunk_shape))} chunk"
    found = reading(data)
    judge.require(info.soi and info.eoi and bool(info.scans) and found.stream.frame is not None, "JPEG-FMT-01",
                  f"{where} is not a complete JPEG stream: SOI {info.soi}, EOI {info.eoi}, scans {len(info.scans)}; "
                  f"{listed(found.offences)}")
    judge.require(info.sof == 0xC0, "JPEG-GEN-01",
                  f"{where} has frame marker {hex(info.sof) if info.sof is not None else None}: the codec writes baseline "
                  "(SOF0, sequential DCT, Huffman-coded) JPEG")
    judge.require(info.precision == 8 and bool(info.dqt_precisions) and all(p == 0 for p in info.dqt_precisions),
                  "JPEG-ENC-04", f"{where} has sample precision {info.precision} and quantization table precisions "
                  f"{list(info.dqt_precisions)} (0 = 8-bit): baseline needs 8-bit samples and 8-bit tables")
    height, width = int(chunk_shape[0]), int(chunk_shape[1])
    judge.require((info.height, info.width) == (height, width), "JPEG-DIM-01",
                  f"{where} records {info.height}x{info.width} (HxW) in its frame header")
    judge.require(len(info.components) == config.components, "JPEG-ECS-02",
                  f"{where} has {len(info.components)} component(s); encoded_color_space {config.encoded_color_space!r} "
                  f"has {config.components}")
    factors = tuple((c.h, c.v) for c in info.components)
    requirement = {"rgb": "JPEG-SUB-09", "grayscale": "JPEG-SUB-05"}.get(config.encoded_color_space, "JPEG-SUB-02")
    judge.require(factors == config.subsampling, requirement,
                  f"{where} has sampling factors {[list(f) for f in factors]}, the configuration "
                  f"{[list(f) for f in config.subsampling]}")
    if config.components == 3:
        # The encoder's step for 3 components (JPEG-ENC-03) is these checks: the factors of its
        # subsampling above, the markers of its colour space below.
        judge.cite("JPEG-ENC-03")
    if config.encoded_color_space == "rgb":
        judge.require(info.adobe_transform == 0, "JPEG-ECS-06",
                      f"{where} has {'no APP14 Adobe marker' if info.adobe_transform is None else f'APP14 transform {info.adobe_transform}'}")
    if config.encoded_color_space == "ycbcr":
        judge.require(info.libjpeg_color_space == "ycbcr" and info.stored_color_space == "ycbcr", "JPEG-ECS-04",
                      f"{where} reads as {info.libjpeg_color_space} to a JFIF decoder and as {info.stored_color_space} by the "
                      "spec's rule (APP14 decides): its samples are not marked as YCbCr")
    check_syntax(judge, found, where)
    return info


def check_syntax(judge: Any, found: Reading, where: str) -> None:
    """Every offence against T.81 (the baseline process's under JPEG-GEN-01, the rest under JPEG-FMT-01), read
    from the bytes (``judging.t81``): never whether some decoder accepts the stream."""
    frame = found.stream.frame
    offences = [o for o in found.offences if o.about != "process"]  # judged above under the frame's own rules
    if found.coefficients is None and frame is not None and frame.marker == 0xC0 and frame.precision == 8:
        offences.append(Offence(frame.offset, "F.2", f"the scans cannot be decoded: {found.undecodable}", FMT))
    for requirement in (GEN, FMT):
        mine = [o for o in offences if o.requirement == requirement]
        judge.require(not mine, requirement, f"{where} breaks T.81: {listed(mine)}")



def check_jfif(judge: Any, info: StreamInfo, config: JpegConfig) -> None:
    """The SHOULDs on the JFIF marker: none in rgb streams (JPEG-X-05), one in the others (JPEG-X-06)."""
    if config.encoded_color_space == "rgb":
        judge.require(not info.jfif, "JPEG-X-05", "the rgb stream carries a JFIF APP0 marker, which libjpeg decoders let win over APP14")
    else:
        judge.require(info.jfif, "JPEG-X-06", "no JFIF APP0 marker")


__all__ = ["check_jfif", "check_syntax", "check_written"]
