"""The stream corpus (``fixtures/streams``): JPEG streams a decoder is given, and what it must do.

Each case is three files in ``fixtures/streams/<category>/``: ``<id>.jpg`` (the stream),
``<id>.json`` (the sidecar, ``schema/stream-case.schema.json``) and, where a decode is
possible, ``<id>.npy`` (the expected decode). Categories:

* ``reference``: streams written by a reference encoder for every mode, size class and
  quality band; the expected decode is libjpeg-turbo's.
* ``foreign``: valid JPEG written by other encoders or with other options (restart
  intervals, progressive, odd factors, colour-marker variants, 12-bit, CMYK ...).
* ``malformed``: broken streams, or streams that do not fit the chunk they are decoded into.
  Returning a partially decoded chunk passes nowhere: a truncated stream (entropy-coded
  data ending early, or no EOI) SHOULD be rejected (JPEG-X-07; returning it warns), so
  SHOULD a stream that holds no image T.81 defines (JPEG-X-22: no sentence of the spec asks
  for the rejection), and samples that cannot fill the chunk MUST be rejected (JPEG-DIM-03).
  Samples of another factorization of the chunk's size are reshaped, as the decoding steps
  say, or rejected (JPEG-X-08, MAY). Only bytes after a complete image's EOI MAY be ignored
  (JPEG-X-11): the chunk before them is whole.

Files are read through ``importlib.resources`` (:func:`corpus.resource`), never the CWD.
:func:`reference_decode` is the one definition of "the expected decode" that
``generate_fixtures.py`` stores and ``suites/test_cross.py`` computes at run time.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np

from ..core import color
from ..core.chunk import image_shape
from ..core.config import JpegConfig
from ..core.markers import inspect
from .modes import Mode
from .registry import read_json, resource

Category = Literal["reference", "foreign", "malformed"]
Expect = Literal["decode", "reject", "decode-or-reject"]
CATEGORIES: tuple[Category, ...] = ("reference", "foreign", "malformed")
STREAMS = ("fixtures", "streams")


@dataclass(frozen=True)
class StreamCase:
    """One stream, the configuration and chunk shape it is decoded under, and the verdict."""

    id: str
    description: str
    category: Category
    requirements: tuple[str, ...]
    level: Literal["MUST", "SHOULD", "MAY"]
    codec: Mapping[str, Any]
    chunk_shape: tuple[int, ...]
    expect: Expect
    #: Tolerance family (decode_tolerances.FAMILIES) when a decode is possible.
    tolerance: str | None
    source: Mapping[str, Any]
    encoder: Mapping[str, Any]
    reference_decoder: Mapping[str, Any] | None = None
    #: A codec object: an implementation that accepts it when parsing must decode this stream.
    decode_if_parsed: Mapping[str, Any] | None = None
    #: Who decoded the stream independently of libjpeg-turbo and how far apart the two are,
    #: or {"absent": why}.
    second_decoder: Mapping[str, Any] | None = None
    comment: str | None = None

    @property
    def has_expected(self) -> bool:
        return self.expect != "reject"

    def data(self) -> bytes:
        """The stream's bytes."""
        return resource(*STREAMS, self.category, f"{self.id}.jpg").read_bytes()

    def expected(self) -> np.ndarray:
        """The expected decode, uint8 of ``chunk_shape``; only for cases that may decode."""
        if not self.has_expected:
            raise ValueError(f"{self.id} expects a rejection: it has no expected decode")
        raw = resource(*STREAMS, self.category, f"{self.id}.npy").read_bytes()
        return np.load(io.BytesIO(raw), allow_pickle=False)

    def references(self) -> tuple[np.ndarray, ...]:
        """The expected decodes: libjpeg-turbo's, and the independent decoder's where there is one."""
        first = self.expected()
        if not self.second_decoder or "absent" in self.second_decoder:
            return (first,)
        raw = resource(*STREAMS, self.category, f"{self.id}.alt.npy").read_bytes()
        return first, np.load(io.BytesIO(raw), allow_pickle=False)


def _case(category: Category, doc: Mapping[str, Any]) -> StreamCase:
    return StreamCase(
        id=doc["id"],
        description=doc["description"],
        category=category,
        requirements=tuple(doc["requirements"]),
        level=doc["level"],
        codec=doc["codec"],
        chunk_shape=tuple(doc["chunk_shape"]),
        expect=doc["expect"],
        tolerance=doc.get("tolerance"),
        source=doc["source"],
        encoder=doc["encoder"],
        reference_decoder=doc.get("reference_decoder"),
        second_decoder=doc.get("second_decoder"),
        decode_if_parsed=doc.get("decode_if_parsed"),
        comment=doc.get("comment"),
    )


