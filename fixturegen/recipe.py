"""What a stream case is before it is made: the Recipe, and the table rows that become Recipes.

A case table holds one row a case and says only what sets the case apart: an
:class:`Encoded` row has an encoder write the natural test image, an :class:`Edited` row
changes the bytes of another case's stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..core.markers import StreamInfo
from ..corpus.images import make_image
from ..corpus.modes import codec
from .edits import Edit
from .encoders import Built, edited

C444 = codec(90, "ycbcr", None, [(1, 1), (1, 1), (1, 1)])
C420 = codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])
GRAY = codec(90, "grayscale")


class CorpusError(Exception):
    """A case cannot be made, or the committed corpus does not match its recipe."""


class Verdict(NamedTuple):
    """The requirements a case tests, the level it is judged at, and what a decoder must do."""

    requirements: tuple[str, ...]
    level: str
    expect: str


@dataclass(frozen=True)
class Recipe:
    """How one case's stream is made, and what a decoder must do with it."""

    id: str
    category: str
    description: str
    requirements: tuple[str, ...]
    level: str
    codec: dict[str, Any]
    chunk_shape: tuple[int, ...]
    expect: str
    source: dict[str, Any]
    build: Callable[[Builder], Built]
    #: A program beyond pip that the build needs (generation only; --check skips the rebuild).
    tool: str | None = None
    #: What the built stream must declare; returns a complaint or None.
    structure: Callable[[StreamInfo], str | None] | None = None
    comment: str | None = None
    #: A codec object: a decoder that accepts it when parsing must decode this stream.
    decode_if_parsed: dict[str, Any] | None = None

    def paths(self, root: Path) -> list[Path]:
        """The stream, its sidecar and (unless it must be rejected) libjpeg-turbo's decode."""
        folder = root / "streams" / self.category
        names = [".jpg", ".json"] + ([".npy"] if self.expect != "reject" else [])
        return [folder / f"{self.id}{ext}" for ext in names]

    def second_path(self, root: Path) -> Path:
        """Where the independent decode goes, when there is one (the sidecar's second_decoder says)."""
        return root / "streams" / self.category / f"{self.id}.alt.npy"


@dataclass
class Builder:
    """Gives recipes the streams of other cases: built in this run, or committed ones (--check)."""

    root: Path
    committed: bool
    built: dict[str, bytes] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)

    def stream(self, case_id: str) -> bytes:
        if not self.committed and case_id in self.built:
            return self.built[case_id]
        return (self.root / "streams" / self.categories[case_id] / f"{case_id}.jpg").read_bytes()


def wants(**expected: Any) -> Callable[[StreamInfo], str | None]:
    """A check that the built stream declares these StreamInfo attributes (or factors=...)."""

    def check(info: StreamInfo) -> str | None:
        for key, want in expected.items():
            got = tuple((c.h, c.v) for c in info.components) if key == "factors" else getattr(info, key)
            if got != want:
                return f"{key} is {got!r}, expected {want!r}"
        return None

    return check


def natural(h: int, w: int, channels: int = 3) -> np.ndarray:
    img = make_image("natural", h, w, channels, 0)
    return np.ascontiguousarray(img[:, :, 0]) if channels == 1 else img


@dataclass(frozen=True)
class Encoded:
    """A case whose stream an encoder writes from the natural image of the chunk's size."""

    name: str
    description: str
    verdict: Verdict
    codec: dict[str, Any]
    #: (height, width, channels) of the image; the chunk has no channel axis for one channel.
    image: tuple[int, int, int]
    encode: Callable[[np.ndarray], Built]
    structure: Mapping[str, Any]
    comment: str
    #: How the image is turned before encoding, as the sidecar's source says it.
    prepared: str | None = None
    tool: str | None = None

    def recipe(self, category: str) -> Recipe:
        h, w, channels = self.image
        source: dict[str, Any] = {"image": {"kind": "natural", "height": h, "width": w, "channels": channels, "seed": 0}}
        if self.prepared:
            source["recipe"] = self.prepared
        return Recipe(
            id=f"stream.{category}.{self.name}", category=category, description=self.description,
            requirements=self.verdict.requirements, level=self.verdict.level, codec=self.codec,
            chunk_shape=(h, w) if channels == 1 else (h, w, channels), expect=self.verdict.expect, source=source,
            build=lambda _b: self.encode(natural(h, w, channels)),
            tool=self.tool, structure=wants(**self.structure), comment=self.comment,
        )  # fmt: skip


@dataclass(frozen=True)
class Edited:
    """A case whose stream is another case's stream (or nothing) with its bytes changed."""

    name: str
    description: str
    verdict: Verdict
    #: The case whose stream is edited; None edits the empty stream.
    base: str | None
    edit: Edit
    #: The edit in words, as the sidecar's source says it.
    how: str
    comment: str
    codec: dict[str, Any] = field(default_factory=lambda: C420)
    chunk_shape: tuple[int, ...] = (48, 80, 3)
    structure: Mapping[str, Any] | None = None
    #: A case whose stream is appended after the edited one.
    appended: str | None = None
    #: A codec object: a decoder that accepts it when parsing must decode this stream.
    decode_if_parsed: dict[str, Any] | None = None

    def recipe(self, category: str) -> Recipe:
        def build(b: Builder) -> Built:
            original = b.stream(self.base) if self.base else b""
            data = self.edit(original) + (b.stream(self.appended) if self.appended else b"")
            return data, edited(original, self.name)

        return Recipe(
            id=f"stream.{category}.{self.name}", category=category, description=self.description,
            requirements=self.verdict.requirements, level=self.verdict.level, codec=self.codec,
            chunk_shape=self.chunk_shape, expect=self.verdict.expect,
            source={"derived_from": self.base, "recipe": self.how} if self.base else {"recipe": self.how},
            build=build, structure=wants(**self.structure) if self.structure is not None else None, comment=self.comment,
            decode_if_parsed=self.decode_if_parsed,
        )  # fmt: skip