@cache
def stream_cases() -> tuple[StreamCase, ...]:
    """Every case of the stream corpus, by category then id."""
    cases = []
    for category in CATEGORIES:
        folder = resource(*STREAMS, category)
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                doc = read_json(entry, "/".join([*STREAMS, category, entry.name]))
                if doc.get("category") != category:
                    raise ValueError(f"{entry.name}: category {doc.get('category')!r} but stored under {category}/")
                cases.append(_case(category, doc))
    return tuple(cases)


@cache
def _by_digest() -> dict[bytes, StreamCase]:
    return {hashlib.sha256(c.data()).digest(): c for c in stream_cases() if c.has_expected}


def corpus_references(data: bytes, chunk_shape: Sequence[int]) -> tuple[np.ndarray, ...] | None:
    """The expected decodes of the stream case with exactly these bytes and chunk shape, if there is one.

    A chunk of a store that is also a stream case (the neuroglancer chunks) is judged against
    the same expected decodes in both suites, so it gets the same verdict in both.
    """
    case = _by_digest().get(hashlib.sha256(data).digest())
    if case is None or case.chunk_shape != tuple(int(n) for n in chunk_shape):
        return None
    return case.references()


def cases_of(category: Category) -> tuple[StreamCase, ...]:
    return tuple(c for c in stream_cases() if c.category == category)


def decode_requirements(mode: Mode) -> tuple[tuple[str, ...], Literal["MUST", "MAY"], Expect]:
    """What decoding a stream written in ``mode`` rests on: (requirements, level, expect).

    ``requirements[0]`` is the one a decoder breaks by rejecting such a stream after it
    accepted the configuration when parsing: every implementation decodes grayscale and
    the four J:a:b schemes; one that accepted rgb or YCbCr passthrough must decode them
    (JPEG-ECS-11, JPEG-DCS-06); other factors it MAY still reject (JPEG-X-04).
    """
    if mode.encoded == "grayscale":
        return ("JPEG-ECS-08", "JPEG-ECS-03", "JPEG-DEC-01", "JPEG-DEC-02"), "MUST", "decode"
    if mode.encoded == "rgb":
        return ("JPEG-ECS-11", "JPEG-ECS-09", "JPEG-ECS-05", "JPEG-ECS-12", "JPEG-DEC-01"), "MAY", "decode"
    if mode.decoded == "ycbcr":
        return ("JPEG-DCS-06", "JPEG-DCS-05", "JPEG-DCS-03", "JPEG-DEC-01"), "MAY", "decode"
    if mode.level == "MAY":
        return ("JPEG-X-04", "JPEG-DEC-01", "JPEG-DCS-03"), "MAY", "decode-or-reject"
    return ("JPEG-SUB-08", "JPEG-ECS-04", "JPEG-DEC-01", "JPEG-DCS-03"), "MUST", "decode"


_SPACES = {"grayscale": "GRAY", "ycbcr": "YCbCr", "rgb": "RGB"}


def reference_decode(data: bytes, config: JpegConfig, chunk_shape: Sequence[int]) -> np.ndarray:
    """libjpeg-turbo's decode (through imagecodecs) under the spec's colour rule, as a chunk.

    The stored colour space comes from the markers by the spec's rule (APP14, when
    present, decides; core.markers.StreamInfo.stored_color_space) and is handed to
    libjpeg explicitly, so libjpeg's own rule (JFIF beats APP14) plays no part. The
    samples are returned in ``config.decoded_color_space``. Raises ``ValueError`` for a
    stream this function cannot decode into the chunk.
    """
    import imagecodecs  # only the generator and the cross suite need it

    height, width, components = image_shape(chunk_shape)
    stored = inspect(data).stored_color_space
    output = config.decoded_color_space
    if stored not in _SPACES or (stored == "grayscale") != (output == "grayscale"):
        raise ValueError(f"stream stores {stored}; cannot return {output}")
    # An rgb-stored stream asked for YCbCr (JPEG-X-17): the stored RGB, converted by the JFIF
    # equations as an encoder converts its input (core.color).
    convert = stored == "rgb" and output == "ycbcr"
    out_space = "RGB" if (stored, output) == ("ycbcr", "rgb") else _SPACES[stored]
    try:
        pixels = imagecodecs.jpeg8_decode(data, colorspace=_SPACES[stored], outcolorspace=out_space)
    except imagecodecs.Jpeg8Error as exc:
        raise ValueError(f"libjpeg-turbo refused the stream: {exc}") from exc
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.size != height * width * components:
        raise ValueError(f"decoded {pixels.dtype} {pixels.shape} does not fit chunk shape {tuple(chunk_shape)}")
    pixels = pixels.reshape(height, width, components)
    if convert:
        pixels = color.rgb_to_ycbcr(pixels)
    return np.ascontiguousarray(pixels.reshape(tuple(chunk_shape)))


__all__ = ["CATEGORIES", "Category", "Expect", "StreamCase", "cases_of", "decode_requirements", "reference_decode", "stream_cases"]
